//! Compiled rule trees kept and shared: a ClusterClass write compiles the CEL rules of every
//! variable schema, several times over (for the definitions, their defaults, their examples and
//! enum values), and the next write of the class compiles the same rules again. A tree that
//! compiled without errors is kept under its schema's text and the way it was compiled; a hit
//! costs the schema's serialisation and a lookup. Trees with errors are not kept (their errors
//! name the field path of the request).
//!
//! Bounded: at most [`MAX_KEPT`] trees, of schemas of at most [`MAX_KEPT_SCHEMA`] bytes (the
//! table is emptied when full). The rules of a kept tree are bounded by the CEL limits the
//! compilation checks before parsing anything.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use super::CelRules;
use crate::api::JSONSchemaProps;

/// Most trees kept.
pub const MAX_KEPT: usize = 256;
/// Largest schema (as JSON) whose tree is kept, in bytes.
pub const MAX_KEPT_SCHEMA: usize = 64 * 1024;

/// What a compiled tree is kept under: the schema's JSON, and whether it was compiled as a
/// resource root and with the cost limits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    schema: String,
    root: bool,
    costs: bool,
}

impl Key {
    /// The key of `schema` compiled with `root` and `costs`; `None` for a schema too large to keep.
    pub fn of(schema: &JSONSchemaProps, root: bool, costs: bool) -> Option<Key> {
        let schema = serde_json::to_string(schema).ok()?;
        (schema.len() <= MAX_KEPT_SCHEMA).then_some(Key { schema, root, costs })
    }
}

fn table() -> &'static Mutex<HashMap<Key, CelRules>> {
    static KEPT: OnceLock<Mutex<HashMap<Key, CelRules>>> = OnceLock::new();
    KEPT.get_or_init(Mutex::default)
}

/// The tree kept under `key`, if any.
pub fn get(key: &Key) -> Option<CelRules> {
    table()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(key)
        .cloned()
}

/// Keeps `rules` under `key`.
pub fn keep(key: Key, rules: &CelRules) {
    let mut table = table().lock().unwrap_or_else(PoisonError::into_inner);
    if table.len() >= MAX_KEPT {
        table.clear();
    }
    table.insert(key, rules.clone());
}

/// How many trees are kept (for tests).
#[cfg(test)]
pub fn len() -> usize {
    table().lock().unwrap_or_else(PoisonError::into_inner).len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::FieldPath;

    fn schema(rule: &str) -> JSONSchemaProps {
        serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {"replicas": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": rule}],
        }))
        .expect("schema decodes")
    }

    #[test]
    fn a_tree_is_kept_after_it_compiles_and_errors_are_not() {
        let good = schema("self.replicas >= 0 && self.replicas < 1234567");
        let path = FieldPath::new("spec");
        let first = CelRules::compile(&good, &path).expect("compiles");
        let key = Key::of(&good, false, true).expect("small enough");
        assert!(get(&key).is_some(), "kept after the first compilation");
        let again = CelRules::compile(&good, &path).expect("compiles");
        let value = serde_json::json!({"replicas": -1});
        assert_eq!(
            first.validate(&value, None, &path, super::super::Shown::NodeType),
            again.validate(&value, None, &path, super::super::Shown::NodeType),
        );
        assert!(
            Key::of(&good, true, true) != Some(key),
            "compiled as a root: another key"
        );
        let bad = schema("self.nope >= 0 && self.replicas < 7654321");
        let other = FieldPath::new("elsewhere");
        let errors = CelRules::compile(&bad, &other).expect_err("an undefined field");
        assert!(errors.to_string().starts_with("elsewhere"), "{errors}");
        assert!(get(&Key::of(&bad, false, true).expect("small")).is_none());
        assert!(len() <= MAX_KEPT);
    }
}
