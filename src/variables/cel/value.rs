//! JSON values as the CEL values rules read: property names escaped as the API server escapes
//! them (a name rules cannot reach is left out), map keys as they are, strings typed by the
//! schema's `format`. The walk in [`super::evaluate`] assembles objects and lists from these
//! pieces, converting each value once; this module converts what no schema node describes.

use std::collections::HashMap;
use std::sync::Arc;

use kube_cel::cel::objects::{Key, Map};
use kube_cel::cel::Value as Cel;
use kube_cel::{convert_string_with_format, SchemaFormat};
use serde_json::{Number, Value};

use super::escaping::escape;

/// How deep a value may nest below its schema node before conversion gives up (a decoded
/// request nests at most 128 levels; fixtures and defaults are held to the same).
pub(super) const MAX_VALUE_DEPTH: usize = 128;

/// A value nested deeper than [`MAX_VALUE_DEPTH`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TooDeep;

/// The CEL map key of an object's property `name`: escaped for a declared object, as written for
/// a map (`additionalProperties`), `None` when rules cannot reach it.
pub(super) fn key(name: &str, is_map: bool) -> Option<Key> {
    if is_map {
        return Some(Key::String(Arc::new(name.to_owned())));
    }
    escape(name).map(|escaped| Key::String(Arc::new(escaped.into_owned())))
}

/// A scalar (null, boolean, number, string), the string typed by `format`; `None` for objects and
/// lists, which the caller assembles.
pub(super) fn scalar(value: &Value, format: &SchemaFormat) -> Option<Cel> {
    Some(match value {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => number(n),
        Value::String(s) => convert_string_with_format(s, format),
        Value::Array(_) | Value::Object(_) => return None,
    })
}

/// A value no schema node describes (an unknown field's, or a list's without `items`): object
/// keys escaped, strings untyped.
pub(super) fn untyped(value: &Value, depth: usize) -> Result<Cel, TooDeep> {
    if depth > MAX_VALUE_DEPTH {
        return Err(TooDeep);
    }
    Ok(match value {
        Value::Array(items) => {
            let list = items
                .iter()
                .map(|item| untyped(item, depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            Cel::List(Arc::new(list))
        }
        Value::Object(fields) => {
            let mut map = HashMap::with_capacity(fields.len());
            for (name, field) in fields {
                if let Some(key) = key(name, false) {
                    map.insert(key, untyped(field, depth + 1)?);
                }
            }
            object(map)
        }
        scalar_value => scalar(scalar_value, &SchemaFormat::None).unwrap_or(Cel::Null),
    })
}

/// An object (or map) value from its entries.
pub(super) fn object(map: HashMap<Key, Cel>) -> Cel {
    Cel::Map(Map { map: Arc::new(map) })
}

/// Fills in what the API server shows for an embedded resource (`x-kubernetes-embedded-resource`)
/// that leaves them out: empty `apiVersion` and `kind`, an empty `metadata`.
pub(super) fn embedded_resource_fields(map: &mut HashMap<Key, Cel>) {
    for name in ["apiVersion", "kind"] {
        map.entry(Key::String(Arc::new(name.to_owned())))
            .or_insert_with(|| Cel::String(Arc::new(String::new())));
    }
    map.entry(Key::String(Arc::new("metadata".to_owned())))
        .or_insert_with(|| object(HashMap::new()));
}

fn number(n: &Number) -> Cel {
    if let Some(i) = n.as_i64() {
        Cel::Int(i)
    } else if let Some(u) = n.as_u64() {
        Cel::UInt(u)
    } else {
        Cel::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn string_key(key: Option<Key>) -> Option<String> {
        key.map(|key| match key {
            Key::String(s) => s.to_string(),
            other => format!("{other:?}"),
        })
    }

    #[test]
    fn declared_names_are_escaped_and_map_keys_are_not() {
        assert_eq!(
            string_key(key("foo-bar", false)).as_deref(),
            Some("foo__dash__bar")
        );
        assert_eq!(string_key(key("foo-bar", true)).as_deref(), Some("foo-bar"));
        assert_eq!(string_key(key("a b", false)), None);
        assert_eq!(string_key(key("a b", true)).as_deref(), Some("a b"));
    }

    #[test]
    fn unknown_subtrees_convert_with_escaped_keys_and_unreachable_names_left_out() {
        let converted = untyped(&json!({"x.y": [1, -2, 1.5], "1st": true, "ok": null}), 0).unwrap();
        let Cel::Map(map) = converted else {
            panic!("not a map: {converted:?}")
        };
        let mut keys: Vec<_> = map.map.keys().map(|k| format!("{k:?}")).collect();
        keys.sort();
        assert_eq!(keys.len(), 2, "{keys:?}");
        let list = map.map.get(&Key::String(Arc::new("x__dot__y".into()))).unwrap();
        assert_eq!(
            *list,
            Cel::List(Arc::new(vec![Cel::Int(1), Cel::Int(-2), Cel::Float(1.5)]))
        );
    }

    #[test]
    fn nesting_past_the_limit_is_an_error() {
        let mut deep = json!(1);
        for _ in 0..=MAX_VALUE_DEPTH {
            deep = json!([deep]);
        }
        assert_eq!(untyped(&deep, 0), Err(TooDeep));
    }

    #[test]
    fn strings_follow_the_format() {
        let bytes = scalar(&json!("aGk="), &SchemaFormat::Bytes).unwrap();
        assert_eq!(bytes, Cel::Bytes(Arc::new(b"hi".to_vec())));
        assert_eq!(scalar(&json!({}), &SchemaFormat::None), None);
    }
}
