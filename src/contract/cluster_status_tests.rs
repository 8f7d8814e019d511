use serde_json::{json, Value};

use super::cluster_status::*;
use super::external::Referenced;

const NOW: &str = "2026-11-25T12:00:00Z";

fn cluster() -> Value {
    json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "dev", "namespace": "ns", "uid": "u1", "generation": 2},
        "spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
            "kind": "DockerCluster", "name": "dev-x"}}})
}

/// An InfraCluster of the v1beta1 contract (`status.ready`, a failure domain map).
fn infra(status: Value) -> Value {
    json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster",
        "metadata": {"name": "dev-x", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "dev"},
            "ownerReferences": [{"kind": "Cluster", "name": "dev", "uid": "u1", "controller": false}]},
        "spec": {"controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443}},
        "status": status})
}

fn observe<'a>(cluster: &'a Value, infra: Option<Referenced<'a>>, contract: &'a str) -> ClusterUpdate {
    reconcile_cluster_status(&Observed {
        cluster,
        infrastructure: infra,
        infrastructure_contract: contract,
        control_plane: None,
        control_plane_contract: "v1beta2",
        now: NOW,
    })
}

fn run(cluster: &Value, infra: &Value) -> ClusterUpdate {
    observe(cluster, Some(Referenced::Found(infra)), "v1beta1")
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

fn v1beta1_condition<'a>(cluster: &'a Value, kind: &str) -> &'a Value {
    cluster["status"]["deprecated"]["v1beta1"]["conditions"]
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
    assert_eq!(next["status"].get("initialization"), None);
    let ready = condition(&next, INFRASTRUCTURE_READY);
    assert_eq!(
        (&ready["status"], &ready["reason"], &ready["message"]),
        (
            &json!("False"),
            &json!("NotReady"),
            &json!("DockerCluster status.initialization.provisioned is false")
        )
    );
    assert_eq!(ready["observedGeneration"], 2);
    let old = v1beta1_condition(&next, INFRASTRUCTURE_READY);
    assert_eq!(
        (&old["status"], &old["reason"]),
        (&json!("False"), &json!("WaitingForInfrastructure"))
    );
}

#[test]
fn a_ready_infrastructure_gives_its_endpoint_and_failure_domains_once() {
    let domains =
        json!({"fd1": {"controlPlane": true, "attributes": {"zone": "a"}}, "fd0": {"controlPlane": false}});
    let ready = infra(json!({"ready": true, "failureDomains": domains}));
    let update = run(&cluster(), &ready);
    assert_eq!(
        update.spec,
        Some(json!({"controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443}}))
    );
    let next = applied(&cluster(), &update);
    assert_eq!(
        next["status"]["initialization"]["infrastructureProvisioned"],
        true
    );
    // The v1beta1 contract's map becomes the Cluster's list, by name.
    assert_eq!(
        next["status"]["failureDomains"],
        json!([{"name": "fd0", "controlPlane": false},
               {"name": "fd1", "controlPlane": true, "attributes": {"zone": "a"}}])
    );
    assert_eq!(next["status"]["phase"], "Provisioned");
    assert_eq!(condition(&next, INFRASTRUCTURE_READY)["status"], "True");
    assert_eq!(condition(&next, INFRASTRUCTURE_READY)["reason"], "Ready");
    assert_eq!(v1beta1_condition(&next, INFRASTRUCTURE_READY)["status"], "True");
    let events: Vec<(&str, &str)> = update
        .events
        .iter()
        .map(|e| (e.reason.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(
        events,
        [
            (
                "InfrastructureReady",
                "Cluster dev InfrastructureProvisioned is now True"
            ),
            ("Provisioned", "Cluster dev is Provisioned")
        ]
    );
    // Settled: nothing more to write.
    assert_eq!(run(&next, &ready), ClusterUpdate::default());
    // Failure domains that go away are removed from the Cluster.
    let gone = applied(&next, &run(&next, &infra(json!({"ready": true}))));
    assert_eq!(gone["status"].get("failureDomains"), None);
}

#[test]
fn a_v1beta2_contract_infrastructure_is_read_at_its_initialization() {
    let mut object = infra(json!({"ready": true, "initialization": {"provisioned": false}}));
    object["apiVersion"] = json!("infrastructure.cluster.x-k8s.io/v1beta2");
    let update = observe(&cluster(), Some(Referenced::Found(&object)), "v1beta2");
    assert_eq!(
        update.spec, None,
        "status.ready is not the v1beta2 contract's field"
    );
    object["status"] = json!({"initialization": {"provisioned": true},
        "failureDomains": [{"name": "az1", "controlPlane": true}],
        "conditions": [{"type": "Ready", "status": "True", "reason": "Provisioned", "message": "",
            "lastTransitionTime": "2026-11-25T11:00:00Z"}]});
    let next = applied(
        &cluster(),
        &observe(&cluster(), Some(Referenced::Found(&object)), "v1beta2"),
    );
    assert_eq!(
        next["status"]["failureDomains"],
        json!([{"name": "az1", "controlPlane": true}])
    );
    let ready = condition(&next, INFRASTRUCTURE_READY);
    assert_eq!(ready["reason"], "Provisioned");
    assert_eq!(ready["lastTransitionTime"], "2026-11-25T11:00:00Z");
}

#[test]
fn a_user_set_endpoint_is_never_overwritten() {
    let mut mine = cluster();
    mine["spec"]["controlPlaneEndpoint"] = json!({"host": "api.example.com", "port": 443});
    let update = run(&mine, &infra(json!({"ready": true})));
    assert_eq!(update.spec, None);
}

/// v1.14: a provider's failureReason/failureMessage are no longer terminal; they are only copied
/// to the Cluster's `status.deprecated.v1beta1`, and the phase does not become Failed.
#[test]
fn a_failure_is_recorded_under_deprecated_v1beta1() {
    let failed =
        infra(json!({"ready": false, "failureReason": "InvalidConfiguration", "failureMessage": "no VPC"}));
    let next = applied(&cluster(), &run(&cluster(), &failed));
    assert_eq!(next["status"]["phase"], "Provisioning");
    let v1beta1 = &next["status"]["deprecated"]["v1beta1"];
    assert_eq!(v1beta1["failureReason"], "InvalidConfiguration");
    assert_eq!(
        v1beta1["failureMessage"],
        "Failure detected from referenced resource infrastructure.cluster.x-k8s.io/v1beta1, \
         Kind=DockerCluster with name \"dev-x\": no VPC"
    );
    assert_eq!(next["status"].get("failureReason"), None);
}

#[test]
fn the_provider_ready_condition_is_copied() {
    let with_ready = infra(
        json!({"ready": false, "conditions": [{"type": "Ready", "status": "False",
        "reason": "LoadBalancerProvisioning", "severity": "Warning", "message": "waiting for the LB",
        "lastTransitionTime": "2026-11-25T11:00:00Z"}]}),
    );
    let next = applied(&cluster(), &run(&cluster(), &with_ready));
    for mirrored in [
        condition(&next, INFRASTRUCTURE_READY),
        v1beta1_condition(&next, INFRASTRUCTURE_READY),
    ] {
        assert_eq!(mirrored["reason"], "LoadBalancerProvisioning");
        assert_eq!(mirrored["message"], "waiting for the LB");
        assert_eq!(mirrored["lastTransitionTime"], "2026-11-25T11:00:00Z");
    }
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
        observe(
            cluster,
            Some(Referenced::Missing("DockerCluster does not exist")),
            "v1beta1",
        )
    };
    let next = applied(&cluster(), &missing(&cluster()));
    let absent = condition(&next, INFRASTRUCTURE_READY);
    assert_eq!(absent["reason"], "ObjectDoesNotExist");
    assert_eq!(absent["message"], "DockerCluster does not exist");
    let mut was_ready = cluster();
    was_ready["status"] = json!({"initialization": {"infrastructureProvisioned": true}});
    let next = applied(&was_ready, &missing(&was_ready));
    let deleted = condition(&next, INFRASTRUCTURE_READY);
    assert_eq!(deleted["reason"], "ObjectDeleted");
    assert_eq!(
        deleted["message"],
        "DockerCluster has been deleted while the cluster still exists"
    );
}

#[test]
fn a_topology_cluster_waits_for_its_objects() {
    let mut managed = cluster();
    managed["spec"] = json!({"topology": {"classRef": {"name": "quick-start"}, "version": "v1.34.0"}});
    let next = applied(&managed, &observe(&managed, None, "v1beta2"));
    for kind in [INFRASTRUCTURE_READY, CONTROL_PLANE_INITIALIZED] {
        assert_eq!(condition(&next, kind)["reason"], "ObjectDoesNotExist", "{kind}");
        assert_eq!(
            condition(&next, kind)["message"],
            "Waiting for cluster topology to be reconciled"
        );
    }
    assert_eq!(next["status"].get("initialization"), None);
}

#[test]
fn a_control_plane_reports_initialized() {
    let mut with_cp = cluster();
    with_cp["spec"] = json!({"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io",
        "kind": "KubeadmControlPlane", "name": "dev-cp"}});
    let cp = |status: Value| {
        json!({"kind": "KubeadmControlPlane", "metadata": {"name": "dev-cp",
        "labels": {"cluster.x-k8s.io/cluster-name": "dev"},
        "ownerReferences": [{"kind": "Cluster", "uid": "u1", "controller": false}]},
        "spec": {"controlPlaneEndpoint": {"host": "cp.example.com", "port": 6443}},
        "status": status})
    };
    let update = |cp: &Value, contract: &str| {
        reconcile_cluster_status(&Observed {
            cluster: &with_cp,
            infrastructure: None,
            infrastructure_contract: "v1beta2",
            control_plane: Some(Referenced::Found(cp)),
            control_plane_contract: contract,
            now: NOW,
        })
    };
    for (status, contract) in [
        (json!({"initialized": true, "ready": true}), "v1beta1"),
        (
            json!({"initialization": {"controlPlaneInitialized": true}}),
            "v1beta2",
        ),
    ] {
        let update = update(&cp(status), contract);
        let next = applied(&with_cp, &update);
        assert_eq!(
            condition(&next, CONTROL_PLANE_INITIALIZED)["status"],
            "True",
            "{contract}"
        );
        assert_eq!(
            condition(&next, CONTROL_PLANE_INITIALIZED)["reason"],
            "Initialized"
        );
        assert_eq!(
            v1beta1_condition(&next, CONTROL_PLANE_INITIALIZED)["status"],
            "True"
        );
        assert_eq!(v1beta1_condition(&next, CONTROL_PLANE_READY)["status"], "True");
        assert_eq!(next["status"]["initialization"]["controlPlaneInitialized"], true);
        assert_eq!(next["spec"]["controlPlaneEndpoint"]["host"], "cp.example.com");
    }
    // A v1beta2-contract control plane is not read at status.initialized.
    let next = applied(&with_cp, &update(&cp(json!({"initialized": true})), "v1beta2"));
    assert_eq!(
        condition(&next, CONTROL_PLANE_INITIALIZED)["reason"],
        "NotInitialized"
    );
}
