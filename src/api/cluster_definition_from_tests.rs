use serde_json::json;

use super::*;
use crate::api::convert::{from_hub, to_hub, ContractVersions};

struct NoCrds;

impl ContractVersions for NoCrds {
    fn version_of(&self, _: &str, _: &str) -> Option<String> {
        None
    }
}

fn v1beta1() -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"topology": {"class": "k", "version": "v1.31.0", "rolloutAfter": "2026-01-01T00:00:00Z",
            "controlPlane": {"variables": {"overrides": [{"name": "p", "definitionFrom": "inline", "value": "cp"}]}},
            "workers": {"machineDeployments": [
                {"class": "w", "name": "md-a"},
                {"class": "w", "name": "md-b", "variables": {"overrides": [
                    {"name": "q", "value": 1}, {"name": "p", "definitionFrom": "lb", "value": {"host": "md"}}]}}]},
            "variables": [
                {"name": "n", "value": "x"},
                {"name": "p", "definitionFrom": "inline", "value": "s"},
                {"name": "p", "definitionFrom": "lb", "value": {"host": "h"}}]}}
    })
}

fn froms(values: &[ClusterVariable]) -> Vec<(&str, &str)> {
    values
        .iter()
        .map(|v| (v.name.as_str(), v.definition_from.as_str()))
        .collect()
}

#[test]
fn decoding_a_hub_cluster_restores_definition_from_and_encoding_keeps_it() {
    let hub = to_hub(v1beta1()).unwrap();
    let cluster: Cluster = serde_json::from_value(hub.clone()).unwrap();
    let topology = &cluster.spec.topology;
    assert_eq!(
        froms(&topology.variables),
        [("n", ""), ("p", "inline"), ("p", "lb")]
    );
    assert_eq!(
        froms(&topology.control_plane.variables.overrides),
        [("p", "inline")]
    );
    let md = &topology.workers.machine_deployments;
    assert_eq!(froms(&md[1].variables.overrides), [("q", ""), ("p", "lb")]);
    // Unchanged values serialise to the same hub object, annotation text included.
    assert_eq!(serde_json::to_value(&cluster).unwrap(), hub);
    let back = from_hub(
        serde_json::to_value(&cluster).unwrap(),
        "cluster.x-k8s.io/v1beta1",
        &NoCrds,
    )
    .unwrap();
    assert_eq!(back["spec"]["topology"], v1beta1()["spec"]["topology"]);
}

#[test]
fn the_annotation_follows_the_typed_values() {
    let hub = to_hub(v1beta1()).unwrap();
    let mut cluster: Cluster = serde_json::from_value(hub).unwrap();
    let topology = &mut cluster.spec.topology;
    topology.variables.push(ClusterVariable {
        name: "r".into(),
        definition_from: "lb".into(),
        value: json!(1),
    });
    for value in topology
        .variables
        .iter_mut()
        .chain(&mut topology.control_plane.variables.overrides)
    {
        if value.name == "p" {
            value.definition_from.clear();
        }
    }
    topology.workers.machine_deployments[1]
        .variables
        .overrides
        .clear();
    let encoded = serde_json::to_value(&cluster).unwrap();
    let text = encoded["metadata"]["annotations"][V1BETA1_FIELDS]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!([
            {"path": "/spec/topology/rolloutAfter", "value": "2026-01-01T00:00:00Z"},
            {"path": "/spec/topology/variables/3/definitionFrom", "value": "lb",
             "guard": {"/spec/topology/variables/3/name": "r"}}
        ])
    );
    assert_eq!(cluster.v1beta1_fields_annotation(), Some(text.clone()));
    let decoded: Cluster = serde_json::from_value(encoded).unwrap();
    set_annotation(&mut cluster, Some(text));
    assert_eq!(decoded, cluster);
    // Without any kept field, the annotation (and an empty annotations map) goes.
    let mut bare = Cluster::default();
    bare.spec.topology.variables = vec![ClusterVariable {
        name: "r".into(),
        definition_from: "lb".into(),
        value: json!(1),
    }];
    let annotated = serde_json::to_value(&bare).unwrap();
    bare.spec.topology.variables[0].definition_from.clear();
    let mut decoded: Cluster = serde_json::from_value(annotated).unwrap();
    assert_eq!(decoded.spec.topology.variables[0].definition_from, "lb");
    decoded.spec.topology.variables[0].definition_from.clear();
    assert!(serde_json::to_value(&decoded)
        .unwrap()
        .pointer("/metadata/annotations")
        .is_none());
}

/// A stored Cluster whose annotation says more than v1beta1 wrote (a v1beta2 client wrote
/// it before admission checked it): its v1beta1 view shows none of it, and a `rolloutAfter`
/// that is not a date-time is not read (it would hold the workers for good).
#[test]
fn a_hostile_annotation_shows_nothing_and_rolls_nothing() {
    let mut hub = to_hub(v1beta1()).unwrap();
    hub["metadata"]["annotations"] = json!({V1BETA1_FIELDS: json!([
        {"path": "/spec/paused", "value": true},
        {"path": "/spec/controlPlaneRef", "value": {"apiVersion": "v1", "kind": "Secret", "name": "admin"}},
        {"path": "/status/phase", "value": "Provisioned"},
        {"path": "/spec/topology/rolloutAfter", "value": "not-a-time; $(rm -rf /)"},
    ]).to_string()});
    let cluster: Cluster = serde_json::from_value(hub.clone()).unwrap();
    assert_eq!(cluster.spec.topology.v1beta1_rollout_after, None);
    let spoke = from_hub(hub, "cluster.x-k8s.io/v1beta1", &NoCrds).unwrap();
    assert_eq!(spoke["spec"].get("paused"), None);
    assert_eq!(spoke["spec"].get("controlPlaneRef"), None);
    assert_eq!(spoke["status"].get("phase"), None);
    assert_eq!(spoke["spec"]["topology"].get("rolloutAfter"), None);
}

#[test]
fn a_v1beta1_rollout_after_that_is_no_time_is_not_converted() {
    let mut spoke = v1beta1();
    spoke["spec"]["topology"]["rolloutAfter"] = json!("not-a-time; $(rm -rf /)");
    assert_eq!(
        to_hub(spoke).unwrap_err().to_string(),
        "failed to convert Cluster ns/c: spec.topology.rolloutAfter: Invalid value: \"not-a-time; $(rm -rf /)\": \
         spec.topology.rolloutAfter in body must be of type date-time: \"not-a-time; $(rm -rf /)\""
    );
}

/// An entry whose guard no longer matches (a v1beta2 client reordered the list, or renamed
/// the MachineDeployment) is not applied, as the converter does not apply it.
#[test]
fn stale_entries_are_ignored() {
    let mut hub = to_hub(v1beta1()).unwrap();
    hub["spec"]["topology"]["variables"]
        .as_array_mut()
        .unwrap()
        .swap(0, 2);
    hub["spec"]["topology"]["workers"]["machineDeployments"][1]["name"] = json!("md-c");
    let cluster: Cluster = serde_json::from_value(hub).unwrap();
    let topology = &cluster.spec.topology;
    assert_eq!(
        froms(&topology.variables),
        [("p", ""), ("p", "inline"), ("n", "")]
    );
    let md = &topology.workers.machine_deployments;
    assert_eq!(froms(&md[1].variables.overrides), [("q", ""), ("p", "")]);
    assert_eq!(
        froms(&topology.control_plane.variables.overrides),
        [("p", "inline")]
    );
}
