//! The v1beta1-fields annotation: what it accepts, and durations read back as written.

use serde_json::json;

use super::*;

fn problem_texts(kind: &str, entries: Value) -> Vec<String> {
    problems(kind, &entries.to_string())
        .into_iter()
        .map(|(value, why)| format!("{value}: {why}"))
        .collect()
}

#[test]
fn only_the_fields_it_exists_for_are_accepted() {
    let ok = json!([
        {"path": "/spec/topology/rolloutAfter", "value": "2026-01-01T00:00:00Z"},
        {"path": "/spec/topology/workers/machineDeployments/0/variables/overrides/1/definitionFrom",
         "value": "p", "guard": {"/spec/topology/workers/machineDeployments/0/name": "md-0",
                                 "/spec/topology/workers/machineDeployments/0/variables/overrides/1/name": "v"}},
        {"path": "/spec/topology/controlPlane/nodeDrainTimeout", "value": "90s"},
        {"path": "/spec/topology/workers/machineDeployments/3/machineHealthCheck/unhealthyConditions/0/timeout", "value": "300s"},
    ]);
    assert_eq!(problem_texts("Cluster", ok), Vec::<String>::new());
    let bad = json!([
        {"path": "/spec/paused", "value": true},
        {"path": "/spec/controlPlaneRef", "value": {"kind": "Secret", "name": "x"}},
        {"path": "/status/phase", "value": "Provisioned"},
        {"path": "/spec/topology/workers/machineDeployments/01/nodeDrainTimeout", "value": "1s"},
    ]);
    assert_eq!(
        problem_texts("Cluster", bad),
        [
            "\"/spec/paused\": entry 0: not a v1beta1 field of a Cluster that this annotation keeps",
            "\"/spec/controlPlaneRef\": entry 1: not a v1beta1 field of a Cluster that this annotation keeps",
            "\"/status/phase\": entry 2: not a v1beta1 field of a Cluster that this annotation keeps",
            "\"/spec/topology/workers/machineDeployments/01/nodeDrainTimeout\": entry 3: not a v1beta1 field of a \
             Cluster that this annotation keeps",
        ]
    );
}

#[test]
fn each_value_is_checked_as_its_field() {
    let bad = json!([
        {"path": "/spec/topology/rolloutAfter", "value": "not-a-time; $(rm -rf /)"},
        {"path": "/spec/topology/controlPlane/nodeDrainTimeout", "value": "soon"},
        {"path": "/spec/topology/variables/0/definitionFrom", "value": 3},
        {"path": "/spec/topology/variables/0/definitionFrom", "value": "p", "guard": {"/spec/paused": "x"}},
        {"path": "/spec/topology/rolloutAfter", "value": "2026-01-01T00:00:00Z", "extra": 1},
        "text",
    ]);
    assert_eq!(
        problem_texts("Cluster", bad),
        [
            "\"not-a-time; $(rm -rf /)\": entry 0: spec.topology.rolloutAfter in body must be of type date-time: \
             \"not-a-time; $(rm -rf /)\"",
            "\"soon\": entry 1: time: invalid duration \"soon\"",
            "3: entry 2: spec.topology.variables.0.definitionFrom in body must be of type string: \"number\"",
            "\"/spec/paused\": entry 3: guard: not a name on the path",
            "\"extra\": entry 4: unknown field",
            "\"text\": entry 5: must be an object with \"path\" and \"value\"",
        ]
    );
    let int = json!([{"path": "/spec/revisionHistoryLimit", "value": 4_294_967_296_i64}]);
    assert_eq!(
        problem_texts("MachineDeployment", int),
        ["4294967296: entry 0: spec.revisionHistoryLimit in body must be of type int32: 4294967296"]
    );
    assert_eq!(problem_texts("Cluster", json!({})).len(), 1);
    assert_eq!(
        problem_texts(
            "Cluster",
            json!([
                {"path": "/spec/topology/rolloutAfter", "value": "2026-01-01T00:00:00Z"},
                {"path": "/spec/topology/rolloutAfter", "value": "2027-01-01T00:00:00Z"},
            ])
        ),
        ["\"/spec/topology/rolloutAfter\": entry 1: a second entry for this path"]
    );
}

#[test]
fn date_times_as_metav1_time_reads_them() {
    for good in [
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:00.5+01:00",
        "2026-01-01t00:00:00z",
    ] {
        assert!(is_date_time(good), "{good}");
    }
    for bad in [
        "",
        "2026-01-01",
        "2026-13-01T00:00:00Z",
        "2026-01-01T00:00:00",
        "2026-01-01 00:00:00Z",
        "x",
    ] {
        assert!(!is_date_time(bad), "{bad}");
    }
}

struct NoCrds;

impl super::super::ContractVersions for NoCrds {
    fn version_of(&self, _: &str, _: &str) -> Option<String> {
        None
    }
}

#[test]
fn durations_read_back_as_written_while_their_value_stands() {
    use super::super::{from_hub, to_hub};
    let spoke = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"topology": {"class": "k", "version": "v1.31.0",
            "controlPlane": {"nodeDrainTimeout": "90s", "nodeDeletionTimeout": "10m0s"},
            "workers": {"machineDeployments": [{"class": "w", "name": "md-0", "nodeVolumeDetachTimeout": "1.5h",
                "machineHealthCheck": {"unhealthyConditions": [{"type": "Ready", "status": "False", "timeout": "300s"}]}}]}}},
    });
    let hub = to_hub(spoke.clone()).unwrap();
    assert_eq!(
        hub["spec"]["topology"]["controlPlane"]["deletion"]["nodeDrainTimeoutSeconds"],
        90
    );
    let back = from_hub(hub.clone(), "cluster.x-k8s.io/v1beta1", &NoCrds).unwrap();
    assert_eq!(back["spec"], spoke["spec"]);
    // A v1beta2 client changed one value: that one reads as Go prints it, the others as written.
    let mut changed = hub;
    changed["spec"]["topology"]["controlPlane"]["deletion"]["nodeDrainTimeoutSeconds"] = json!(120);
    let back = from_hub(changed, "cluster.x-k8s.io/v1beta1", &NoCrds).unwrap();
    let topology = &back["spec"]["topology"];
    assert_eq!(topology["controlPlane"]["nodeDrainTimeout"], "2m0s");
    assert_eq!(
        topology["workers"]["machineDeployments"][0]["nodeVolumeDetachTimeout"],
        "1.5h"
    );
}

#[test]
fn a_stored_annotation_cannot_change_a_value_only_its_spelling() {
    use super::super::from_hub;
    let hub = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineHealthCheck",
        "metadata": {"name": "m", "namespace": "ns", "annotations": {V1BETA1_FIELDS: json!([
            {"path": "/spec/nodeStartupTimeout", "value": "1h"},
            {"path": "/spec/clusterName", "value": "other"},
        ]).to_string()}},
        "spec": {"clusterName": "c", "checks": {"nodeStartupTimeoutSeconds": 600}},
    });
    let back = from_hub(hub, "cluster.x-k8s.io/v1beta1", &NoCrds).unwrap();
    assert_eq!(back["spec"]["nodeStartupTimeout"], "10m0s");
    assert_eq!(back["spec"]["clusterName"], "c");
}

#[test]
fn rewritten_manifests_drop_the_written_forms_only() {
    let mut hub = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "c", "annotations": {V1BETA1_FIELDS: json!([
            {"path": "/spec/topology/controlPlane/nodeDrainTimeout", "value": "90s"},
            {"path": "/spec/topology/rolloutAfter", "value": "2026-01-01T00:00:00Z"},
        ]).to_string()}}});
    without_written_forms(&mut hub);
    assert_eq!(
        hub["metadata"]["annotations"][V1BETA1_FIELDS],
        json!([{"path": "/spec/topology/rolloutAfter", "value": "2026-01-01T00:00:00Z"}]).to_string()
    );
    let mut only_forms = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineHealthCheck",
        "metadata": {"name": "m", "annotations": {V1BETA1_FIELDS: json!([
            {"path": "/spec/nodeStartupTimeout", "value": "600s"}]).to_string()}}});
    without_written_forms(&mut only_forms);
    assert_eq!(only_forms["metadata"].get("annotations"), None);
}
