//! The reconcile loop on a real API server: `capi-topology serve` creates a Cluster's topology,
//! keeps it as the Cluster says (scale, drift, variables, versions, worker pools) and writes
//! nothing once it is settled. The test plays the control plane provider by patching the control
//! plane's status.

use std::time::Duration;

use serde_json::{json, Value};

use crate::class_status;
use crate::env::Env;
use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, render};
use crate::process::poll;

/// How long the controller may take to converge after a change.
pub const CONVERGED: Duration = Duration::from_secs(60);

/// Every object of `resource` in `default` labelled as owned by Cluster `dev`'s topology.
fn owned(kubectl: &Kubectl, resource: &str) -> Result<Vec<Value>, String> {
    owned_by(kubectl, "dev", resource)
}

/// Every object of `resource` in `default` labelled as owned by Cluster `cluster`'s topology.
pub fn owned_by(kubectl: &Kubectl, cluster: &str, resource: &str) -> Result<Vec<Value>, String> {
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster},topology.cluster.x-k8s.io/owned");
    let out = kubectl.ok(&["get", resource, "-n", "default", "-l", &selector, "-o", "json"])?;
    let list: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    Ok(list["items"].as_array().cloned().unwrap_or_default())
}

fn only(kubectl: &Kubectl, resource: &str) -> Result<Value, String> {
    let mut items = owned(kubectl, resource)?;
    match items.len() {
        1 => Ok(items.remove(0)),
        n => Err(format!("{n} {resource} owned by dev")),
    }
}

/// A merge patch of `resource` `default/name` (its status when `status`); panics on a refusal.
fn patch(kubectl: &Kubectl, resource: &str, name: &str, patch: &Value, status: bool) {
    kubectl
        .merge_patch((resource, "default", name), patch, status)
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Plays the control plane provider (KubeadmControlPlane v1beta2, the v1beta2 contract): its
/// status reports `version` with every replica up to date, ready and available.
pub fn report_control_plane(kubectl: &Kubectl, name: &str, version: &str) {
    let cp = kubectl
        .get_json(
            "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io",
            "default",
            name,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let replicas = cp["spec"]["replicas"].as_i64().unwrap_or(1);
    patch(
        kubectl,
        "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io",
        name,
        &json!({"status": {"initialization": {"controlPlaneInitialized": true},
            "version": version, "versions": [{"version": version, "replicas": replicas}],
            "replicas": replicas, "upToDateReplicas": replicas, "readyReplicas": replicas,
            "availableReplicas": replicas}}),
        true,
    );
}

/// Plays the control plane provider once Cluster `cluster`'s control plane exists: reports it
/// provisioned at `version` (Cluster API v1.14 creates worker pools only then).
pub fn provision_control_plane(kubectl: &Kubectl, cluster: &str, version: &str) -> Result<(), String> {
    let name = poll("the control plane to be created", CONVERGED, || {
        let planes = owned_by(kubectl, cluster, "kubeadmcontrolplane")?;
        planes
            .first()
            .and_then(|cp| cp["metadata"]["name"].as_str())
            .map(str::to_owned)
            .ok_or("no control plane yet".to_owned())
    })?;
    report_control_plane(kubectl, &name, version);
    Ok(())
}

/// The metav1 `TopologyReconciled` condition of `cluster` read as v1beta2.
pub fn condition(cluster: &Value) -> Value {
    cluster["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "TopologyReconciled")
        .cloned()
        .unwrap_or(Value::Null)
}

/// Resource versions of every object the topology owns, by kind/name.
fn versions(kubectl: &Kubectl) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for resource in [
        "dockercluster",
        "kubeadmcontrolplane",
        "machinedeployment",
        "machinehealthcheck",
        "dockermachinetemplate",
        "kubeadmconfigtemplate",
    ] {
        for object in owned(kubectl, resource).unwrap_or_else(|e| panic!("{e}")) {
            all.push((
                format!(
                    "{resource}/{}",
                    object["metadata"]["name"].as_str().unwrap_or_default()
                ),
                object["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ));
        }
    }
    all.sort();
    all
}

#[test]
fn the_topology_is_created_kept_and_upgraded_in_order() {
    let env = Env::with_webhooks("controllers");
    let kubectl = &env.kubectl;
    let fail = |e: String| -> ! { panic!("{e}\n{}", env.logs()) };
    class_status::install_quickstart(kubectl).unwrap_or_else(|e| fail(e));
    kubectl
        .accepts(&render(&[quickstart_object("10-cluster-dev.yaml", "Cluster")]))
        .unwrap_or_else(|e| fail(e));

    // Created: every object, owned by the Cluster, and the Cluster points at them (the workers
    // once the control plane is provisioned).
    provision_control_plane(kubectl, "dev", "v1.31.2").unwrap_or_else(|e| fail(e));
    let cluster = poll("the topology to be created", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "dev")?;
        if condition(&cluster)["status"] != "True" {
            return Err(format!("TopologyReconciled: {}", condition(&cluster)));
        }
        Ok(cluster)
    })
    .unwrap_or_else(|e| fail(e));
    let control_plane = only(kubectl, "kubeadmcontrolplane").unwrap_or_else(|e| fail(e));
    assert_eq!(
        cluster["spec"]["controlPlaneRef"]["name"],
        control_plane["metadata"]["name"]
    );
    assert_eq!(control_plane["spec"]["version"], "v1.31.2");
    assert_eq!(
        control_plane["metadata"]["ownerReferences"][0]["uid"],
        cluster["metadata"]["uid"]
    );
    let infrastructure = only(kubectl, "dockercluster").unwrap_or_else(|e| fail(e));
    assert_eq!(
        cluster["spec"]["infrastructureRef"]["name"],
        infrastructure["metadata"]["name"]
    );
    let md = only(kubectl, "machinedeployment").unwrap_or_else(|e| fail(e));
    let md_name = md["metadata"]["name"].as_str().unwrap().to_owned();
    assert_eq!(md["spec"]["replicas"], 1);
    assert_eq!(md["spec"]["template"]["spec"]["version"], "v1.31.2");
    assert_eq!(
        owned(kubectl, "machinehealthcheck")
            .unwrap_or_else(|e| fail(e))
            .len(),
        2
    );

    // Settled: nothing is written while nothing changes.
    let before = versions(kubectl);
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(versions(kubectl), before, "a settled topology is not rewritten");

    // Scaled through the Cluster.
    patch(
        kubectl,
        "cluster",
        "dev",
        &json!({"spec": {"topology": {"workers": {"machineDeployments": [
        {"class": "default-worker", "name": "md-0", "replicas": 3}]}}}}),
        false,
    );
    poll("the worker pool to scale", CONVERGED, || {
        let md = kubectl.get_json("machinedeployment", "default", &md_name)?;
        (md["spec"]["replicas"] == 3)
            .then_some(())
            .ok_or(format!("replicas {}", md["spec"]["replicas"]))
    })
    .unwrap_or_else(|e| fail(e));

    // Drift: a managed field edited by hand is restored; a label someone else added survives.
    patch(
        kubectl,
        "machinedeployment",
        &md_name,
        &json!({"spec": {"replicas": 7}, "metadata": {"labels": {"team": "blue"}}}),
        false,
    );
    poll("the hand edit to be undone", CONVERGED, || {
        let md = kubectl.get_json("machinedeployment", "default", &md_name)?;
        if md["spec"]["replicas"] != 3 {
            return Err(format!("replicas {}", md["spec"]["replicas"]));
        }
        (md["metadata"]["labels"]["team"] == "blue")
            .then_some(())
            .ok_or("label lost".to_owned())
    })
    .unwrap_or_else(|e| fail(e));

    // A variable change rotates the template it patches; the old clone goes.
    let old_bootstrap = md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"].clone();
    patch(
        kubectl,
        "cluster",
        "dev",
        &json!({"spec": {"topology": {"variables": [
        {"name": "kubeletLogLevel", "value": 5}]}}}),
        false,
    );
    poll("the bootstrap template to rotate", CONVERGED, || {
        let md = kubectl.get_json("machinedeployment", "default", &md_name)?;
        let now = &md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"];
        if *now == old_bootstrap {
            return Err("not rotated yet".to_owned());
        }
        let templates = owned(kubectl, "kubeadmconfigtemplate")?;
        let names: Vec<&Value> = templates.iter().map(|t| &t["metadata"]["name"]).collect();
        (names == [now])
            .then_some(())
            .ok_or(format!("templates {names:?}"))
    })
    .unwrap_or_else(|e| fail(e));

    // Upgrade: the control plane first; workers only once it reports the new version.
    let cp_name = control_plane["metadata"]["name"].as_str().unwrap().to_owned();
    report_control_plane(kubectl, &cp_name, "v1.31.2");
    patch(
        kubectl,
        "cluster",
        "dev",
        &json!({"spec": {"topology": {"version": "v1.32.0"}}}),
        false,
    );
    poll("the control plane to be upgraded first", CONVERGED, || {
        let cp = kubectl.get_json("kubeadmcontrolplane", "default", &cp_name)?;
        let md = kubectl.get_json("machinedeployment", "default", &md_name)?;
        let cluster = kubectl.get_json("cluster", "default", "dev")?;
        let held = condition(&cluster)["reason"] == "MachineDeploymentsUpgradePending";
        match (
            cp["spec"]["version"].as_str(),
            md["spec"]["template"]["spec"]["version"].as_str(),
            held,
        ) {
            (Some("v1.32.0"), Some("v1.31.2"), true) => Ok(()),
            other => Err(format!("control plane, workers, held: {other:?}")),
        }
    })
    .unwrap_or_else(|e| fail(e));
    report_control_plane(kubectl, &cp_name, "v1.32.0");
    poll("the workers to follow", CONVERGED, || {
        let md = kubectl.get_json("machinedeployment", "default", &md_name)?;
        let version = &md["spec"]["template"]["spec"]["version"];
        (version == "v1.32.0")
            .then_some(())
            .ok_or(format!("workers at {version}"))
    })
    .unwrap_or_else(|e| fail(e));

    // A worker pool added, then removed with its health check and templates.
    patch(
        kubectl,
        "cluster",
        "dev",
        &json!({"spec": {"topology": {"workers": {"machineDeployments": [
        {"class": "default-worker", "name": "md-0", "replicas": 3},
        {"class": "default-worker", "name": "md-1", "replicas": 1}]}}}}),
        false,
    );
    poll("the second worker pool", CONVERGED, || {
        let count = owned(kubectl, "machinedeployment")?.len();
        (count == 2)
            .then_some(())
            .ok_or(format!("{count} MachineDeployments"))
    })
    .unwrap_or_else(|e| fail(e));
    patch(
        kubectl,
        "cluster",
        "dev",
        &json!({"spec": {"topology": {"workers": {"machineDeployments": [
        {"class": "default-worker", "name": "md-0", "replicas": 3}]}}}}),
        false,
    );
    poll("the removed worker pool to go", CONVERGED, || {
        let mds = owned(kubectl, "machinedeployment")?.len();
        let checks = owned(kubectl, "machinehealthcheck")?.len();
        let templates = owned(kubectl, "dockermachinetemplate")?.len();
        // Control plane and md-0: two health checks, two machine templates.
        ((mds, checks, templates) == (1, 2, 2))
            .then_some(())
            .ok_or(format!(
                "MachineDeployments {mds}, health checks {checks}, machine templates {templates}"
            ))
    })
    .unwrap_or_else(|e| fail(e));

    // A Cluster the controller cannot reconcile says why in its condition (v1.14: the metav1
    // condition's reason is ReconcileFailed for every failure, the cause in its message).
    let mut orphan = quickstart_object("10-cluster-dev.yaml", "Cluster");
    orphan["metadata"]["name"] = json!("orphan");
    orphan["spec"]["topology"]["classRef"]["name"] = json!("no-such-class");
    kubectl.accepts(&render(&[orphan])).unwrap_or_else(|e| fail(e));
    poll("the blocked condition", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "orphan")?;
        let condition = condition(&cluster);
        match (
            condition["status"].as_str(),
            condition["reason"].as_str(),
            condition["message"].as_str(),
        ) {
            (
                Some("False"),
                Some("ReconcileFailed"),
                Some("ClusterClass default/no-such-class not found"),
            ) => Ok(()),
            _ => Err(format!("condition {condition}")),
        }
    })
    .unwrap_or_else(|e| fail(e));

    // Deleting the Cluster leaves nothing the garbage collector cannot find: every object is owned.
    let uid = cluster["metadata"]["uid"].clone();
    for (object, _) in versions(kubectl) {
        let (resource, name) = object.split_once('/').unwrap();
        let found = kubectl
            .get_json(resource, "default", name)
            .unwrap_or_else(|e| fail(e));
        assert_eq!(
            found["metadata"]["ownerReferences"][0]["uid"], uid,
            "{object} is owned by the Cluster"
        );
    }
}
