//! v1beta2 is the hub and storage version of our kinds, v1beta1 the deprecated spoke served by
//! `capi-topology serve`'s `/convert`: a v1beta1 client and a v1beta2 client write and read the
//! same Clusters, etcd holds them as v1beta2, the topology of each is reconciled, and a refusal
//! names the fields as the client that sent the object names them.

use std::time::Duration;

use serde_json::{json, Value};

use crate::class_status;
use crate::controllers::{condition, owned_by, provision_control_plane, CONVERGED};
use crate::env::Env;
use crate::kubectl::Kubectl;
use crate::manifests::{render, v1beta1_object, with};
use crate::process::poll;

/// The Cluster resource at each served version, as a client pins it.
const V1BETA1: &str = "clusters.v1beta1.cluster.x-k8s.io";
const V1BETA2: &str = "clusters.v1beta2.cluster.x-k8s.io";

/// The dev Cluster of the quickstart as a v1beta2 client writes it, named `name`.
fn hub_cluster(name: &str) -> Value {
    json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]},
                               "services": {"cidrBlocks": ["10.128.0.0/12"]},
                               "serviceDomain": "cluster.local"},
            "topology": {
                "classRef": {"name": "quick-start"},
                "version": "v1.31.2",
                "controlPlane": {"replicas": 1},
                "workers": {"machineDeployments": [
                    {"class": "default-worker", "name": "md-0", "replicas": 1}]}}}})
}

#[test]
fn clients_of_both_versions_share_clusters_stored_as_v1beta2() {
    let env = Env::with_webhooks("versions");
    let kubectl = &env.kubectl;
    let fail = |e: String| -> ! { panic!("{e}\n{}", env.logs()) };
    class_status::install_quickstart(kubectl).unwrap_or_else(|e| fail(e));

    // Written once by each client: `dev` as v1beta1 (examples/v1beta1), `hub` as v1beta2.
    kubectl
        .accepts(&render(&[v1beta1_object("10-cluster-dev.yaml", "Cluster")]))
        .unwrap_or_else(|e| fail(e));
    kubectl
        .accepts(&hub_cluster("hub").to_string())
        .unwrap_or_else(|e| fail(e));
    for name in ["dev", "hub"] {
        read_at_both_versions(kubectl, name).unwrap_or_else(|e| fail(e));
        stored_as_v1beta2(&env, name).unwrap_or_else(|e| fail(e));
    }
    let crd = kubectl
        .get_json("crd", "", "clusters.cluster.x-k8s.io")
        .unwrap_or_else(|e| fail(e));
    assert_eq!(
        crd["status"]["storedVersions"],
        json!(["v1beta2"]),
        "only v1beta2 was ever stored: {:#}",
        crd["status"]
    );

    // Refusals answer each client in the words of the version it sent.
    refused_as_sent(kubectl).unwrap_or_else(|e| fail(e));

    // The topology of each is reconciled (and its Cluster still reads at both versions once the
    // controllers set its refs, which a v1beta1 reader gets with the apiVersion of the contract).
    for name in ["dev", "hub"] {
        reconciled(kubectl, name, 1).unwrap_or_else(|e| fail(e));
        read_at_both_versions(kubectl, name).unwrap_or_else(|e| fail(e));
    }

    // Each client changes the other's Cluster; both keep reading what they wrote.
    let scale =
        r#"[{"op": "replace", "path": "/spec/topology/workers/machineDeployments/0/replicas", "value": 2}]"#;
    for (resource, name) in [(V1BETA1, "hub"), (V1BETA2, "dev")] {
        kubectl
            .ok(&[
                "patch",
                resource,
                name,
                "-n",
                "default",
                "--type=json",
                "-p",
                scale,
            ])
            .unwrap_or_else(|e| fail(e));
    }
    for name in ["dev", "hub"] {
        read_at_both_versions(kubectl, name).unwrap_or_else(|e| fail(e));
        stored_as_v1beta2(&env, name).unwrap_or_else(|e| fail(e));
        reconciled(kubectl, name, 2).unwrap_or_else(|e| fail(e));
    }
}

/// `kubectl get` of Cluster `name` through each version shows that version's shape of the same
/// object: `spec.topology.class` for v1beta1, `spec.topology.classRef.name` for v1beta2. The two
/// reads are compared only when they saw the same resourceVersion: the controllers may write the
/// Cluster between them, so a pair that straddles a write is read again.
fn read_at_both_versions(kubectl: &Kubectl, name: &str) -> Result<(), String> {
    poll(
        &format!("Cluster {name} read alike at both versions"),
        Duration::from_secs(30),
        || read_both_once(kubectl, name),
    )
}

/// One read of Cluster `name` at each version, compared (see [`read_at_both_versions`]).
fn read_both_once(kubectl: &Kubectl, name: &str) -> Result<(), String> {
    let old = kubectl.get_json(V1BETA1, "default", name)?;
    let new = kubectl.get_json(V1BETA2, "default", name)?;
    let (old_topology, new_topology) = (&old["spec"]["topology"], &new["spec"]["topology"]);
    let same = old["metadata"]["uid"] == new["metadata"]["uid"]
        && old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"];
    let shaped = old["apiVersion"] == "cluster.x-k8s.io/v1beta1"
        && old_topology["class"] == "quick-start"
        && old_topology.get("classRef").is_none()
        && new["apiVersion"] == "cluster.x-k8s.io/v1beta2"
        && new_topology["classRef"]["name"] == "quick-start"
        && new_topology.get("class").is_none();
    let agreed = old_topology["version"] == new_topology["version"]
        && old_topology["workers"]["machineDeployments"][0]["replicas"]
            == new_topology["workers"]["machineDeployments"][0]["replicas"];
    // Once set, a ref reads as v1beta1 with the version the referenced CRD names for the
    // contract (Cluster API v1.14.0's KubeadmControlPlane: v1beta2), as v1beta2 without one.
    let (old_ref, new_ref) = (&old["spec"]["controlPlaneRef"], &new["spec"]["controlPlaneRef"]);
    let refs = new_ref.is_null()
        || (old_ref["apiVersion"] == "controlplane.cluster.x-k8s.io/v1beta2"
            && old_ref["name"] == new_ref["name"]
            && new_ref["apiGroup"] == "controlplane.cluster.x-k8s.io"
            && new_ref.get("apiVersion").is_none());
    if same && shaped && agreed && refs {
        Ok(())
    } else {
        Err(format!(
            "Cluster {name} read as v1beta1:\n{:#}\nand as v1beta2:\n{:#}",
            old["spec"], new["spec"]
        ))
    }
}

/// etcd holds Cluster `name` as v1beta2, whatever version its writer used.
fn stored_as_v1beta2(env: &Env, name: &str) -> Result<(), String> {
    let stored = env
        .plane
        .etcd_value(&format!("/registry/cluster.x-k8s.io/clusters/default/{name}"))?;
    if stored["apiVersion"] == "cluster.x-k8s.io/v1beta2"
        && stored["spec"]["topology"]["classRef"]["name"] == "quick-start"
    {
        Ok(())
    } else {
        Err(format!("etcd holds Cluster {name} as {stored:#}"))
    }
}

/// Cluster `name`'s topology is reconciled (TopologyReconciled True in both shapes) with its
/// worker pool at `replicas`.
fn reconciled(kubectl: &Kubectl, name: &str, replicas: i64) -> Result<(), String> {
    provision_control_plane(kubectl, name, "v1.31.2")?;
    poll(
        &format!("Cluster {name}'s topology with {replicas} worker(s)"),
        CONVERGED,
        || {
            let new = kubectl.get_json(V1BETA2, "default", name)?;
            let old = kubectl.get_json(V1BETA1, "default", name)?;
            let old_condition = old["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|c| c["type"] == "TopologyReconciled")
                .cloned()
                .unwrap_or(Value::Null);
            if condition(&new)["status"] != "True" || old_condition["status"] != "True" {
                return Err(format!(
                    "TopologyReconciled v1beta2 {}, v1beta1 {old_condition}",
                    condition(&new)
                ));
            }
            let pools = owned_by(kubectl, name, "machinedeployment")?;
            let counts: Vec<&Value> = pools.iter().map(|md| &md["spec"]["replicas"]).collect();
            (counts == [&json!(replicas)])
                .then_some(())
                .ok_or(format!("MachineDeployment replicas {counts:?}"))
        },
    )
}

/// A bad Cluster is refused in the words of the version its client sent: v1beta2 field paths
/// for a v1beta2 object, v1beta1 field paths for the same mistake sent as v1beta1.
fn refused_as_sent(kubectl: &Kubectl) -> Result<(), String> {
    let undefined = with(
        hub_cluster("undefined-variable"),
        "/spec/topology/variables",
        json!([{"name": "region", "value": "eu"}]),
    );
    kubectl.rejects(
        &undefined.to_string(),
        &[
            r#"Cluster "undefined-variable" is invalid"#,
            r#"spec.topology.variables[region]: Invalid value: "\"eu\"": variable is not defined"#,
        ],
    )?;
    let bad_version = with(
        hub_cluster("bad-version"),
        "/spec/topology/version",
        json!("1.34.x"),
    );
    kubectl.rejects(
        &bad_version.to_string(),
        &[
            r#"Cluster "bad-version" is invalid"#,
            "spec.topology.version: Invalid value:",
            "version must be a valid semantic version",
        ],
    )?;

    // A worker health check that gives Nodes less than 30s to start, sent at each version.
    let check = |cluster: Value, pointer: &str, value: Value| {
        with(
            with(cluster, "/metadata/name", json!("short-startup")),
            &format!("/spec/topology/workers/machineDeployments/0/{pointer}"),
            value,
        )
    };
    let as_v1beta2 = check(
        hub_cluster("x"),
        "healthCheck",
        json!({"checks": {"nodeStartupTimeoutSeconds": 10}}),
    );
    let as_v1beta1 = check(
        v1beta1_object("10-cluster-dev.yaml", "Cluster"),
        "machineHealthCheck",
        json!({"nodeStartupTimeout": "10s"}),
    );
    let v1beta2_path =
        "spec.topology.workers.machineDeployments[md-0].healthCheck.checks.nodeStartupTimeoutSeconds";
    let v1beta1_path = "spec.topology.workers.machineDeployments[md-0].machineHealthCheck.nodeStartupTimeout";
    kubectl.rejects(&as_v1beta2.to_string(), &[v1beta2_path, "must be at least 30s"])?;
    kubectl.rejects(&as_v1beta1.to_string(), &[v1beta1_path, "must be at least 30s"])?;
    let out = kubectl.apply(&as_v1beta1.to_string(), &[])?;
    if format!("{}{}", out.stdout, out.stderr).contains("healthCheck.checks") {
        return Err(format!(
            "a v1beta1 client is answered with v1beta2 field paths:\n{}",
            out.stderr
        ));
    }
    Ok(())
}
