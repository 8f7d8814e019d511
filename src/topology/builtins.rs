//! The variables a patch sees: the Cluster's values (with per-scope overrides) plus `builtin`.

use serde_json::{json, Map, Value};

use crate::api::labels::VARIABLE_DEFINITION_FROM_INLINE;
use crate::api::ClusterVariable;

/// Variables by name from the Cluster's values, then `overrides` on top; only values meant for
/// inline patches (`definitionFrom` empty or `inline`) are kept.
pub fn variables(
    values: &[ClusterVariable],
    overrides: &[ClusterVariable],
    builtin: Value,
) -> Map<String, Value> {
    let mut out = Map::new();
    for value in values.iter().chain(overrides) {
        if value.definition_from.is_empty() || value.definition_from == VARIABLE_DEFINITION_FROM_INLINE {
            out.insert(value.name.clone(), value.value.clone());
        }
    }
    out.insert("builtin".to_owned(), builtin);
    out
}

/// Merges `extra` object keys into `base` recursively (used to add scope-specific builtins).
pub fn merge(base: &Value, extra: Value) -> Value {
    match (base, extra) {
        (Value::Object(left), Value::Object(right)) => {
            let mut out = left.clone();
            for (key, value) in right {
                let merged = match out.get(&key) {
                    Some(existing) => merge(existing, value),
                    None => value,
                };
                out.insert(key, merged);
            }
            Value::Object(out)
        }
        (_, extra) => extra,
    }
}

/// The `builtin.cluster` block.
pub fn cluster(
    name: &str,
    namespace: &str,
    class: &str,
    class_namespace: &str,
    version: &str,
    network: Option<Value>,
) -> Value {
    let mut cluster = json!({
        "name": name,
        "namespace": namespace,
        "topology": {"version": version, "class": class, "classNamespace": class_namespace},
    });
    if let (Some(network), Some(map)) = (network, cluster.as_object_mut()) {
        map.insert("network".to_owned(), network);
    }
    json!({ "cluster": cluster })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_win_and_external_values_are_skipped() {
        let values: Vec<ClusterVariable> = serde_yaml_ng::from_str(
            "[{name: a, value: 1}, {name: b, value: 2, definitionFrom: ext}, {name: c, value: 3, definitionFrom: inline}]",
        )
        .unwrap();
        let overrides: Vec<ClusterVariable> = serde_yaml_ng::from_str("[{name: a, value: 9}]").unwrap();
        let vars = variables(&values, &overrides, json!({}));
        assert_eq!(Value::Object(vars), json!({"a": 9, "c": 3, "builtin": {}}));
    }

    #[test]
    fn merge_is_deep() {
        let merged = merge(
            &json!({"cluster": {"name": "c"}}),
            json!({"cluster": {"x": 1}, "cp": 2}),
        );
        assert_eq!(merged, json!({"cluster": {"name": "c", "x": 1}, "cp": 2}));
    }
}
