//! Objects of every converted kind with any one node replaced by a value of the wrong type, in
//! both directions of the conversion (and through `/convert`'s handler): an error or a result,
//! never a panic. The starting points are the conversion's own fixtures. Then reviews too large
//! in values or nesting, refused before they are decoded, and a legitimate list of 10,000
//! Clusters converted in time (their memory: `tests/hostile_memory.rs`; over the wire, four at
//! once: `server.rs`).

use std::panic::{catch_unwind, AssertUnwindSafe};

use capi_topology::api::convert::{self, review, ContractVersions};
use capi_topology::store::parse_manifests;
use serde_json::{json, Value};

use super::conversion_inputs;

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

/// The most one hostile review may take in process: the API server's webhook timeout, in an
/// unoptimised test build on a busy machine (a safety bound, not a timing target).
const BOUND: std::time::Duration = std::time::Duration::from_secs(10);

/// Converts `body`, failing past [`BOUND`]; the answer as JSON.
fn convert_within_bound(body: &[u8]) -> Value {
    let started = std::time::Instant::now();
    let answer = review::review_bytes(body, &AnyVersion);
    let took = started.elapsed();
    assert!(took < BOUND, "took {took:?}");
    serde_json::from_slice(&answer.bytes).expect("the answer is JSON")
}

#[test]
fn a_review_of_hundreds_of_thousands_of_empty_arrays_is_refused_before_decoding() {
    for bytes in [2 << 20, 7 << 20] {
        let answer = convert_within_bound(&conversion_inputs::empty_arrays(bytes));
        let result = &answer["response"]["result"];
        assert_eq!(result["status"], "Failure", "{bytes}: {result}");
        assert_eq!(answer["response"]["uid"], "u-arrays");
        let message = result["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("cannot convert object 0: it holds more than 50000 JSON values"),
            "{message}"
        );
    }
}

#[test]
fn a_list_of_ten_thousand_small_clusters_converts_one_at_a_time() {
    let body = conversion_inputs::small_clusters(10_000);
    assert!(body.len() > 3_000_000, "{} bytes", body.len());
    let answer = convert_within_bound(&body);
    assert_eq!(answer["response"]["result"]["status"], "Success");
    let objects = answer["response"]["convertedObjects"].as_array().expect("a list");
    assert_eq!(objects.len(), 10_000);
    assert_eq!(objects[9_999]["apiVersion"], conversion_inputs::TO_V1BETA1);
    assert_eq!(objects[9_999]["spec"]["topology"]["class"], "quick-start");
}

#[test]
fn nesting_past_the_decoders_limit_fails_the_review() {
    let deep = format!("{}{}", "[".repeat(1_000), "]".repeat(1_000));
    let body = format!(
        r#"{{"request": {{"uid": "u", "desiredAPIVersion": "{}", "objects": [{{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "spec": {{"x": {deep}}}}}]}}}}"#,
        conversion_inputs::TO_V1BETA1
    );
    let answer = convert_within_bound(body.as_bytes());
    let message = answer["response"]["result"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("recursion limit exceeded"), "{message}");
}
