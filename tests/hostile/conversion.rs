//! Objects of every converted kind with any one node replaced by a value of the wrong type, in
//! both directions of the conversion (and through `/convert`'s handler): an error or a result,
//! never a panic. The starting points are the conversion's own fixtures.

use std::panic::{catch_unwind, AssertUnwindSafe};

use capi_topology::api::convert::{self, review, ContractVersions};
use capi_topology::store::parse_manifests;
use serde_json::{json, Value};

/// Every provider kind is served at v1beta2.
struct AnyVersion;

impl ContractVersions for AnyVersion {
    fn version_of(&self, _group: &str, _kind: &str) -> Option<String> {
        Some("v1beta2".to_owned())
    }
}

/// The JSON pointers of every node below the root.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => map.iter().for_each(|(key, child)| {
            let pointer = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
            out.push(pointer.clone());
            pointers(child, pointer, out);
        }),
        Value::Array(items) => items.iter().enumerate().for_each(|(index, child)| {
            let pointer = format!("{at}/{index}");
            out.push(pointer.clone());
            pointers(child, pointer, out);
        }),
        _ => {}
    }
}

/// Converts `object` to the hub and to each spoke, straight and as a ConversionReview.
fn convert_every_way(object: &Value) {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let spoke = if api_version.starts_with("runtime.") {
        "runtime.cluster.x-k8s.io/v1alpha1"
    } else if api_version.starts_with("addons.") {
        "addons.cluster.x-k8s.io/v1beta1"
    } else {
        "cluster.x-k8s.io/v1beta1"
    };
    let hub = spoke
        .rsplit_once('/')
        .map(|(group, _)| format!("{group}/v1beta2"))
        .unwrap_or_default();
    let _ = convert::to_hub(object.clone());
    let _ = convert::convert(object.clone(), spoke, &AnyVersion);
    let _ = convert::convert(object.clone(), &hub, &AnyVersion);
    let request = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "u", "desiredAPIVersion": spoke, "objects": [object]}});
    let _ = review::review_value(&request, &AnyVersion);
}

#[test]
fn wrongly_typed_nodes_never_panic_the_conversion() {
    let wrong = [
        json!("x"),
        json!(7),
        json!(-1.5),
        json!(true),
        json!(null),
        json!([]),
        json!({}),
        json!([{}]),
    ];
    let mut panics = Vec::new();
    for entry in std::fs::read_dir("src/api/convert/testdata").expect("the conversion fixtures") {
        let path = entry.expect("a fixture").path();
        if path.extension().is_none_or(|ext| ext != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a fixture");
        for object in parse_manifests(&text).expect("fixtures parse") {
            let mut at = Vec::new();
            pointers(&object, String::new(), &mut at);
            for pointer in &at {
                for value in &wrong {
                    let mut broken = object.clone();
                    if let Some(node) = broken.pointer_mut(pointer) {
                        *node = value.clone();
                    }
                    if catch_unwind(AssertUnwindSafe(|| convert_every_way(&broken))).is_err() {
                        panics.push(format!("{}: {pointer} = {value}", path.display()));
                    }
                }
            }
        }
    }
    assert!(
        panics.is_empty(),
        "{} inputs panicked the conversion:\n{}",
        panics.len(),
        panics.join("\n")
    );
}
