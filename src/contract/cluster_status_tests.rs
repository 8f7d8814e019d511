use serde_json::{json, Value};

use super::cluster_status::*;
use super::external::Referenced;

const NOW: &str = "2026-11-25T12:00:00Z";

fn cluster() -> Value {
    json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": "dev", "namespace": "ns", "uid": "u1"},
        "spec": {"infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": "DockerCluster", "namespace": "ns", "name": "dev-x"}}})
}

fn infra(status: Value) -> Value {
    json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster",
        "metadata": {"name": "dev-x", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "dev"},
            "ownerReferences": [{"kind": "Cluster", "name": "dev", "uid": "u1", "controller": true}]},
        "spec": {"controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443}},
        "status": status})
}

fn run(cluster: &Value, infra: &Value) -> ClusterUpdate {
    reconcile_cluster_status(&Observed {
        cluster,
        infrastructure: Some(Referenced::Found(infra)),
        control_plane: None,
        now: NOW,
    })
}

/// The Cluster after the update's writes.
fn applied(cluster: &Value, update: &ClusterUpdate) -> Value {
    let mut next = cluster.clone();
    if let Some(spec) = &update.spec {
        json_patch::merge(&mut next["spec"], spec);
    }
    if let Some(status) = &update.status {
        if next.get("status").is_none() {
            next["status"] = json!({});
        }
        json_patch::merge(&mut next["status"], status);
    }
    next
}

fn condition<'a>(cluster: &'a Value, kind: &str) -> &'a Value {
    cluster["status"]["conditions"]
        .as_array()
        .and_then(|list| list.iter().find(|c| c["type"] == kind))
        .unwrap_or(&Value::Null)
}

#[test]
fn a_waiting_infrastructure_is_mirrored_without_copying_anything() {
    let update = run(&cluster(), &infra(json!({"ready": false})));
    let next = applied(&cluster(), &update);
    assert_eq!(update.spec, None);
    assert_eq!(next["status"]["phase"], "Provisioning");
    assert_eq!(next["status"].get("infrastructureReady"), None);
    let ready = condition(&next, INFRASTRUCTURE_READY);
    assert_eq!(
        (&ready["status"], &ready["reason"]),
        (&json!("False"), &json!("WaitingForInfrastructure"))
    );
}

#[test]
fn a_ready_infrastructure_gives_its_endpoint_and_failure_domains_once() {
    let domains = json!({"fd1": {"controlPlane": true, "attributes": {"zone": "a"}}});
    let ready = infra(json!({"ready": true, "failureDomains": domains}));
    let update = run(&cluster(), &ready);
    assert_eq!(
        update.spec,
        Some(json!({"controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443}}))
    );
    let next = applied(&cluster(), &update);
    assert_eq!(next["status"]["infrastructureReady"], true);
    assert_eq!(next["status"]["failureDomains"], domains);
    assert_eq!(next["status"]["phase"], "Provisioned");
    assert_eq!(condition(&next, INFRASTRUCTURE_READY)["status"], "True");
    let reasons: Vec<&str> = update.events.iter().map(|e| e.reason.as_str()).collect();
    assert_eq!(reasons, ["InfrastructureReady", "Provisioned"]);
    // Settled: nothing more to write.
    assert_eq!(run(&next, &ready), ClusterUpdate::default());
}

#[test]
fn a_user_set_endpoint_is_never_overwritten() {
    let mut mine = cluster();
    mine["spec"]["controlPlaneEndpoint"] = json!({"host": "api.example.com", "port": 443});
    let update = run(&mine, &infra(json!({"ready": true})));
    assert_eq!(update.spec, None);
}

#[test]
fn a_failure_is_terminal() {
    let failed =
        infra(json!({"ready": false, "failureReason": "InvalidConfiguration", "failureMessage": "no VPC"}));
    let update = run(&cluster(), &failed);
    let next = applied(&cluster(), &update);
    assert_eq!(next["status"]["phase"], "Failed");
    assert_eq!(next["status"]["failureReason"], "InvalidConfiguration");
    assert!(update.events.iter().any(|e| e.warning && e.reason == "Failed"));
    // The provider clears its failure: the Cluster keeps it.
    let recovered = run(&next, &infra(json!({"ready": true})));
    let after = applied(&next, &recovered);
    assert_eq!(after["status"]["failureReason"], "InvalidConfiguration");
    assert_eq!(after["status"]["phase"], "Failed");
}

#[test]
fn the_provider_ready_condition_is_copied() {
    let with_ready = infra(
        json!({"ready": false, "conditions": [{"type": "Ready", "status": "False",
        "reason": "LoadBalancerProvisioning", "severity": "Warning", "message": "waiting for the LB",
        "lastTransitionTime": "2026-11-25T11:00:00Z"}]}),
    );
    let next = applied(&cluster(), &run(&cluster(), &with_ready));
    let mirrored = condition(&next, INFRASTRUCTURE_READY);
    assert_eq!(mirrored["reason"], "LoadBalancerProvisioning");
    assert_eq!(mirrored["message"], "waiting for the LB");
    assert_eq!(mirrored["lastTransitionTime"], "2026-11-25T11:00:00Z");
}

#[test]
fn an_unowned_infrastructure_is_adopted() {
    let mut bare = infra(json!({}));
    bare["metadata"] = json!({"name": "dev-x", "namespace": "ns"});
    let update = run(&cluster(), &bare);
    assert_eq!(update.adopt.len(), 1);
    assert_eq!(update.adopt[0]["metadata"]["ownerReferences"][0]["name"], "dev");
}

#[test]
fn a_missing_infrastructure_is_a_condition_that_names_it() {
    let missing = |cluster: &Value| {
        reconcile_cluster_status(&Observed {
            cluster,
            infrastructure: Some(Referenced::Missing("DockerCluster ns/dev-x does not exist")),
            control_plane: None,
            now: NOW,
        })
    };
    let next = applied(&cluster(), &missing(&cluster()));
    let absent = condition(&next, INFRASTRUCTURE_READY);
    assert_eq!(absent["reason"], "DockerClusterMissing");
    assert_eq!(absent["message"], "DockerCluster ns/dev-x does not exist");
    let mut was_ready = cluster();
    was_ready["status"] = json!({"infrastructureReady": true});
    let next = applied(&was_ready, &missing(&was_ready));
    assert_eq!(
        condition(&next, INFRASTRUCTURE_READY)["message"],
        "DockerCluster ns/dev-x has been deleted after being ready"
    );
}

#[test]
fn a_control_plane_reports_initialized_and_ready() {
    let mut with_cp = cluster();
    with_cp["spec"]["controlPlaneRef"] = json!({"kind": "KubeadmControlPlane", "name": "dev-cp"});
    let cp = json!({"kind": "KubeadmControlPlane", "metadata": {"name": "dev-cp",
        "labels": {"cluster.x-k8s.io/cluster-name": "dev"},
        "ownerReferences": [{"kind": "Cluster", "uid": "u1", "controller": true}]},
        "status": {"initialized": true, "ready": true}});
    let update = reconcile_cluster_status(&Observed {
        cluster: &with_cp,
        infrastructure: None,
        control_plane: Some(Referenced::Found(&cp)),
        now: NOW,
    });
    let next = applied(&with_cp, &update);
    assert_eq!(condition(&next, CONTROL_PLANE_INITIALIZED)["status"], "True");
    assert_eq!(condition(&next, CONTROL_PLANE_READY)["status"], "True");
    assert_eq!(next["status"]["controlPlaneReady"], true);
}
