//! Our CRDs carry exactly the schema constraints of Cluster API v1.14.0's CRDs (the table
//! `src/api/crd_constraints/v1.14.yaml`, taken from its `config/crd/bases` by
//! `scripts/crd-constraints.py`), per kind, served version, field path and keyword, less the
//! reasoned exceptions of `src/api/crd_constraints/exceptions.yaml`: what the types generate
//! themselves (`required` from non-optional fields, enums, formats, bounds of unsigned integers,
//! list-map keys) must agree with v1.14.0, and every path of the table must exist in ours.

use std::collections::{BTreeMap, BTreeSet};

use capi_topology::api::crd::custom_resource_definitions;
use capi_topology::api::crd_constraints::{exceptions, reference};
use serde_json::Value;

/// The schema keywords compared: what the API server enforces on a value, or keeps, prunes or
/// defaults it by.
const KEYWORDS: &[&str] = &[
    "required",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minProperties",
    "maxProperties",
    "enum",
    "format",
    "x-kubernetes-validations",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "default",
    "uniqueItems",
];

/// One constraint: `Kind/version`, field path, keyword, value.
type Constraint = (String, String, String, String);

#[test]
fn our_crds_carry_exactly_cluster_apis_constraints() {
    let mut ours = BTreeSet::new();
    let mut served = BTreeSet::new();
    for crd in custom_resource_definitions().expect("CRDs generate") {
        for version in &crd.spec.versions {
            let key = format!("{}/{}", crd.spec.names.kind, version.name);
            let schema = serde_json::to_value(&version.schema).expect("schema encodes");
            let mut found = BTreeMap::new();
            constraints(&schema["openAPIV3Schema"], String::new(), &mut found);
            for (path, keywords) in found {
                for (keyword, value) in keywords {
                    ours.insert((key.clone(), path.clone(), keyword, value));
                }
            }
            served.insert(key);
        }
    }
    let excepted: BTreeSet<(String, String, String)> = exceptions()
        .iter()
        .map(|e| (e.schema.clone(), e.path.clone(), e.keyword.clone()))
        .collect();
    let mut expected = BTreeSet::new();
    for (key, table) in reference().iter().filter(|(key, _)| served.contains(*key)) {
        for (path, keywords) in table {
            for (keyword, value) in keywords {
                let entry = (key.clone(), path.clone(), keyword.clone());
                if !excepted.contains(&entry) {
                    expected.insert((entry.0, entry.1, entry.2, canonical(keyword, value)));
                }
            }
        }
    }
    let line = |(key, path, keyword, value): &Constraint| format!("{key} {path} {keyword}: {value}");
    let missing: Vec<String> = expected.difference(&ours).map(line).collect();
    let extra: Vec<String> = ours.difference(&expected).map(line).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{} constraints of Cluster API v1.14.0 missing from our CRDs:\n{}\n\n{} constraints it does not have:\n{}",
        missing.len(),
        missing.join("\n"),
        extra.len(),
        extra.join("\n")
    );
}

/// Every exception names a constraint of the table, in a version we serve, with a reason.
#[test]
fn every_exception_names_a_constraint_of_cluster_api_and_says_why() {
    for exception in exceptions() {
        let in_table = reference()
            .get(&exception.schema)
            .and_then(|table| table.get(&exception.path))
            .is_some_and(|keywords| keywords.contains_key(&exception.keyword));
        assert!(
            in_table,
            "{exception:?} is not a constraint of Cluster API v1.14.0"
        );
        assert!(
            !exception.reason.trim().is_empty(),
            "{exception:?} gives no reason"
        );
    }
}

/// The constraints under `node` (at `path`), by path: not below a node keeping unknown fields,
/// nor into the object's metadata, as the table is taken.
fn constraints(node: &Value, path: String, out: &mut BTreeMap<String, Vec<(String, String)>>) {
    let keywords: Vec<(String, String)> = KEYWORDS
        .iter()
        .filter_map(|keyword| {
            node.get(*keyword)
                .map(|value| (keyword.to_string(), canonical(keyword, value)))
        })
        .collect();
    if !keywords.is_empty() {
        out.insert(
            if path.is_empty() {
                ".".to_owned()
            } else {
                path.clone()
            },
            keywords,
        );
    }
    if node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return;
    }
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        for (name, child) in properties
            .iter()
            .filter(|(name, _)| !(path.is_empty() && *name == "metadata"))
        {
            constraints(child, format!("{path}.{name}"), out);
        }
    }
    if let Some(items) = node.get("items").filter(|v| v.is_object()) {
        constraints(items, format!("{path}[]"), out);
    }
    if let Some(values) = node.get("additionalProperties").filter(|v| v.is_object()) {
        constraints(values, format!("{path}{{}}"), out);
    }
}

/// A keyword's value as compared: `required` in name order (its order means nothing), bounds
/// as numbers (the CRD type holds them as floats: `minimum: 1.0` is v1.14.0's `minimum: 1`).
fn canonical(keyword: &str, value: &Value) -> String {
    match (keyword, value) {
        ("required", Value::Array(names)) => {
            let mut names: Vec<String> = names.iter().map(Value::to_string).collect();
            names.sort();
            format!("[{}]", names.join(","))
        }
        ("minimum" | "maximum", Value::Number(number)) => number.as_f64().unwrap_or(f64::NAN).to_string(),
        _ => value.to_string(),
    }
}
