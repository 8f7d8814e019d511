//! The JSONPatch from an object's typed serialisation before defaulting to the one after:
//! `json_patch::diff`'s algorithm and output, with each object key matched against the other
//! side's key at the same position first. Both sides come from the same typed serialisation, so
//! their keys are in the same order and the hashed lookup is only needed when they are not.

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation, RemoveOperation, ReplaceOperation};
use serde_json::{Map, Value};

/// The operations that turn `left` into `right`: the same, in the same order, as
/// `json_patch::diff(left, right)`.
pub fn diff(left: &Value, right: &Value) -> Patch {
    let mut patch = Patch(Vec::new());
    diff_at(left, right, &mut PointerBuf::new(), &mut patch);
    patch
}

fn diff_at(left: &Value, right: &Value, pointer: &mut PointerBuf, patch: &mut Patch) {
    match (left, right) {
        (Value::Object(left), Value::Object(right)) => diff_object(left, right, pointer, patch),
        (Value::Array(left), Value::Array(right)) => diff_array(left, right, pointer, patch),
        _ if left == right => {}
        _ => patch.0.push(PatchOperation::Replace(ReplaceOperation {
            path: pointer.clone(),
            value: right.clone(),
        })),
    }
}

fn diff_array(left: &[Value], right: &[Value], pointer: &mut PointerBuf, patch: &mut Patch) {
    let mut removed = 0;
    for index in 0..left.len().max(right.len()) {
        pointer.push_back(index - removed);
        match (left.get(index), right.get(index)) {
            (Some(left), Some(right)) => diff_at(left, right, pointer, patch),
            (Some(_), None) => {
                removed += 1;
                patch.0.push(PatchOperation::Remove(RemoveOperation {
                    path: pointer.clone(),
                }));
            }
            (None, Some(right)) => patch.0.push(PatchOperation::Add(AddOperation {
                path: pointer.clone(),
                value: right.clone(),
            })),
            (None, None) => {}
        }
        pointer.pop_back();
    }
}

fn diff_object(
    left: &Map<String, Value>,
    right: &Map<String, Value>,
    pointer: &mut PointerBuf,
    patch: &mut Patch,
) {
    let mut in_order = left.iter();
    for (key, right_value) in right {
        pointer.push_back(key);
        match same_key_or_lookup(&mut in_order, left, key) {
            Some(left_value) => diff_at(left_value, right_value, pointer, patch),
            None => patch.0.push(PatchOperation::Add(AddOperation {
                path: pointer.clone(),
                value: right_value.clone(),
            })),
        }
        pointer.pop_back();
    }
    let mut in_order = right.iter();
    for key in left.keys() {
        if same_key_or_lookup(&mut in_order, right, key).is_none() {
            pointer.push_back(key);
            patch.0.push(PatchOperation::Remove(RemoveOperation {
                path: pointer.clone(),
            }));
            pointer.pop_back();
        }
    }
}

/// The value of `key` in `map`: the next entry of `in_order` (an iterator over `map`) when it has
/// that key, else the map's own lookup.
fn same_key_or_lookup<'a>(
    in_order: &mut serde_json::map::Iter<'a>,
    map: &'a Map<String, Value>,
    key: &str,
) -> Option<&'a Value> {
    match in_order.next() {
        Some((next, value)) if next == key => Some(value),
        _ => map.get(key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_operations_as_json_patch_diff() {
        let pairs = [
            (
                json!({"a": 1, "b": {"c": [1, 2, 3]}}),
                json!({"a": 1, "b": {"c": [1, 5]}, "d": "x"}),
            ),
            (json!({"a": 1, "b": 2, "c": 3}), json!({"c": 3, "a": 2})),
            (
                json!({"x": [{"n": 1}], "y": null}),
                json!({"y": {"z": true}, "x": [{"n": 1, "m": 2}, {}]}),
            ),
            (json!([1, {"a": "b"}]), json!({"a": [1]})),
            (json!({"a/b": {"~": 1}}), json!({"a/b": {"~": 2}, "": 0})),
        ];
        for (left, right) in pairs {
            assert_eq!(
                diff(&left, &right),
                json_patch::diff(&left, &right),
                "{left} -> {right}"
            );
        }
    }
}
