//! Errors of a variable's `default` against its own schema, worded as the API server's default
//! validation words them (Cluster API checks defaults with it): the offending node's value as
//! Go prints it, and kube-openapi's `<field> in body` before the message, even at the default's
//! root (`default: Invalid value: 11:  in body should be less than or equal to 10`). A Cluster's
//! values are worded differently: Cluster API rewrites those errors (see `walk`).

use serde_json::{Map, Value};

use crate::field::{ErrorType, FieldErrors, FieldPath};

use super::limits::MAX_DEPTH;

/// Rewords the schema errors of `default` (checked at `default_path`) as the API server's
/// default validation reports them.
pub fn reword(errors: FieldErrors, default: &Value, default_path: &FieldPath) -> FieldErrors {
    let root = default_path.to_string();
    errors
        .into_iter()
        .map(|mut error| {
            if !matches!(
                error.kind,
                ErrorType::Invalid | ErrorType::TypeInvalid | ErrorType::NotSupported
            ) || error.value.is_none()
            {
                return error;
            }
            let path = error.path.to_string();
            let Some(relative) = path.strip_prefix(root.as_str()) else {
                return error;
            };
            if let Some(node) = node_at(default, relative) {
                error.value = None;
                // A type error shows the type it found, as kube-openapi gives it.
                error.shown = Some(if error.kind == ErrorType::TypeInvalid {
                    format!("{:?}", json_type(node))
                } else {
                    go_value(node, 0)
                });
            }
            if relative.is_empty() && error.kind != ErrorType::NotSupported {
                error.detail = format!(" in body {}", error.detail);
            }
            error
        })
        .collect()
}

/// The node of `value` at `relative`, a field path's text below the value (`.a.b`, `.[1]`,
/// `.list[0].c`); None when a segment does not lead anywhere.
fn node_at<'v>(value: &'v Value, relative: &str) -> Option<&'v Value> {
    let mut node = value;
    let mut rest = relative;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let (index, tail) = after.split_once(']')?;
            node = node.get(index.parse::<usize>().ok()?)?;
            rest = tail;
        } else {
            let after = rest.strip_prefix('.')?;
            if after.starts_with('[') {
                // `.[1]`: an item of a list at the root, as kube-openapi names it.
                rest = after;
                continue;
            }
            let end = after.find(['.', '[']).unwrap_or(after.len());
            node = node.get(&after[..end])?;
            rest = &after[end..];
        }
    }
    Some(node)
}

/// The JSON type of a value as kube-openapi names it.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A JSON value as Go prints the decoded value in a field error: scalars as `%v` (strings
/// quoted), objects and lists as `%#v` of `map[string]interface {}` and `[]interface {}`.
fn go_value(value: &Value, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "...".to_owned();
    }
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => format!("{s:?}"),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|item| go_value(item, depth + 1)).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Value::Object(map) => go_map(map, depth),
    }
}

fn go_map(map: &Map<String, Value>, depth: usize) -> String {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by_key(|(key, _)| *key);
    let entries: Vec<String> = entries
        .into_iter()
        .map(|(key, value)| format!("{key:?}:{}", go_value(value, depth + 1)))
        .collect();
    format!("map[string]interface {{}}{{{}}}", entries.join(", "))
}

/// A number as Go's `%v` prints an int64 or a float64 (whole floats without a fraction).
fn go_number(number: &serde_json::Number) -> String {
    match number.as_f64() {
        Some(f) if number.is_f64() && f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
        _ => number.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::field::FieldError;

    fn path() -> FieldPath {
        FieldPath::new("spec").children(&["variables", "openAPIV3Schema", "default"])
    }

    #[test]
    fn errors_show_the_node_and_keep_in_body_at_the_root() {
        let default = json!({"a": "x", "list": [1, 2]});
        let errors = FieldErrors::from(vec![
            FieldError::invalid(&path(), "{}", "should have at least 3 properties"),
            FieldError::invalid(
                &path().child("a"),
                "{}",
                "a in body should be at least 2 chars long",
            ),
            FieldError::not_supported(&path().child("list[1]"), "{}", &["1"]),
            FieldError::new(
                ErrorType::TypeInvalid,
                &path().child("list[0]"),
                Some("{}".into()),
                "list[0] in body must be of type string: \"integer\"",
            ),
            FieldError::required(&path().child("b"), ""),
        ]);
        let reworded: Vec<String> = reword(errors, &default, &path())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            reworded,
            [
                r#"spec.variables.openAPIV3Schema.default: Invalid value: map[string]interface {}{"a":"x", "list":[]interface {}{1, 2}}:  in body should have at least 3 properties"#,
                r#"spec.variables.openAPIV3Schema.default.a: Invalid value: "x": a in body should be at least 2 chars long"#,
                r#"spec.variables.openAPIV3Schema.default.list[1]: Unsupported value: 2: supported values: "1""#,
                r#"spec.variables.openAPIV3Schema.default.list[0]: Invalid value: "integer": list[0] in body must be of type string: "integer""#,
                "spec.variables.openAPIV3Schema.default.b: Required value",
            ]
        );
    }

    #[test]
    fn nodes_are_found_below_objects_and_lists() {
        let value = json!({"a": {"b": [1, {"c": true}]}});
        assert_eq!(node_at(&value, ".a.b[1].c"), Some(&json!(true)));
        assert_eq!(node_at(&json!(["x", 7]), ".[1]"), Some(&json!(7)));
        assert_eq!(node_at(&value, ".a.x"), None);
        assert_eq!(node_at(&value, ".a.b[9]"), None);
    }

    #[test]
    fn numbers_print_as_go_prints_them() {
        assert_eq!(go_value(&json!(11), 0), "11");
        assert_eq!(go_value(&json!(11.0), 0), "11");
        assert_eq!(go_value(&json!(1.5), 0), "1.5");
        assert_eq!(go_value(&json!(true), 0), "true");
    }
}
