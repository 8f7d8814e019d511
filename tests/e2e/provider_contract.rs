//! The Cluster's side of the infrastructure provider contract on a real API server, with a real
//! provider CRD (CAPO's OpenStackCluster, from tests/fixtures/contract/providers/, a v1beta1
//! contract provider served at v1beta1 only, in a group whose other kinds prefer v1beta2): the
//! test plays the provider by writing the InfraCluster's status, and `capi-topology serve` owns
//! it, takes its readiness, endpoint and failure domains into the Cluster's v1beta2 status, copies
//! a provider failure under `status.deprecated.v1beta1` (v1.14: no Failed phase), and deletes a
//! topology Cluster's objects in order.

use serde_json::{json, Value};

use crate::class_status;
use crate::controllers::{condition as topology_condition, CONVERGED};
use crate::env::{repo_path, Env};
use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, quickstart_templates, render};
use crate::process::poll;

/// CAPO's OpenStackCluster CRD as its release installs it, without the conversion webhook (no
/// CAPO runs here; only the storage version is used).
fn openstack_cluster_crd() -> Value {
    let text = std::fs::read_to_string(repo_path("tests/fixtures/contract/providers/openstack.yaml"))
        .expect("the CAPO fixture");
    let mut crd = serde_yaml_ng::Deserializer::from_str(&text)
        .filter_map(|doc| serde::Deserialize::deserialize(doc).ok())
        .find(|doc: &Value| doc["spec"]["names"]["kind"] == "OpenStackCluster")
        .expect("the OpenStackCluster CRD");
    crd["spec"]["conversion"] = json!({"strategy": "None"});
    if let Some(versions) = crd["spec"]["versions"].as_array_mut() {
        versions.retain(|v| v["name"] == "v1beta1");
    }
    crd
}

/// The v1beta2 (metav1) condition `kind` of `object` read as v1beta2.
fn cluster_condition(cluster: &Value, kind: &str) -> Value {
    find_condition(&cluster["status"]["conditions"], kind)
}

/// The deprecated v1beta1 condition `kind` of `object` read as v1beta2.
fn v1beta1_condition(cluster: &Value, kind: &str) -> Value {
    find_condition(&cluster["status"]["deprecated"]["v1beta1"]["conditions"], kind)
}

fn find_condition(conditions: &Value, kind: &str) -> Value {
    conditions
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind)
        .cloned()
        .unwrap_or(Value::Null)
}

fn merge(
    kubectl: &Kubectl,
    resource: &str,
    name: &str,
    patch: &Value,
    status: bool,
) -> Result<String, String> {
    kubectl.merge_patch((resource, "default", name), patch, status)
}

#[test]
fn the_cluster_takes_its_infrastructure_and_deletes_in_order() {
    let mut env = Env::with_webhooks("provider-contract");
    // Objects owned by a deleted Cluster (templates, health checks) go as in a real cluster.
    env.plane.start_garbage_collector(&env.run);
    let env = env;
    let kubectl = &env.kubectl;
    let fail = |e: String| -> ! { panic!("{e}\n{}", env.logs()) };
    kubectl
        .accepts(&render(&[openstack_cluster_crd()]))
        .unwrap_or_else(|e| fail(e));
    // Polled rather than `kubectl wait`, which fails on a CRD whose status is not written yet.
    poll("the OpenStackCluster CRD to be established", CONVERGED, || {
        let crd = kubectl.get_json("crd", "", "openstackclusters.infrastructure.cluster.x-k8s.io")?;
        let established = find_condition(&crd["status"]["conditions"], "Established");
        (established["status"] == "True")
            .then_some(())
            .ok_or(format!("{}", crd["status"]))
    })
    .unwrap_or_else(|e| fail(e));

    // A Cluster whose InfraCluster does not exist yet: a condition says so.
    let cluster = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": "os", "namespace": "default"},
        "spec": {"infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": "OpenStackCluster", "name": "os", "namespace": "default"}}});
    kubectl.accepts(&render(&[cluster])).unwrap_or_else(|e| fail(e));
    poll("the missing InfraCluster to be reported", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "os")?;
        let ready = cluster_condition(&cluster, "InfrastructureReady");
        let finalizers = cluster["metadata"]["finalizers"].to_string();
        if ready["message"] == "OpenStackCluster does not exist"
            && ready["reason"] == "ObjectDoesNotExist"
            && cluster["status"]["phase"] == "Provisioning"
            && finalizers.contains("cluster.cluster.x-k8s.io")
        {
            return Ok(());
        }
        Err(format!("{:#}", cluster))
    })
    .unwrap_or_else(|e| fail(e));

    // The provider creates it: the Cluster owns and labels it (its kind is watched from now on,
    // at v1beta1: the group's preferred version v1beta2 does not serve it).
    let infra = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "OpenStackCluster",
        "metadata": {"name": "os", "namespace": "default"},
        "spec": {"identityRef": {"cloudName": "openstack", "name": "cloud-config"}}});
    kubectl.accepts(&render(&[infra])).unwrap_or_else(|e| fail(e));
    let uid = kubectl
        .get_json("cluster", "default", "os")
        .unwrap_or_else(|e| fail(e))["metadata"]["uid"]
        .clone();
    poll("the InfraCluster to be owned", CONVERGED, || {
        let infra = kubectl.get_json("openstackcluster", "default", "os")?;
        let owner = &infra["metadata"]["ownerReferences"][0];
        let labelled = infra["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "os";
        // v1.14: a controller owner only of a topology's InfraCluster; a plain owner here.
        (owner["uid"] == uid && owner["controller"] == false && labelled)
            .then_some(())
            .ok_or(format!("{:#}", infra["metadata"]))
    })
    .unwrap_or_else(|e| fail(e));
    let ready = poll("the InfraCluster's readiness to be awaited", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "os")?;
        let (ready, old) = (
            cluster_condition(&cluster, "InfrastructureReady"),
            v1beta1_condition(&cluster, "InfrastructureReady"),
        );
        (ready["reason"] == "NotReady" && old["reason"] == "WaitingForInfrastructure")
            .then_some(ready.clone())
            .ok_or(format!("InfrastructureReady {ready}, v1beta1 {old}"))
    })
    .unwrap_or_else(|e| fail(e));
    assert_eq!(
        ready["message"], "OpenStackCluster status.initialization.provisioned is false",
        "{ready}"
    );

    // The provider is done: endpoint, readiness and failure domains reach the Cluster.
    merge(
        kubectl,
        "openstackcluster",
        "os",
        &json!({"spec": {"controlPlaneEndpoint": {"host": "10.0.0.10", "port": 6443}}}),
        false,
    )
    .unwrap_or_else(|e| fail(e));
    // A v1beta1-contract provider: status.ready and a failure domain map.
    let domains =
        json!({"az-1": {"controlPlane": true, "attributes": {"zone": "a"}}, "az-2": {"controlPlane": false}});
    merge(
        kubectl,
        "openstackcluster",
        "os",
        &json!({"status": {"ready": true, "failureDomains": domains}}),
        true,
    )
    .unwrap_or_else(|e| fail(e));
    let cluster = poll("the Cluster to be provisioned", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "os")?;
        (cluster["status"]["phase"] == "Provisioned")
            .then_some(cluster.clone())
            .ok_or(format!("{:#}", cluster["status"]))
    })
    .unwrap_or_else(|e| fail(e));
    assert_eq!(
        cluster["spec"]["controlPlaneEndpoint"],
        json!({"host": "10.0.0.10", "port": 6443})
    );
    assert_eq!(
        cluster["status"]["initialization"]["infrastructureProvisioned"],
        true
    );
    assert_eq!(
        cluster["status"]["failureDomains"],
        json!([{"name": "az-1", "controlPlane": true, "attributes": {"zone": "a"}},
               {"name": "az-2", "controlPlane": false}])
    );
    assert_eq!(
        cluster_condition(&cluster, "InfrastructureReady")["status"],
        "True"
    );

    // A provider failure is copied under status.deprecated.v1beta1 (v1.14: not terminal, no
    // Failed phase) and stays after the provider clears it (v1.14 copies only what is set).
    merge(
        kubectl,
        "openstackcluster",
        "os",
        &json!({"status": {"failureReason": "CreateError", "failureMessage": "quota exceeded"}}),
        true,
    )
    .unwrap_or_else(|e| fail(e));
    let failure = "Failure detected from referenced resource infrastructure.cluster.x-k8s.io/v1beta1, Kind=OpenStackCluster with name \"os\": quota exceeded";
    poll("the failure to surface", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "os")?;
        let old = &cluster["status"]["deprecated"]["v1beta1"];
        (old["failureMessage"] == failure
            && old["failureReason"] == "CreateError"
            && cluster["status"]["phase"] == "Provisioned")
            .then_some(())
            .ok_or(format!("{:#}", cluster["status"]))
    })
    .unwrap_or_else(|e| fail(e));
    // Cleared together with a new failure domain: once the domain shows, the Cluster has been
    // reconciled since the failure went.
    let mut more = domains.clone();
    more["az-3"] = json!({"controlPlane": false});
    merge(
        kubectl,
        "openstackcluster",
        "os",
        &json!({"status": {"failureReason": null, "failureMessage": null, "failureDomains": more}}),
        true,
    )
    .unwrap_or_else(|e| fail(e));
    let cluster = poll("the Cluster to take the change", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "os")?;
        let listed = cluster["status"]["failureDomains"].as_array().map_or(0, Vec::len);
        (listed == 3)
            .then_some(cluster.clone())
            .ok_or(format!("{:#}", cluster["status"]))
    })
    .unwrap_or_else(|e| fail(e));
    assert_eq!(cluster["status"]["phase"], "Provisioned");
    assert_eq!(
        cluster["status"]["deprecated"]["v1beta1"]["failureReason"], "CreateError",
        "a copied failure stays"
    );

    unserved_kind(&env);
    ordered_deletion(&env);
}

/// A reference to a kind no CRD serves is a condition saying so (and a slow retry).
fn unserved_kind(env: &Env) {
    let kubectl = &env.kubectl;
    let fail = |e: String| -> ! { panic!("{e}\n{}", env.logs()) };
    // Written as v1beta2: a v1beta1 client cannot read (nor create) a Cluster whose reference has
    // no CRD, as with Cluster API's conversion (the v1beta1 apiVersion comes from the CRD).
    let cluster = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "nocrd", "namespace": "default"},
        "spec": {"infrastructureRef": {"apiGroup": "infrastructure.example.com",
            "kind": "FooCluster", "name": "nocrd"}}});
    kubectl.accepts(&render(&[cluster])).unwrap_or_else(|e| fail(e));
    poll("the unserved kind to be reported", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "nocrd")?;
        let ready = cluster_condition(&cluster, "InfrastructureReady");
        let expected = "the API server does not serve FooCluster (infrastructure.example.com): is the provider's CRD fooclusters.infrastructure.example.com installed?";
        (ready["message"] == expected).then_some(()).ok_or(format!("{ready}"))
    })
    .unwrap_or_else(|e| fail(e));
    kubectl
        .ok(&["delete", "cluster", "nocrd", "-n", "default", "--timeout=60s"])
        .unwrap_or_else(|e| fail(e));
}

/// A topology Cluster is deleted worker pools first, then its control plane, then its
/// InfraCluster; a control plane held by a finalizer holds everything after it.
fn ordered_deletion(env: &Env) {
    let kubectl = &env.kubectl;
    let fail = |e: String| -> ! { panic!("{e}\n{}", env.logs()) };
    kubectl
        .accepts(&render(&quickstart_templates()))
        .unwrap_or_else(|e| fail(e));
    kubectl
        .accepts(&render(&[quickstart_object(
            "00-clusterclass.yaml",
            "ClusterClass",
        )]))
        .unwrap_or_else(|e| fail(e));
    class_status::wait_reconciled(kubectl, "default", "quick-start").unwrap_or_else(|e| fail(e));
    // The templates' CRDs (Cluster API v1.14.0's) name v1beta2 as the contract's version, and
    // the quickstart class refers to its templates at v1beta2.
    let class = kubectl
        .get_json("clusterclass", "default", "quick-start")
        .unwrap_or_else(|e| fail(e));
    let up_to_date = cluster_condition(&class, "RefVersionsUpToDate");
    assert!(up_to_date["status"] == "True", "{:#}", class["status"]);
    kubectl
        .accepts(&render(&[quickstart_object("10-cluster-dev.yaml", "Cluster")]))
        .unwrap_or_else(|e| fail(e));
    let cluster = poll("the topology to be created", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "dev")?;
        (topology_condition(&cluster)["status"] == "True")
            .then_some(cluster.clone())
            .ok_or(format!("{}", topology_condition(&cluster)))
    })
    .unwrap_or_else(|e| fail(e));
    let control_plane = cluster["spec"]["controlPlaneRef"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let infrastructure = cluster["spec"]["infrastructureRef"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    poll(
        "the topology's InfraCluster to be controlled by its Cluster",
        CONVERGED,
        || {
            let infra = kubectl.get_json("dockercluster", "default", &infrastructure)?;
            (infra["metadata"]["ownerReferences"][0]["controller"] == true)
                .then_some(())
                .ok_or(format!("{:#}", infra["metadata"]))
        },
    )
    .unwrap_or_else(|e| fail(e));

    merge(
        kubectl,
        "kubeadmcontrolplane",
        &control_plane,
        &json!({"metadata": {"finalizers": ["e2e.test/hold"]}}),
        false,
    )
    .unwrap_or_else(|e| fail(e));
    kubectl
        .ok(&["delete", "cluster", "dev", "-n", "default", "--wait=false"])
        .unwrap_or_else(|e| fail(e));
    poll(
        "the workers to go and the control plane to hold the rest",
        CONVERGED,
        || {
            let pools = kubectl.ok(&[
                "get",
                "machinedeployments",
                "-n",
                "default",
                "-l",
                "cluster.x-k8s.io/cluster-name=dev",
                "-o",
                "name",
            ])?;
            if !pools.trim().is_empty() {
                return Err(format!("worker pools left: {pools}"));
            }
            let cluster = kubectl.get_json("cluster", "default", "dev")?;
            let deleting = cluster_condition(&cluster, "Deleting");
            let expected = format!("Waiting for KubeadmControlPlane {control_plane} to be deleted");
            (deleting["message"] == expected.as_str())
                .then_some(())
                .ok_or(format!("Deleting: {deleting}"))
        },
    )
    .unwrap_or_else(|e| fail(e));
    let infra = kubectl
        .get_json("dockercluster", "default", &infrastructure)
        .unwrap_or_else(|e| fail(e));
    assert!(
        infra["metadata"]["deletionTimestamp"].is_null(),
        "the InfraCluster waits for the control plane"
    );

    merge(
        kubectl,
        "kubeadmcontrolplane",
        &control_plane,
        &json!({"metadata": {"finalizers": null}}),
        false,
    )
    .unwrap_or_else(|e| fail(e));
    poll("the InfraCluster and then the Cluster to go", CONVERGED, || {
        let left = kubectl.ok(&[
            "get",
            "cluster,dockercluster,kubeadmcontrolplane",
            "-n",
            "default",
            "-o",
            "name",
        ])?;
        let left: Vec<&str> = left.lines().filter(|l| l.contains("/dev")).collect();
        left.is_empty().then_some(()).ok_or(format!("left: {left:?}"))
    })
    .unwrap_or_else(|e| fail(e));
}
