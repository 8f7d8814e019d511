//! The JSON form of a schema that kube-cel compiles rules from, without its `default`s: the
//! API server (and Cluster API with it) runs rules on the value as it is, never with a schema's
//! defaults filled in (a default `{}` whose rule reads a key that a nested default would add
//! fails there), so the compiled tree our evaluator walks holds no default to fill in.

use serde_json::Value;

use crate::api::JSONSchemaProps;

/// `schema` as JSON, every `default` of every schema node removed (a property named `default`
/// stays). Walks with a stack: any depth is safe.
pub fn without_defaults(schema: &JSONSchemaProps) -> Result<Value, serde_json::Error> {
    let mut json = serde_json::to_value(schema)?;
    let mut pending = vec![&mut json];
    while let Some(node) = pending.pop() {
        let Value::Object(node) = node else { continue };
        node.remove("default");
        for (keyword, child) in node.iter_mut() {
            match (keyword.as_str(), child) {
                ("properties", Value::Object(properties)) => pending.extend(properties.values_mut()),
                ("allOf" | "anyOf" | "oneOf", Value::Array(schemas)) => pending.extend(schemas.iter_mut()),
                ("additionalProperties" | "items" | "not", child) => pending.push(child),
                _ => {}
            }
        }
    }
    Ok(json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_go_at_every_level_and_properties_named_default_stay() {
        let schema: JSONSchemaProps = serde_json::from_value(json!({
            "type": "object", "default": {},
            "properties": {
                "default": {"type": "string", "default": "x"},
                "list": {"type": "array", "items": {"type": "integer", "default": 1}},
                "map": {"type": "object", "additionalProperties": {"type": "string", "default": "y"}}
            },
            "allOf": [{"properties": {"default": {"default": "z"}}}]
        }))
        .unwrap();
        let json = without_defaults(&schema).unwrap();
        assert!(!json.to_string().contains("\"default\":\""), "{json}");
        assert!(json.get("default").is_none());
        assert_eq!(json["properties"]["default"]["type"], "string");
        assert!(json["properties"]["list"]["items"].get("default").is_none());
    }
}
