//! Every Cluster and ClusterClass of the real-world corpus decodes into our types and encodes
//! back to the same JSON: nothing Cluster API defines is lost on the way through.

use std::path::PathBuf;

use capi_topology::api::{Cluster, ClusterClass};
use capi_topology::store::parse_manifests;
use pretty_assertions::assert_eq;
use rstest::rstest;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Keywords of an `openAPIV3Schema` node; the API server prunes anything else.
const SCHEMA_KEYWORDS: &[&str] = &[
    "description",
    "example",
    "type",
    "properties",
    "additionalProperties",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "maxItems",
    "minItems",
    "uniqueItems",
    "format",
    "maxLength",
    "minLength",
    "pattern",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "x-kubernetes-preserve-unknown-fields",
    "enum",
    "default",
    "x-kubernetes-validations",
    "x-metadata",
    "x-kubernetes-int-or-string",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
];

/// Drops what Cluster API's own decoding and encoding treat as absent: `metadata: {}`, `false`
/// flags, `null` label maps, and unknown keys of array schema nodes (one real-world class has
/// stray keys beside `items`). Applied to both sides.
fn without_empty_defaults(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("type") == Some(&Value::from("array")) && map.contains_key("items") {
                map.retain(|key, _| SCHEMA_KEYWORDS.contains(&key.as_str()));
            }
            map.values_mut().for_each(without_empty_defaults);
            map.retain(|key, v| match key.as_str() {
                "metadata" => !v.as_object().is_some_and(|m| m.is_empty()),
                "controlPlane" | "infrastructureCluster" | "required" => *v != Value::Bool(false),
                "labels" | "annotations" => !v.is_null(),
                _ => true,
            });
        }
        Value::Array(items) => items.iter_mut().for_each(without_empty_defaults),
        _ => {}
    }
}

fn round_trip<T: DeserializeOwned + Serialize>(object: &Value) -> Value {
    let typed: T = serde_path_to_error::deserialize(object.clone()).unwrap_or_else(|e| panic!("decode: {e}"));
    serde_json::to_value(&typed).unwrap()
}

#[rstest]
fn real_world_objects_round_trip(#[files("tests/fixtures/realworld/*/*.yaml")] path: PathBuf) {
    let text = std::fs::read_to_string(&path).unwrap();
    let mut checked = 0;
    for object in parse_manifests(&text).unwrap() {
        let encoded = match (object["apiVersion"].as_str(), object["kind"].as_str()) {
            (Some("cluster.x-k8s.io/v1beta1"), Some("ClusterClass")) => round_trip::<ClusterClass>(&object),
            (Some("cluster.x-k8s.io/v1beta1"), Some("Cluster")) => round_trip::<Cluster>(&object),
            _ => continue,
        };
        let mut expected = object.clone();
        without_empty_defaults(&mut expected);
        let mut encoded = encoded;
        without_empty_defaults(&mut encoded);
        assert_eq!(encoded, expected, "{}", path.display());
        checked += 1;
    }
    assert!(checked > 0, "{} holds no Cluster or ClusterClass", path.display());
}
