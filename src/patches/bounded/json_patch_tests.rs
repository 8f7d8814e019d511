use serde_json::json;

use super::*;
use crate::patches::bounded::{MAX_OBJECT_BYTES, WORK_BUDGET};

fn patch(doc: &mut Value, operations: Value) -> Result<(), String> {
    apply_json_patch(
        doc,
        &serde_json::to_vec(&operations).unwrap(),
        &mut Budget::default(),
    )
}

#[test]
fn the_six_operations_apply_as_cluster_api_applies_them() {
    let mut doc = json!({"a": [1, 2, 3], "o": {"k": "v"}});
    patch(
        &mut doc,
        json!([
            {"op": "add", "path": "/a/-", "value": 4},
            {"op": "add", "path": "/a/-1", "value": 5},
            {"op": "remove", "path": "/a/-2"},
            {"op": "replace", "path": "/o/k", "value": null},
            {"op": "copy", "from": "/o", "path": "/c"},
            {"op": "move", "from": "/a/0", "path": "/o/first"},
            {"op": "test", "path": "/c", "value": {"k": null}},
        ]),
    )
    .unwrap();
    assert_eq!(
        doc,
        json!({"a": [2, 3, 5], "o": {"k": null, "first": 1}, "c": {"k": null}})
    );
    for (operations, why) in [
        (
            json!([{"op": "test", "path": "/a/0", "value": 9}]),
            "testing value failed",
        ),
        (
            json!([{"op": "replace", "path": "/x", "value": 1}]),
            "doc is missing path at \"x\"",
        ),
        (
            json!([{"op": "add", "path": "/a/9", "value": 1}]),
            "unable to access invalid index: 9",
        ),
        (
            json!([{"op": "remove", "path": ""}]),
            "the whole document cannot be removed",
        ),
        (json!([{"op": "add", "path": "/a/0"}]), "missing value"),
        (json!([{"op": "move", "path": "/a/0"}]), "missing from"),
        (
            json!([{"op": "move", "from": "/o", "path": "/o/inner"}]),
            "doc is missing path at \"o\"",
        ),
        (
            json!([{"op": "merge", "path": "/a"}]),
            "unexpected kind \"merge\"",
        ),
    ] {
        let err = patch(&mut doc.clone(), operations.clone()).unwrap_err();
        assert!(err.contains(why), "{operations}: {err}");
    }
}

#[test]
fn the_kept_size_is_the_serialised_size() {
    let mut doc = json!({"spec": {"template": {"spec": {"list": []}}}});
    let size = measure(&doc, &mut Budget::default()).unwrap();
    let mut budget = Budget::default();
    let mut document = Document {
        root: &mut doc,
        size,
        budget: &mut budget,
    };
    let operations: JsonPatch = serde_json::from_value(json!([
        {"op": "add", "path": "/spec/template/spec/list/0", "value": "a\"b"},
        {"op": "add", "path": "/spec/template/spec/list/0", "value": {"x": [1, 2]}},
        {"op": "add", "path": "/spec/template/spec/k~1e\"y", "value": 1.5},
        {"op": "replace", "path": "/spec/template/spec/list/1", "value": []},
        {"op": "copy", "from": "/spec/template/spec/list", "path": "/spec/copied"},
        {"op": "remove", "path": "/spec/template/spec/list/0"},
        {"op": "move", "from": "/spec/copied", "path": "/spec/template/moved"},
        {"op": "remove", "path": "/spec/template/spec/list/0"},
    ]))
    .unwrap();
    for operation in operations.0 {
        document.apply(operation).unwrap();
        let expected = serde_json::to_string(&*document.root).unwrap().len();
        assert_eq!(document.size.bytes, expected, "{}", document.root);
        let values = measure(document.root, &mut Budget::default()).unwrap().values;
        assert_eq!(document.size.values, values);
    }
}

/// Issue 26: each copy doubles the object; it is refused at a bound, long before memory runs
/// out, naming the operation and the bound: the values of small elements, the bytes of large ones.
#[test]
fn a_doubling_copy_is_refused_at_a_bound() {
    for (element, at, bound) in [
        (json!(0), 18, format!("more than {MAX_VALUES} values")),
        (
            json!("x".repeat(1000)),
            10,
            format!("over the {MAX_OBJECT_BYTES} bytes the API server stores"),
        ),
    ] {
        let mut operations = vec![json!({"op": "add", "path": "/spec/a", "value": [element, element]})];
        operations.extend((0..30).map(|_| json!({"op": "copy", "from": "/spec/a", "path": "/spec/a/0"})));
        let mut doc = json!({"spec": {}});
        let err = patch(&mut doc, Value::Array(operations)).unwrap_err();
        assert!(
            err.starts_with(&format!("operation {at} (copy /spec/a/0): ")),
            "{err}"
        );
        assert!(err.ends_with(&bound), "{err}");
    }
}

/// Issue 26: inserting at the front of a growing array shifts it every time; the shifts are paid
/// for, so the quadratic answer runs out of budget.
#[test]
fn inserting_at_the_front_runs_out_of_budget() {
    let operations: Vec<Value> = (0..MAX_OPERATIONS)
        .map(|_| json!({"op": "add", "path": "/a/0", "value": 0}))
        .collect();
    let mut doc = json!({"a": []});
    let err = patch(&mut doc, Value::Array(operations)).unwrap_err();
    assert!(err.contains(&format!("work budget of {WORK_BUDGET}")), "{err}");
}

#[test]
fn operations_values_and_depth_are_bounded() {
    let operations = vec![json!({"op": "test", "path": "", "value": 0}); MAX_OPERATIONS + 1];
    let err = JsonPatch::decode(&serde_json::to_vec(&operations).unwrap()).unwrap_err();
    assert!(
        err.starts_with("more than 10000 operations in one patch"),
        "{err}"
    );
    let values = format!(
        r#"[{{"op": "add", "path": "/a", "value": [{}0]}}]"#,
        "0,".repeat(MAX_VALUES)
    );
    assert_eq!(
        JsonPatch::decode(values.as_bytes()).unwrap_err(),
        "the patch has more than 524288 values"
    );
    let quoted = JsonPatch::decode(format!(r#"["{}"]"#, "x".repeat(1 << 20)).as_bytes()).unwrap_err();
    assert!(
        quoted.len() < 5000 && quoted.ends_with("more bytes)"),
        "{}",
        quoted.len()
    );
    let deep = "/a".repeat(MAX_DEPTH);
    let mut nested = json!({});
    for _ in 0..MAX_DEPTH - 1 {
        nested = json!({"a": nested});
    }
    let mut doc = nested.clone();
    patch(
        &mut doc,
        json!([{"op": "add", "path": &deep[..deep.len() - 2], "value": 1}]),
    )
    .unwrap();
    let err = patch(&mut nested, json!([{"op": "add", "path": deep, "value": {}}])).unwrap_err();
    assert!(err.ends_with("nesting deeper than 100"), "{err}");
}
