//! Structural defaulting: an absent (or null) property that has a default gets it, recursively;
//! a value that is present is never replaced, whatever it is (`""`, `0`, `false`, `[]`, `{}`).
//! The defaulting can record the JSONPatch operations of what it sets, so the mutating webhook
//! answers without serialising the object twice and diffing.

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, ReplaceOperation};
use serde_json::Value;

use super::limits::MAX_DEPTH;
use super::schema::Schema;

/// The JSONPatch operations of a defaulting, as `json_patch::diff` of the value before and after
/// would give them: `pointer` is where the list or value being defaulted sits in the whole object.
#[derive(Debug, Default)]
pub struct DefaultsPatch {
    /// The JSON pointer the recorded places are below.
    pub pointer: PointerBuf,
    /// The operations so far, in the diff's order.
    pub operations: Vec<PatchOperation>,
}

impl DefaultsPatch {
    /// Records that the value at `at` was absent and is now `value`.
    pub fn add(&mut self, at: &Below<'_>, value: Value) {
        let path = at.pointer(&self.pointer);
        self.operations
            .push(PatchOperation::Add(AddOperation { path, value }));
    }

    fn replace(&mut self, at: &Below<'_>, value: Value) {
        let path = at.pointer(&self.pointer);
        self.operations
            .push(PatchOperation::Replace(ReplaceOperation { path, value }));
    }
}

/// Where a value sits below a [`DefaultsPatch`]'s pointer. The walk passes it down by reference
/// and the JSON pointer is written only when an operation is recorded: defaulting that sets
/// nothing builds no pointer.
#[derive(Debug, Clone, Copy)]
pub enum Below<'p> {
    /// At the patch's pointer itself.
    Here,
    /// An object member of the parent.
    Key(&'p Below<'p>, &'p str),
    /// A list item of the parent.
    Index(&'p Below<'p>, usize),
}

impl Below<'_> {
    /// `base` followed by this place's tokens (as deep as the walk: its depth is bounded).
    fn pointer(&self, base: &PointerBuf) -> PointerBuf {
        match self {
            Below::Here => base.clone(),
            Below::Key(parent, key) => {
                let mut pointer = parent.pointer(base);
                pointer.push_back(*key);
                pointer
            }
            Below::Index(parent, index) => {
                let mut pointer = parent.pointer(base);
                pointer.push_back(*index);
                pointer
            }
        }
    }
}

/// Fills in the defaults the schema declares: `value` itself when it is null, then every absent
/// or null property, list item and map value below it, recursively (into defaults just set, too).
/// With `patch`, what is set is recorded there, `value` being at `at` below `patch.pointer`.
pub fn apply_defaults(schema: &Schema, value: &mut Value, patch: Option<&mut DefaultsPatch>, at: &Below<'_>) {
    apply(schema, value, 0, patch, at);
}

fn apply(
    schema: &Schema,
    value: &mut Value,
    depth: usize,
    patch: Option<&mut DefaultsPatch>,
    at: &Below<'_>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    if let (true, Some(default)) = (value.is_null(), &schema.props.default) {
        value.clone_from(default);
        fill(schema, value, depth, None, at);
        // A diff sees one replaced value, whatever was filled in below it.
        if let Some(patch) = patch.filter(|_| !value.is_null()) {
            patch.replace(at, value.clone());
        }
        return;
    }
    fill(schema, value, depth, patch, at);
}

/// Defaults what is below `value`: its present children first, in their order, then its absent
/// properties that have a default, in the schema's order (where the object keeps them).
fn fill(
    schema: &Schema,
    value: &mut Value,
    depth: usize,
    mut patch: Option<&mut DefaultsPatch>,
    at: &Below<'_>,
) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if let Some(child_schema) = schema.properties.get(key).or(schema.additional.as_deref()) {
                    let below = Below::Key(at, key);
                    apply(child_schema, child, depth + 1, patch.as_deref_mut(), &below);
                }
            }
            for (key, property) in &schema.properties {
                if property.props.default.is_none() || map.contains_key(key) {
                    continue;
                }
                let mut child = Value::Null;
                apply(property, &mut child, depth + 1, None, &Below::Here);
                if let Some(patch) = patch.as_deref_mut() {
                    patch.add(&Below::Key(at, key), child.clone());
                }
                map.insert(key.clone(), child);
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for (index, item) in items.iter_mut().enumerate() {
                    let below = Below::Index(at, index);
                    apply(item_schema, item, depth + 1, patch.as_deref_mut(), &below);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::JSONSchemaProps;
    use serde_json::json;

    fn defaulted(schema: &str, mut value: Value) -> Value {
        let props: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
        apply_defaults(&Schema::compile(&props).unwrap(), &mut value, None, &Below::Here);
        value
    }

    const SCHEMA: &str = "{type: object, properties: {a: {type: string, default: x}, b: {type: object, default: {}, \
                          properties: {c: {type: integer, default: 3}}}, list: {type: array, items: {type: object, \
                          properties: {port: {type: integer, default: 443}}}}, m: {type: object, \
                          additionalProperties: {type: object, properties: {on: {type: boolean, default: true}}}}}}";

    #[test]
    fn fills_absent_and_null_fields_recursively() {
        assert_eq!(
            defaulted(
                SCHEMA,
                json!({"b": null, "list": [{}, {"port": 80}], "m": {"k": {}}})
            ),
            json!({"b": {"c": 3}, "list": [{"port": 443}, {"port": 80}], "m": {"k": {"on": true}}, "a": "x"})
        );
    }

    /// The recorded operations are what a diff of the value before and after gives.
    #[test]
    fn records_the_operations_a_diff_gives() {
        let schema = Schema::compile(&serde_yaml_ng::from_str(SCHEMA).unwrap()).unwrap();
        for before in [
            json!({"b": null, "list": [{}, {"port": 80}, null], "m": {"k": {}, "j": null}}),
            json!({"a": "", "b": {"c": 0}, "list": [], "m": {}}),
            json!({"b": {}, "list": "not a list", "m": {"k/~": {"on": null}}}),
            json!(null),
            json!({}),
        ] {
            let mut patch = DefaultsPatch {
                pointer: PointerBuf::from_tokens(["spec", "value"]),
                ..DefaultsPatch::default()
            };
            let mut after = before.clone();
            apply_defaults(&schema, &mut after, Some(&mut patch), &Below::Here);
            let diffed = json_patch::diff(
                &json!({"spec": {"value": before}}),
                &json!({"spec": {"value": after}}),
            );
            assert_eq!(patch.operations, diffed.0, "{before}");
        }
    }

    #[test]
    fn never_replaces_present_values() {
        let value = json!({"a": "", "b": {"c": 0}, "list": [], "m": {}});
        assert_eq!(defaulted(SCHEMA, value.clone()), value);
    }

    #[test]
    fn null_values_items_and_map_entries_get_their_default() {
        let schema = "{type: object, default: {}, properties: {list: {type: array, items: {type: string, default: d}}, \
                      m: {type: object, additionalProperties: {type: integer, default: 7}}}}";
        assert_eq!(defaulted(schema, Value::Null), json!({}));
        assert_eq!(
            defaulted(schema, json!({"list": ["a", null], "m": {"x": null, "y": 1}})),
            json!({"list": ["a", "d"], "m": {"x": 7, "y": 1}})
        );
        assert_eq!(defaulted("{type: string}", Value::Null), Value::Null);
    }
}
