//! JSON as Go's `encoding/json` writes it (what Cluster API's errors show) and JSON equality as
//! kube-openapi compares enum values.

use serde_json::{Map, Value};

use super::limits::MAX_DEPTH;

/// JSON text as Go's `encoding/json` writes it: compact, object keys sorted, `<`, `>` and `&` escaped.
pub fn to_go_json(value: &Value) -> String {
    let text = serde_json::to_string(&sorted(value, 0)).unwrap_or_default();
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// A copy of `value` whose objects list their keys in order.
fn sorted(value: &Value, depth: usize) -> Value {
    match value {
        Value::Object(map) if depth < MAX_DEPTH => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for key in keys {
                if let Some(child) = map.get(key) {
                    out.insert(key.clone(), sorted(child, depth + 1));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) if depth < MAX_DEPTH => {
            Value::Array(items.iter().map(|item| sorted(item, depth + 1)).collect())
        }
        other => other.clone(),
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
pub fn same_json(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64()),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y, depth + 1))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w, depth + 1)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_compact_sorted_escaped_json() {
        assert_eq!(
            to_go_json(&json!({"b": "<&>", "a": [1, {"d": 1, "c": 2}]})),
            r#"{"a":[1,{"c":2,"d":1}],"b":"\u003c\u0026\u003e"}"#
        );
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(same_json(&json!({"a": [1]}), &json!({"a": [1.0]}), 0));
        assert!(!same_json(&json!({"a": 1}), &json!({"a": 1, "b": 2}), 0));
        assert!(!same_json(&json!("1"), &json!(1), 0));
    }
}
