//! Every Cluster and ClusterClass of the real-world corpus (all cluster.x-k8s.io/v1beta1):
//! (a) decodes into the v1beta1 spoke types (`api::v1beta1`, the schema of the served v1beta1
//! CRD version) and encodes back to the same JSON; (b) converts to the v1beta2 hub
//! (`api::convert::to_hub`), decodes into the hub types, encodes, and converts back
//! (`api::convert::from_hub`) to the same JSON, durations spelt as written, but for what the way
//! back writes as Cluster API's does (a reference's namespace). Nothing Cluster API defines is
//! lost either way.

use std::collections::BTreeMap;
use std::path::PathBuf;

use capi_topology::api::convert::{from_hub, to_hub, ContractVersions, CONVERSION_DATA};
use capi_topology::api::{v1beta1, Cluster, ClusterClass};
use capi_topology::store::{group_of, parse_manifests};
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

/// The v1beta1 object references whose namespace is the object's own.
const REFS: &[&str] = &["ref", "infrastructureRef", "controlPlaneRef"];

/// What the v1beta1 webhooks and the way back from the hub write for fields left to them, as
/// Cluster API v1.14's conversion does: a reference's namespace is the object's own. (A duration
/// comes back as written, `300s` as `300s`: the hub keeps its written form.) Applied to the
/// original.
fn as_converted_back(value: &mut Value, namespace: &str) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if REFS.contains(&key.as_str()) && !namespace.is_empty() {
                    if let Some(reference) = field.as_object_mut() {
                        reference
                            .entry("namespace")
                            .or_insert_with(|| Value::from(namespace));
                    }
                }
                as_converted_back(field, namespace);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| as_converted_back(v, namespace)),
        _ => {}
    }
}

fn round_trip<T: DeserializeOwned + Serialize>(object: &Value) -> Value {
    let typed: T = serde_path_to_error::deserialize(object.clone()).unwrap_or_else(|e| panic!("decode: {e}"));
    serde_json::to_value(&typed).unwrap()
}

/// The contract versions of the referenced kinds: the version each ref of the original object
/// names (a provider's CRD serving the version the object was written against).
struct RefVersions(BTreeMap<(String, String), String>);

impl RefVersions {
    fn of(object: &Value) -> Self {
        fn walk(value: &Value, found: &mut BTreeMap<(String, String), String>) {
            match value {
                Value::Object(map) => {
                    let text = |key: &str| map.get(key).and_then(Value::as_str);
                    if let (Some(api_version), Some(kind)) = (text("apiVersion"), text("kind")) {
                        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
                        found.insert((group.to_owned(), kind.to_owned()), version.to_owned());
                    }
                    map.values().for_each(|v| walk(v, found));
                }
                Value::Array(items) => items.iter().for_each(|v| walk(v, found)),
                _ => {}
            }
        }
        let mut found = BTreeMap::new();
        walk(&object["spec"], &mut found);
        RefVersions(found)
    }
}

impl ContractVersions for RefVersions {
    fn version_of(&self, group: &str, kind: &str) -> Option<String> {
        self.0.get(&(group.to_owned(), kind.to_owned())).cloned()
    }
}

/// v1beta1 -> hub -> typed hub -> JSON -> v1beta1, without the conversion-data annotation the
/// way back writes (the hub object, for a later conversion to the hub).
fn through_the_hub<T: DeserializeOwned + Serialize>(object: &Value) -> Value {
    let api_version = object["apiVersion"].as_str().unwrap();
    let hub = to_hub(object.clone()).unwrap_or_else(|e| panic!("to_hub: {e}"));
    let hub = round_trip::<T>(&hub);
    let mut back =
        from_hub(hub, api_version, &RefVersions::of(object)).unwrap_or_else(|e| panic!("from_hub: {e}"));
    if let Some(annotations) = back
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(CONVERSION_DATA);
        if annotations.is_empty() && object.pointer("/metadata/annotations").is_none() {
            back["metadata"].as_object_mut().unwrap().remove("annotations");
        }
    }
    back
}

#[rstest]
fn real_world_objects_round_trip(#[files("tests/fixtures/realworld/*/*.yaml")] path: PathBuf) {
    let text = std::fs::read_to_string(&path).unwrap();
    let mut checked = 0;
    for object in parse_manifests(&text).unwrap() {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let (spoke, through_hub) = match (group_of(api_version), object["kind"].as_str()) {
            ("cluster.x-k8s.io", Some("ClusterClass")) => (
                round_trip::<v1beta1::ClusterClass>(&object),
                through_the_hub::<ClusterClass>(&object),
            ),
            ("cluster.x-k8s.io", Some("Cluster")) => (
                round_trip::<v1beta1::Cluster>(&object),
                through_the_hub::<Cluster>(&object),
            ),
            _ => continue,
        };
        assert_eq!(api_version, "cluster.x-k8s.io/v1beta1", "{}", path.display());
        let mut expected = object.clone();
        without_empty_defaults(&mut expected);
        let mut spoke = spoke;
        without_empty_defaults(&mut spoke);
        assert_eq!(spoke, expected, "{} through the v1beta1 types", path.display());
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
        as_converted_back(&mut expected["spec"], namespace);
        if object["kind"] == "Cluster" && object.get("status").is_none() {
            // v1beta1 prints these two booleans always (no omitempty), so a status always.
            expected["status"] =
                serde_json::json!({"infrastructureReady": false, "controlPlaneReady": false});
        }
        let mut through_hub = through_hub;
        without_empty_defaults(&mut through_hub);
        assert_eq!(through_hub, expected, "{} through the hub", path.display());
        checked += 1;
    }
    assert!(checked > 0, "{} holds no Cluster or ClusterClass", path.display());
}
