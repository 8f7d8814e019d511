//! Goldens written by Cluster API v1.14.0's own converters from the spoke fixtures
//! (`benches/reference/convert`, `GOLDEN=1 go test ./...`), compared with ours once both sides
//! drop what a Go struct prints for an unset field (`null`, `""`, `{}`, `[]`): a JSON-level
//! converter does not synthesise those (see the module doc).

use serde_json::Value;

use super::tests::crds;
use super::{from_hub, to_hub, CONVERSION_DATA, V1BETA1_FIELDS};

/// `value` without nulls, empty strings, empty objects and empty arrays, recursively; the
/// conversion-data annotation is parsed and normalised too, and ours of v1beta1 fields dropped.
fn normalised(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Object(obj) => {
            let out: serde_json::Map<String, Value> = obj
                .iter()
                // Our hub keeps v1beta1-only fields and the durations' written forms in an
                // annotation the reference does not have.
                .filter(|(k, _)| *k != V1BETA1_FIELDS)
                .filter_map(|(k, v)| {
                    let v = if k == CONVERSION_DATA {
                        serde_json::from_str(v.as_str()?).ok()?
                    } else {
                        v.clone()
                    };
                    Some((k.clone(), normalised(&v)?))
                })
                .collect();
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(items) => {
            let out: Vec<Value> = items.iter().filter_map(normalised).collect();
            (!out.is_empty()).then_some(Value::Array(out))
        }
        other => Some(other.clone()),
    }
}

/// The paths where `ours` and `theirs` differ, with both values.
fn differences(ours: &Value, theirs: &Value, path: &str, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let (x, y) = (
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                );
                differences(x, y, &format!("{path}/{key}"), out);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(x, y, &format!("{path}/{i}"), out);
            }
        }
        (a, b) if a != b => out.push(format!("{path}: ours {a}, reference {b}")),
        _ => {}
    }
}

/// Asserts both sides are equal once normalised, listing the paths that differ.
fn assert_same(ours: &Value, theirs: &Value) {
    let (ours, theirs) = (
        normalised(ours).unwrap_or_default(),
        normalised(theirs).unwrap_or_default(),
    );
    let mut out = Vec::new();
    differences(&ours, &theirs, "", &mut out);
    assert!(
        out.is_empty(),
        "differences from the reference:\n{}",
        out.join("\n")
    );
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).expect("a golden file")
}

fn yaml(text: &str) -> Value {
    serde_yaml_ng::from_str(text).expect("a fixture")
}

#[test]
fn cluster_matches_the_reference() {
    let spoke = yaml(include_str!("testdata/cluster.v1beta1.yaml"));
    let hub = to_hub(spoke).expect("to hub");
    let mut ours = hub.clone();
    // Our hub keeps the v1beta1-only fields in an annotation the reference does not have.
    ours["metadata"].as_object_mut().map(|m| m.remove("annotations"));
    assert_same(
        &ours,
        &json(include_str!("testdata/golden/cluster.v1beta1-to-hub.json")),
    );
    let back = from_hub(
        json(include_str!("testdata/golden/cluster.v1beta1-to-hub.json")),
        "cluster.x-k8s.io/v1beta1",
        &crds(),
    )
    .expect("to spoke");
    assert_same(
        &back,
        &json(include_str!("testdata/golden/cluster.hub-to-v1beta1.json")),
    );
}

#[test]
fn cluster_class_matches_the_reference() {
    let spoke = yaml(include_str!("testdata/clusterclass.v1beta1.yaml"));
    let hub = to_hub(spoke).expect("to hub");
    assert_same(
        &hub,
        &json(include_str!("testdata/golden/clusterclass.v1beta1-to-hub.json")),
    );
    let back = from_hub(
        json(include_str!("testdata/golden/clusterclass.v1beta1-to-hub.json")),
        "cluster.x-k8s.io/v1beta1",
        &crds(),
    )
    .expect("to spoke");
    assert_same(
        &back,
        &json(include_str!("testdata/golden/clusterclass.hub-to-v1beta1.json")),
    );
}

#[test]
fn addons_and_runtime_kinds_match_the_reference() {
    let cases = [
        (
            include_str!("testdata/clusterresourceset.spoke.yaml"),
            include_str!("testdata/golden/clusterresourceset.spoke-to-hub.json"),
        ),
        (
            include_str!("testdata/clusterresourcesetbinding.spoke.yaml"),
            include_str!("testdata/golden/clusterresourcesetbinding.spoke-to-hub.json"),
        ),
        (
            include_str!("testdata/extensionconfig.spoke.yaml"),
            include_str!("testdata/golden/extensionconfig.spoke-to-hub.json"),
        ),
    ];
    for (spoke, golden) in cases {
        assert_same(&to_hub(yaml(spoke)).expect("to hub"), &json(golden));
    }
}

#[test]
fn machine_health_check_matches_the_reference() {
    let spoke = yaml(include_str!("testdata/machinehealthcheck.v1beta1.yaml"));
    let hub = to_hub(spoke).expect("to hub");
    let golden = json(include_str!(
        "testdata/golden/machinehealthcheck.v1beta1-to-hub.json"
    ));
    assert_same(&hub, &golden);
    let back = from_hub(golden, "cluster.x-k8s.io/v1beta1", &crds()).expect("to spoke");
    assert_same(
        &back,
        &json(include_str!(
            "testdata/golden/machinehealthcheck.hub-to-v1beta1.json"
        )),
    );
}

/// Both directions of one `cluster.x-k8s.io` kind against its goldens. `strip_hub` removes the
/// hub's annotations (our kept v1beta1 fields), `strip_spoke` the spoke's (our conversion-data
/// where the reference writes none).
fn machines_match_the_reference(
    spoke: &str,
    to_hub_golden: &str,
    to_spoke_golden: &str,
    strip_hub: bool,
    strip_spoke: bool,
) {
    let mut hub = to_hub(yaml(spoke)).expect("to hub");
    if strip_hub {
        hub["metadata"].as_object_mut().map(|m| m.remove("annotations"));
    }
    let golden = json(to_hub_golden);
    assert_same(&hub, &golden);
    let mut back = from_hub(golden, "cluster.x-k8s.io/v1beta1", &crds()).expect("to spoke");
    if strip_spoke {
        back["metadata"].as_object_mut().map(|m| m.remove("annotations"));
    }
    assert_same(&back, &json(to_spoke_golden));
}

#[test]
fn machine_deployment_matches_the_reference() {
    machines_match_the_reference(
        include_str!("testdata/machinedeployment.v1beta1.yaml"),
        include_str!("testdata/golden/machinedeployment.v1beta1-to-hub.json"),
        include_str!("testdata/golden/machinedeployment.hub-to-v1beta1.json"),
        true,
        false,
    );
}

#[test]
fn machine_set_matches_the_reference() {
    machines_match_the_reference(
        include_str!("testdata/machineset.v1beta1.yaml"),
        include_str!("testdata/golden/machineset.v1beta1-to-hub.json"),
        include_str!("testdata/golden/machineset.hub-to-v1beta1.json"),
        false,
        true,
    );
}

#[test]
fn machine_pool_matches_the_reference() {
    machines_match_the_reference(
        include_str!("testdata/machinepool.v1beta1.yaml"),
        include_str!("testdata/golden/machinepool.v1beta1-to-hub.json"),
        include_str!("testdata/golden/machinepool.hub-to-v1beta1.json"),
        false,
        false,
    );
}
