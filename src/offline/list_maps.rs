//! The API server's list-map check, for our kinds: in a list its schema declares
//! `x-kubernetes-list-type: map`, an item whose keys repeat an earlier item's is refused
//! (`spec.topology.workers.machineDeployments[1]: Duplicate value: {"name":"md-0"}`). The API
//! server checks it with the schema, after the mutating webhooks and before the validating ones;
//! defaulting never adds an item with a key already present, so the object as written is checked.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::api::crd::custom_resource_definitions;
use crate::api::rollout_crd::rollout_custom_resource_definitions;
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::store::group_of as api_group;

/// Deepest nesting followed; our CRDs nest far less, and an object deeper than its schema is
/// not followed past the schema anyway.
const MAX_DEPTH: usize = 64;

/// The `openAPIV3Schema` of each version of our kinds (Cluster API's and our rollout group's), by `(group, version, kind)`, generated once
/// (strict field validation reads them too).
pub(super) fn our_schemas() -> &'static HashMap<(String, String, String), Value> {
    static SCHEMAS: OnceLock<HashMap<(String, String, String), Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let mut schemas = HashMap::new();
        let cluster_api = custom_resource_definitions().unwrap_or_default();
        for crd in cluster_api
            .into_iter()
            .chain(rollout_custom_resource_definitions())
        {
            for version in &crd.spec.versions {
                let Some(schema) = version
                    .schema
                    .as_ref()
                    .and_then(|s| s.open_api_v3_schema.as_ref())
                    .and_then(|s| serde_json::to_value(s).ok())
                else {
                    continue;
                };
                let key = (
                    crd.spec.group.clone(),
                    version.name.clone(),
                    crd.spec.names.kind.clone(),
                );
                schemas.insert(key, schema);
            }
        }
        schemas
    })
}

/// The duplicate list-map keys in `object`, one error per repeating item (none for a kind or
/// version that is not ours).
pub fn duplicate_keys(object: &Value) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let key = (
        api_group(api_version).to_owned(),
        api_version.rsplit('/').next().unwrap_or_default().to_owned(),
        object["kind"].as_str().unwrap_or_default().to_owned(),
    );
    if let Some(schema) = our_schemas().get(&key) {
        walk(schema, object, &FieldPath::root(), 0, &mut errors);
    }
    errors
}

/// Checks `value` against `schema` at `path`, then what lies below.
fn walk(schema: &Value, value: &Value, path: &FieldPath, depth: usize, errors: &mut FieldErrors) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(fields) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (name, child) in fields {
                if let Some(child_schema) = properties.get(name) {
                    walk(child_schema, child, &path.child(name), depth + 1, errors);
                }
            }
        }
        Value::Array(items) => {
            if schema.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map") {
                duplicates(schema, items, path, errors);
            }
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    walk(item_schema, item, &path.index(index), depth + 1, errors);
                }
            }
        }
        _ => {}
    }
}

/// One `Duplicate value` per item of the list map `items` whose keys an earlier item has.
fn duplicates(schema: &Value, items: &[Value], path: &FieldPath, errors: &mut FieldErrors) {
    let mut names: Vec<&str> = schema
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    names.sort_unstable();
    let mut seen = HashSet::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let Some(fields) = item.as_object() else {
            continue;
        };
        let keys: Map<String, Value> = names
            .iter()
            .filter_map(|name| fields.get(*name).map(|v| ((*name).to_owned(), v.clone())))
            .collect();
        // The key's text identifies it: two items with equal key values render alike.
        if !seen.insert(Value::Object(keys.clone()).to_string()) {
            errors.push(FieldError::duplicate(&path.index(index), Value::Object(keys)));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cluster(version: &str, spec: Value) -> Value {
        json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "Cluster",
               "metadata": {"name": "c1", "namespace": "ns"}, "spec": spec})
    }

    #[test]
    fn a_repeated_topology_name_is_a_duplicate_at_its_index() {
        let object = cluster(
            "v1beta2",
            json!({"topology": {"workers": {"machineDeployments": [
                {"name": "md-0", "class": "a"}, {"name": "md-1", "class": "a"},
                {"name": "md-0", "class": "b"}]}}}),
        );
        let errors = duplicate_keys(&object);
        assert_eq!(
            errors.to_string(),
            r#"spec.topology.workers.machineDeployments[2]: Duplicate value: {"name":"md-0"}"#
        );
    }

    #[test]
    fn taints_are_keyed_by_key_and_effect_together() {
        let taints = json!([
            {"key": "a", "effect": "NoSchedule", "propagation": "Always"},
            {"key": "a", "effect": "NoExecute", "propagation": "Always"},
            {"key": "a", "effect": "NoSchedule", "propagation": "OnInitialization"}]);
        let object = cluster(
            "v1beta2",
            json!({"topology": {"controlPlane": {"taints": taints}}}),
        );
        assert_eq!(
            duplicate_keys(&object).to_string(),
            r#"spec.topology.controlPlane.taints[2]: Duplicate value: {"effect":"NoSchedule","key":"a"}"#
        );
    }

    #[test]
    fn v1beta1_variable_values_may_repeat_a_name_as_seed_003_allows() {
        let variables = json!([{"name": "proxy", "value": 1, "definitionFrom": "a"},
                               {"name": "proxy", "value": 2, "definitionFrom": "b"}]);
        let v1beta1 = cluster("v1beta1", json!({"topology": {"variables": variables}}));
        assert!(duplicate_keys(&v1beta1).is_empty());
        let v1beta2 = cluster("v1beta2", json!({"topology": {"variables": variables}}));
        assert_eq!(duplicate_keys(&v1beta2).len(), 1);
    }

    #[test]
    fn other_kinds_and_unique_keys_pass() {
        let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}});
        assert!(duplicate_keys(&config_map).is_empty());
        let object = cluster(
            "v1beta2",
            json!({"topology": {"workers": {"machineDeployments": [{"name": "a"}, {"name": "b"}]}}}),
        );
        assert!(duplicate_keys(&object).is_empty());
    }
}
