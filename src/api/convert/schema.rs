//! ClusterClass variables: `metadata` ↔ `deprecatedV1Beta1Metadata`, `required` (a v1beta1
//! `bool` written always ↔ `*bool`), and the booleans of an openAPIV3Schema (`uniqueItems`,
//! `exclusiveMinimum`/`Maximum`, `x-kubernetes-preserve-unknown-fields`,
//! `x-kubernetes-int-or-string`), whose `false` survives only through the conversion-data
//! (`restoreBoolIntentJSONSchemaProps`).

use serde_json::Value;

use super::status::restore_bool;
use super::value::{is_empty, Obj};

const BOOLS: [&str; 5] = [
    "uniqueItems",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
];

/// A v1beta1 variable (or status definition) → v1beta2, `restored` its hub twin if known.
pub(super) fn variable_to_hub(variable: &mut Obj, restored: Option<&Value>) {
    if let Some(metadata) = variable.remove("metadata").filter(|m| !is_empty(m)) {
        variable.insert("deprecatedV1Beta1Metadata".into(), metadata);
    }
    let required = variable.get("required").and_then(Value::as_bool).unwrap_or(false);
    variable.insert("required".into(), Value::Bool(required));
    let restored_schema = restored.and_then(|r| r.pointer("/schema/openAPIV3Schema"));
    if let Some(schema) = variable
        .get_mut("schema")
        .and_then(|s| s.get_mut("openAPIV3Schema"))
    {
        schema_to_hub(schema, restored_schema);
    }
}

/// A v1beta2 variable (or status definition) → v1beta1.
pub(super) fn variable_from_hub(variable: &mut Obj) {
    if let Some(metadata) = variable.remove("deprecatedV1Beta1Metadata") {
        variable.insert("metadata".into(), metadata);
    }
    let required = variable.get("required").and_then(Value::as_bool).unwrap_or(false);
    variable.insert("required".into(), Value::Bool(required));
    if let Some(schema) = variable
        .get_mut("schema")
        .and_then(|s| s.get_mut("openAPIV3Schema"))
    {
        schema_from_hub(schema);
    }
}

/// Calls `f` on each nested schema of `schema`, with the same place in `restored`.
fn nested<'a>(
    schema: &mut Obj,
    restored: Option<&'a Value>,
    mut f: impl FnMut(&mut Value, Option<&'a Value>),
) {
    let sub = |key: &str| restored.and_then(|r| r.get(key));
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            f(property, sub("properties").and_then(|p| p.get(name)));
        }
    }
    for key in ["additionalProperties", "items", "not"] {
        if let Some(inner) = schema.get_mut(key).filter(|v| v.is_object()) {
            f(inner, sub(key));
        }
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(Value::Array(items)) = schema.get_mut(key) {
            let same_length = sub(key).and_then(Value::as_array).map(Vec::len) == Some(items.len());
            for (i, item) in items.iter_mut().enumerate() {
                f(item, sub(key).filter(|_| same_length).and_then(|r| r.get(i)));
            }
        }
    }
}

fn schema_to_hub(schema: &mut Value, restored: Option<&Value>) {
    let Some(schema) = schema.as_object_mut() else {
        return;
    };
    for key in BOOLS {
        restore_bool(schema, key, restored.and_then(|r| r.get(key)));
    }
    nested(schema, restored, schema_to_hub);
}

fn schema_from_hub(schema: &mut Value) {
    let Some(schema) = schema.as_object_mut() else {
        return;
    };
    for key in BOOLS {
        if schema.get(key) == Some(&Value::Bool(false)) {
            schema.remove(key);
        }
    }
    nested(schema, None, |inner, _| schema_from_hub(inner));
}
