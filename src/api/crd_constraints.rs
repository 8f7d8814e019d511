//! The schema constraints of our CRDs (`required`, lengths, item and property counts, patterns,
//! bounds, enums, formats, CEL rules, defaults), laid onto the schemas generated from our types.
//!
//! They are one declarative table per kind and served version, keyed by field path, taken from
//! Cluster API v1.14.0's CRDs by `scripts/crd-constraints.py` (`crd_constraints/v1.14.yaml`):
//! a constraint belongs to a field *where it is used* (the same Go type carries other limits in
//! other places, e.g. `deletion.order`), the table moves with Cluster API by re-running the
//! script, and the Rust types stay readable (some 4,000 constraints would otherwise be as many
//! attributes). The few constraints the seeds overrule are listed with their reasons in
//! `crd_constraints/exceptions.yaml` and left out.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value};

/// Constraints of one kind and version: field path (`.spec.a[].b{}`, `.` the object) to the
/// schema keywords it carries.
type Table = BTreeMap<String, Map<String, Value>>;

#[derive(Deserialize)]
struct Reference {
    /// `Kind/version` to its table.
    constraints: BTreeMap<String, Table>,
}

/// A constraint of the table our CRDs leave out, and why.
#[derive(Debug, Clone, Deserialize)]
pub struct Exception {
    /// `Kind/version`.
    pub schema: String,
    /// The field path, as in the table.
    pub path: String,
    /// The schema keyword left out.
    pub keyword: String,
    /// Why (which seed overrules Cluster API v1.14.0).
    pub reason: String,
}

#[derive(Deserialize)]
struct Exceptions {
    exceptions: Vec<Exception>,
}

/// Every constraint of Cluster API v1.14.0's CRDs, by `Kind/version` and field path (the
/// reference, exceptions included).
pub fn reference() -> &'static BTreeMap<String, Table> {
    static REFERENCE: OnceLock<BTreeMap<String, Table>> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        serde_yaml_ng::from_str::<Reference>(include_str!("crd_constraints/v1.14.yaml"))
            .map(|reference| reference.constraints)
            .unwrap_or_default()
    })
}

/// The constraints of the reference our CRDs leave out, with their reasons.
pub fn exceptions() -> &'static [Exception] {
    static EXCEPTIONS: OnceLock<Vec<Exception>> = OnceLock::new();
    EXCEPTIONS.get_or_init(|| {
        serde_yaml_ng::from_str::<Exceptions>(include_str!("crd_constraints/exceptions.yaml"))
            .map(|exceptions| exceptions.exceptions)
            .unwrap_or_default()
    })
}

/// Lays the constraints of `kind` in `version` onto `schema` (its `openAPIV3Schema`). A keyword
/// of the table replaces what the types generated at that path; a path the schema lacks is
/// passed over (the reference test names it).
pub(crate) fn apply(kind: &str, version: &str, schema: &mut Value) {
    let key = format!("{kind}/{version}");
    let Some(table) = reference().get(&key) else {
        return;
    };
    for (path, keywords) in table {
        let Some(Value::Object(node)) = node_at(schema, path) else {
            continue;
        };
        for (keyword, value) in keywords {
            let excepted = exceptions()
                .iter()
                .any(|e| e.schema == key && e.path == *path && e.keyword == *keyword);
            if !excepted {
                node.insert(keyword.clone(), value.clone());
            }
        }
    }
}

/// The schema node at `path` (`.a.b[].c{}`; `.` or empty is `schema` itself).
pub fn node_at<'a>(schema: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut node = schema;
    let mut rest = path.strip_prefix('.').unwrap_or(path);
    while !rest.is_empty() {
        let (next, tail) = if let Some(tail) = rest.strip_prefix("[]") {
            (node.get_mut("items"), tail)
        } else if let Some(tail) = rest.strip_prefix("{}") {
            (node.get_mut("additionalProperties"), tail)
        } else {
            let name = rest.strip_prefix('.').unwrap_or(rest);
            let end = name.find(['.', '[', '{']).unwrap_or(name.len());
            (
                node.get_mut("properties").and_then(|p| p.get_mut(&name[..end])),
                &name[end..],
            )
        };
        node = next?;
        rest = tail;
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_table_covers_every_kind_and_version_we_serve() {
        let kinds: Vec<&String> = reference().keys().collect();
        assert!(kinds.len() >= 20, "{kinds:?}");
        assert!(reference()["Cluster/v1beta2"][".spec.topology.classRef.name"].contains_key("maxLength"));
    }

    #[test]
    fn node_at_follows_properties_items_and_values() {
        let mut schema =
            json!({"properties": {"a": {"items": {"additionalProperties": {"type": "string"}}}}});
        assert_eq!(
            node_at(&mut schema, ".a[]{}"),
            Some(&mut json!({"type": "string"}))
        );
        assert!(node_at(&mut schema, ".b").is_none());
        assert!(node_at(&mut schema, ".").is_some());
    }

    #[test]
    fn apply_lays_keywords_onto_existing_paths_only() {
        let mut schema = json!({"properties": {"spec": {"properties": {"topology": {"properties": {
            "classRef": {"properties": {"name": {"type": "string"}}}}}}}}});
        apply("Cluster", "v1beta2", &mut schema);
        let name = &schema["properties"]["spec"]["properties"]["topology"]["properties"]["classRef"]
            ["properties"]["name"];
        assert_eq!(name["maxLength"], 253);
        assert_eq!(name["minLength"], 1);
        assert!(schema["properties"].get("status").is_none());
    }
}
