//! Structural defaulting: an absent (or null) property that has a default gets it, recursively;
//! a value that is present is never replaced, whatever it is (`""`, `0`, `false`, `[]`, `{}`).

use serde_json::Value;

use super::limits::MAX_DEPTH;
use super::schema::Schema;

/// Fills in the defaults the schema declares: `value` itself when it is null, then every absent
/// or null property, list item and map value below it, recursively (into defaults just set, too).
pub fn apply_defaults(schema: &Schema, value: &mut Value) {
    apply(schema, value, 0);
}

fn apply(schema: &Schema, value: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if value.is_null() {
        if let Some(default) = &schema.props.default {
            value.clone_from(default);
        }
    }
    match value {
        Value::Object(map) => {
            for (key, property) in &schema.properties {
                if property.props.default.is_some() && !map.contains_key(key) {
                    map.insert(key.clone(), Value::Null);
                }
            }
            for (key, child) in map.iter_mut() {
                if let Some(child_schema) = schema.properties.get(key).or(schema.additional.as_deref()) {
                    apply(child_schema, child, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for item in items {
                    apply(item_schema, item, depth + 1);
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
        apply_defaults(&Schema::compile(&props).unwrap(), &mut value);
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
