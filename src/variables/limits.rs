//! Size limits on a variable's schema, checked before the schema is compiled or any value is
//! validated against it, so that no definition can make admission slow or large. The API server
//! bounds these only through its 3 MiB request size; we keep tighter, documented bounds that no
//! real ClusterClass comes near (the largest in our real-world corpus has 14 variables, enums of
//! a few dozen values and schemas five levels deep).

use crate::api::JSONSchemaProps;
use crate::field::{FieldError, FieldErrors, FieldPath};

/// Deepest schema (and value) nesting accepted.
pub const MAX_DEPTH: usize = 64;

/// Most values one `enum` may list.
pub const MAX_ENUM_VALUES: usize = 2_000;
/// Longest `pattern`, in bytes.
pub const MAX_PATTERN_BYTES: usize = 4_096;
/// Most `properties` one object schema may declare.
pub const MAX_PROPERTIES: usize = 1_000;
/// Most schema nodes (the root, every property, item, additionalProperties, allOf, anyOf, oneOf
/// and not branch) in one variable's schema.
pub const MAX_SCHEMA_NODES: usize = 10_000;
/// Most variables one ClusterClass may define, and one variable list of a Cluster may set.
pub const MAX_VARIABLES: usize = 1_000;

/// Every limit `schema` breaks, at the path of the offending keyword. The walk is iterative and
/// stops descending below [`MAX_DEPTH`] and after [`MAX_SCHEMA_NODES`] nodes.
pub fn schema_limit_errors(schema: &JSONSchemaProps, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let mut pending = vec![(schema, path.clone(), 0_usize)];
    let mut nodes = 0_usize;
    while let Some((node, node_path, depth)) = pending.pop() {
        nodes += 1;
        if nodes > MAX_SCHEMA_NODES {
            errors.push(FieldError::forbidden(
                path,
                format!("a variable schema may not have more than {MAX_SCHEMA_NODES} nodes"),
            ));
            break;
        }
        if depth > MAX_DEPTH {
            errors.push(FieldError::forbidden(
                &node_path,
                format!("schemas may not be nested deeper than {MAX_DEPTH} levels"),
            ));
            continue;
        }
        if node.r#enum.len() > MAX_ENUM_VALUES {
            errors.push(FieldError::too_many(
                &node_path.child("enum"),
                node.r#enum.len(),
                MAX_ENUM_VALUES,
            ));
        }
        if node.pattern.len() > MAX_PATTERN_BYTES {
            errors.push(FieldError::too_long(
                &node_path.child("pattern"),
                MAX_PATTERN_BYTES,
            ));
        }
        if node.properties.len() > MAX_PROPERTIES {
            errors.push(FieldError::too_many(
                &node_path.child("properties"),
                node.properties.len(),
                MAX_PROPERTIES,
            ));
        }
        let mut next = Vec::new();
        for (name, child) in &node.properties {
            next.push((child, node_path.child("properties").key(name), depth + 1));
        }
        for (keyword, child) in [
            ("additionalProperties", node.additional_properties.as_deref()),
            ("items", node.items.as_deref()),
            ("not", node.not.as_deref()),
        ] {
            if let Some(child) = child {
                next.push((child, node_path.child(keyword), depth + 1));
            }
        }
        for (keyword, branches) in [
            ("allOf", &node.all_of),
            ("anyOf", &node.any_of),
            ("oneOf", &node.one_of),
        ] {
            for (i, child) in branches.iter().enumerate() {
                next.push((child, node_path.child(keyword).index(i), depth + 1));
            }
        }
        // Reversed, so that errors come out in document order.
        pending.extend(next.into_iter().rev());
    }
    errors
}

/// The error for a variable list longer than [`MAX_VARIABLES`], if it is.
pub fn variable_count_error(count: usize, path: &FieldPath) -> Option<FieldError> {
    (count > MAX_VARIABLES).then(|| FieldError::too_many(path, count, MAX_VARIABLES))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: serde_json::Value) -> Vec<String> {
        let props: JSONSchemaProps = serde_json::from_value(schema).unwrap();
        schema_limit_errors(&props, &FieldPath::new("s"))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn ordinary_schemas_pass() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x", "y"],
            "pattern": "^[a-z]+$"}, "b": {"type": "array", "items": {"anyOf": [{"type": "integer"}]}}}});
        assert!(errors(schema).is_empty());
    }

    #[test]
    fn oversized_keywords_are_refused_where_they_are() {
        let schema = json!({"type": "object", "properties": {
            "e": {"type": "integer", "enum": (0..=MAX_ENUM_VALUES).collect::<Vec<_>>()},
            "p": {"type": "string", "pattern": "a".repeat(MAX_PATTERN_BYTES + 1)}}});
        assert_eq!(
            errors(schema),
            [
                "s.properties[e].enum: Too many: 2001: must have at most 2000 items",
                "s.properties[p].pattern: Too long: may not be more than 4096 bytes",
            ]
        );
    }

    #[test]
    fn wide_and_deep_schemas_are_refused() {
        let wide =
            json!({"anyOf": (0..MAX_SCHEMA_NODES).map(|_| json!({"type": "string"})).collect::<Vec<_>>()});
        assert_eq!(
            errors(wide),
            ["s: Forbidden: a variable schema may not have more than 10000 nodes"]
        );
        let properties: serde_json::Map<String, serde_json::Value> = (0..=MAX_PROPERTIES)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        assert_eq!(
            errors(json!({"type": "object", "properties": properties})),
            ["s.properties: Too many: 1001: must have at most 1000 items"]
        );
        let mut deep = json!({"type": "string"});
        for _ in 0..=MAX_DEPTH {
            deep = json!({"type": "array", "items": deep});
        }
        let found = errors(deep);
        assert_eq!(found.len(), 1);
        assert!(found[0].ends_with("Forbidden: schemas may not be nested deeper than 64 levels"));
    }

    #[test]
    fn variable_lists_have_a_ceiling() {
        let path = FieldPath::new("spec").child("variables");
        assert!(variable_count_error(MAX_VARIABLES, &path).is_none());
        assert_eq!(
            variable_count_error(MAX_VARIABLES + 1, &path).map(|e| e.to_string()),
            Some("spec.variables: Too many: 1001: must have at most 1000 items".into())
        );
    }
}
