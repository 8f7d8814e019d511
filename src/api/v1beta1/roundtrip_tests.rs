//! Every kind, with every field Cluster API v1.10 defines set, decodes into our types and
//! encodes back to the same JSON.

use pretty_assertions::assert_eq;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::*;
use crate::api::RESOURCE_KIND_CONFIG_MAP;

/// Decodes `text` as `T` (failing with the JSON path of the problem) and checks the encoding
/// equals the input; returns the typed object for further checks.
fn round_trip<T: DeserializeOwned + Serialize>(text: &str) -> T {
    let input: Value = serde_yaml_ng::from_str(text).unwrap_or_else(|e| panic!("bad YAML: {e}"));
    let typed: T = serde_path_to_error::deserialize(input.clone()).unwrap_or_else(|e| panic!("decode: {e}"));
    let output = serde_json::to_value(&typed).unwrap_or_else(|e| panic!("encode: {e}"));
    assert_eq!(output, input);
    typed
}

#[test]
fn cluster_class_with_every_field() {
    let class: ClusterClass = round_trip(include_str!("testdata/cluster_class_full.yaml"));
    let schema = &class.spec.variables[0].schema.open_api_v3_schema;
    assert!(schema.properties["port"].x_int_or_string);
    assert!(schema.properties["free"].x_preserve_unknown_fields);
    assert_eq!(
        schema.x_validations[0].reason.as_deref(),
        Some("FieldValueForbidden")
    );
    assert_eq!(schema.x_validations[0].field_path, ".number");
    assert_eq!(
        schema.additional_properties.as_ref().map(|p| p.type_.as_str()),
        Some("string")
    );
    let status = class.status.unwrap_or_default();
    assert!(status.variables[0].definitions_conflict);
    assert_eq!(status.variables[0].definitions[1].from, "external");
    let patch = &class.spec.patches[0].definitions[0].json_patches;
    assert_eq!(patch[3].value, None, "remove has no value");
}

#[test]
fn cluster_with_every_field() {
    let cluster: Cluster = round_trip(include_str!("testdata/cluster_full.yaml"));
    let topology = cluster.spec.topology.clone().unwrap_or_default();
    assert_eq!(topology.class_namespace.as_deref(), Some("classes"));
    assert_eq!(topology.variables[1].definition_from, "external");
    let workers = topology.workers.unwrap_or_default();
    assert_eq!(
        workers.machine_pools[0]
            .variables
            .clone()
            .unwrap_or_default()
            .overrides[0]
            .value,
        Value::Null
    );

    let status = cluster.typed_status().ok().flatten().unwrap_or_default();
    assert_eq!(status.failure_domains.len(), 2);
    assert!(status.failure_domains["fd1"].control_plane);
    let workers = status.v1beta2.clone().and_then(|s| s.workers).unwrap_or_default();
    assert_eq!(workers.up_to_date_replicas, Some(4));
    let encoded = serde_json::to_value(&status).ok();
    assert_eq!(
        encoded.as_ref(),
        cluster.status.as_ref(),
        "typed status round-trips"
    );
}

#[test]
fn typed_status_of_a_cluster_without_status_is_none() {
    assert_eq!(Cluster::default().typed_status().ok(), Some(None));
    let broken = Cluster {
        status: Some(serde_json::json!({"phase": 3})),
        ..Cluster::default()
    };
    assert!(broken.typed_status().is_err());
}

#[test]
fn cluster_resource_set_with_every_field() {
    let set: ClusterResourceSet = round_trip(include_str!("testdata/cluster_resource_set_full.yaml"));
    assert_eq!(set.spec.resources[1].kind, RESOURCE_KIND_CONFIG_MAP);
    let status = set.status.unwrap_or_default();
    assert_eq!(status.conditions[0].severity.as_deref(), Some("Warning"));
}

#[test]
fn cluster_resource_set_binding_with_every_field() {
    let binding: ClusterResourceSetBinding =
        round_trip(include_str!("testdata/cluster_resource_set_binding_full.yaml"));
    let set = &binding.spec.bindings[0];
    assert!(set.resources[0].applied);
    assert!(set.resources[0].last_applied_time.is_some());
    assert!(!set.resources[1].applied, "applied: false is kept");
}
