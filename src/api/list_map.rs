//! Merge keys of the lists server-side apply merges entry by entry (`x-kubernetes-list-type:
//! map`), declared on the same fields as Cluster API v1.14.0's CRDs declare them. Without them the
//! API server treats a list as one atomic value: two controllers applying their own conditions
//! would replace each other's, and a GitOps tool applying one MachineDeployment topology would
//! own the whole list. Used as `#[schemars(transform = ...)]` on a list field.

use schemars::Schema;
use serde_json::{json, Value};

/// Marks the list schema `schema` as a list map keyed by `keys`, and the keys as required in its
/// items (the API server refuses a list-map key an item may lack; Cluster API's types require
/// them too).
fn list_map(schema: &mut Schema, keys: &[&str]) {
    schema.insert("x-kubernetes-list-type".to_owned(), json!("map"));
    schema.insert("x-kubernetes-list-map-keys".to_owned(), json!(keys));
    let Some(items) = schema.get_mut("items").and_then(Value::as_object_mut) else {
        return;
    };
    let required = items.entry("required").or_insert_with(|| json!([]));
    if let Some(required) = required.as_array_mut() {
        for key in keys {
            if !required.iter().any(|name| name == key) {
                required.push(json!(key));
            }
        }
        required.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    }
}

/// Conditions, keyed by `type`.
pub(crate) fn by_type(schema: &mut Schema) {
    list_map(schema, &["type"]);
}

/// Variables, topologies, failure domains and handlers, keyed by `name`.
pub(crate) fn by_name(schema: &mut Schema) {
    list_map(schema, &["name"]);
}

/// Worker classes, keyed by `class`.
pub(crate) fn by_class(schema: &mut Schema) {
    list_map(schema, &["class"]);
}

/// Readiness and availability gates, keyed by `conditionType`.
pub(crate) fn by_condition_type(schema: &mut Schema) {
    list_map(schema, &["conditionType"]);
}

/// Taints, keyed by `key` and `effect` (as Kubernetes keys a Node's).
pub(crate) fn by_key_and_effect(schema: &mut Schema) {
    list_map(schema, &["key", "effect"]);
}

/// Version counts, keyed by `version`.
pub(crate) fn by_version(schema: &mut Schema) {
    list_map(schema, &["version"]);
}

/// CEL rules, keyed by `rule`.
pub(crate) fn by_rule(schema: &mut Schema) {
    list_map(schema, &["rule"]);
}
