//! Strict field validation, as kubectl asks for it by default (`--validate=strict`, the API
//! server's `fieldValidation=Strict`): a field no schema declares refuses the object with the API
//! server's words (`strict decoding error: unknown field "metadata.foo", unknown field
//! "spec.topology.workers.machineDeployment"`, sorted by path, as kube-apiserver v1.34 sorts
//! them); `warn` lets it through with one warning per field, `ignore` says nothing. A key written
//! twice in a file is no refusal: kubectl reads the file first and sends the last value only (the
//! API server's `duplicate field "p"` is for request bodies written by other clients), so it is
//! a warning of ours. Schemas are our generated CRDs for our groups, and the CRDs in the files
//! for other groups.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::apply::{apply, created, Applied, ApplyError, Verdict};
use super::edge::check_served;
use crate::store::{group_of as api_group, MemoryStore, ObjectSource};

/// The field validation kubectl's `--validate` asks of the API server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Validation {
    /// Unknown fields refuse the object (kubectl's default; `true` too).
    #[default]
    #[value(alias = "true")]
    Strict,
    /// Unknown fields are warnings.
    Warn,
    /// Unknown fields are dropped silently (`false` too).
    #[value(alias = "false")]
    Ignore,
}

/// Most fields one object's error names; past it, how many more there are.
const MAX_NAMED: usize = 100;

/// The `openAPIV3Schema` of each served `(group, version, kind)`.
#[derive(Debug, Default)]
pub struct Schemas {
    by_kind: HashMap<(String, String, String), Value>,
}

impl Schemas {
    /// The schemas of our CRDs, and of the CRDs among `objects` for other groups.
    pub fn new<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Schemas {
        let ours = super::list_maps::our_schemas();
        let groups: std::collections::HashSet<&str> =
            ours.keys().map(|(group, _, _)| group.as_str()).collect();
        let mut schemas = Schemas {
            by_kind: ours.clone(),
        };
        let theirs = objects.into_iter().filter(|o| {
            o["kind"] == "CustomResourceDefinition"
                && o["apiVersion"] == "apiextensions.k8s.io/v1"
                && !groups.contains(
                    o.pointer("/spec/group")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                )
        });
        for crd in theirs {
            schemas.add(crd);
        }
        schemas
    }

    fn add(&mut self, crd: &Value) {
        let text = |pointer: &str| crd.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
        let (group, kind) = (text("/spec/group"), text("/spec/names/kind"));
        let versions = crd.pointer("/spec/versions").and_then(Value::as_array);
        for version in versions.into_iter().flatten() {
            let (Some(name), Some(schema)) = (
                version.get("name").and_then(Value::as_str),
                version.pointer("/schema/openAPIV3Schema"),
            ) else {
                continue;
            };
            self.by_kind.insert(
                (group.to_owned(), name.to_owned(), kind.to_owned()),
                schema.clone(),
            );
        }
    }

    /// What strict validation finds in `object` as kubectl sends it: `unknown field "p"` for
    /// each field its schema does not declare, sorted by path (none when no schema is known for
    /// its kind and version).
    pub fn findings(&self, object: &Value) -> Vec<String> {
        let mut findings = Vec::new();
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let version = api_version.rsplit('/').next().unwrap_or_default();
        let key = (
            api_group(api_version).to_owned(),
            version.to_owned(),
            object["kind"].as_str().unwrap_or_default().to_owned(),
        );
        if let Some(schema) = self.by_kind.get(&key) {
            let mut unknown = Vec::new();
            resource(schema, object, "", &mut unknown);
            unknown.sort();
            findings.extend(unknown.iter().map(|p| format!("unknown field {p:?}")));
        }
        findings
    }
}

/// The warnings for the keys a file repeats (`duplicates`, paths in the object read from
/// `source`), none under `Ignore`: kubectl keeps the last value of each without a word, which is
/// seldom what was meant.
pub fn repeated_keys(duplicates: &[String], source: &Path, validation: Validation) -> Vec<String> {
    if validation == Validation::Ignore {
        return Vec::new();
    }
    let source = source.display();
    duplicates
        .iter()
        .map(|p| {
            format!("{source}: field {p:?} is written more than once; kubectl sends only its last value")
        })
        .collect()
}

/// Applies `object` as [`apply`] does, after strict validation: under `Strict` findings refuse
/// it with kubectl's words, under `Warn` they are its first warnings.
pub fn apply_validated(
    store: &mut MemoryStore,
    current: bool,
    object: Value,
    findings: Vec<String>,
    validation: Validation,
    source: &str,
    now: &str,
) -> Result<Applied, ApplyError> {
    let write = |store: &mut MemoryStore, object: Value| {
        if current {
            super::current::apply_over(store, object, source, now)
        } else {
            apply(store, object, source, now)
        }
    };
    if findings.is_empty() || validation == Validation::Ignore {
        return write(store, object);
    }
    if validation == Validation::Warn {
        let mut applied = write(store, object)?;
        applied.warnings.splice(0..0, findings);
        return Ok(applied);
    }
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let key = crate::store::ObjectKey::of(&object);
    let exists = store
        .get(&key.group, &key.kind, &key.namespace, &key.name)
        .is_some();
    check_served(&object, source)?;
    let mut applied = created(&object);
    let version = api_version.rsplit('/').next().unwrap_or_default();
    let named = findings.len().min(MAX_NAMED);
    let mut errors = findings[..named].join(", ");
    if findings.len() > named {
        errors.push_str(&format!(", and {} more", findings.len() - named));
    }
    applied.verdict = Verdict::Denied;
    applied.warnings.clear();
    // kubectl's client-side apply patches an existing object: the API server then names the
    // patched object (its stored form, here the object as written) rather than the file.
    applied.message = if exists {
        let written = serde_json::to_string(&object).unwrap_or_default();
        format!("The request is invalid: patch: Invalid value: {written:?}: strict decoding error: {errors}")
    } else {
        format!(
            "Error from server (BadRequest): error when creating {source:?}: {kind} in version {version:?} cannot \
             be handled as a {kind}: strict decoding error: {errors}"
        )
    };
    Ok(applied)
}

/// Fields every object has beside its schema's: its type and metadata.
fn resource(schema: &Value, object: &Value, path: &str, unknown: &mut Vec<String>) {
    let Some(map) = object.as_object() else { return };
    for (key, value) in map {
        let at = join(path, key);
        match key.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => object_meta(value, &at, unknown),
            _ => match property(schema, key) {
                Some(field) => node(field, value, &at, unknown),
                None if open(schema) => {}
                None => unknown.push(at),
            },
        }
    }
}

/// Checks `value` against `schema` (a structural schema node).
fn node(schema: &Value, value: &Value, path: &str, unknown: &mut Vec<String>) {
    if unknown.len() > MAX_NAMED {
        return;
    }
    if schema["x-kubernetes-embedded-resource"] == true {
        return resource(schema, value, path, unknown);
    }
    match value {
        Value::Object(map) => {
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, value) in map {
                let at = join(path, key);
                match property(schema, key).or(additional) {
                    Some(field) => node(field, value, &at, unknown),
                    None if open(schema) => {}
                    None => unknown.push(at),
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items").filter(|i| i.is_object()) {
                for (index, value) in items.iter().enumerate() {
                    node(item, value, &format!("{path}[{index}]"), unknown);
                }
            }
        }
        _ => {}
    }
}

fn property<'a>(schema: &'a Value, key: &str) -> Option<&'a Value> {
    schema.get("properties").and_then(|p| p.get(key))
}

/// Whether an object node keeps fields it does not declare.
fn open(schema: &Value) -> bool {
    schema["x-kubernetes-preserve-unknown-fields"] == true || schema["additionalProperties"] == true
}

/// The fields of `ObjectMeta` an object may set (the others are the API server's own too, and
/// accepted as written).
const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];
const OWNER_REFERENCE: &[&str] = &[
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];

fn object_meta(meta: &Value, path: &str, unknown: &mut Vec<String>) {
    let Some(map) = meta.as_object() else { return };
    for (key, value) in map {
        let at = join(path, key);
        if !OBJECT_META.contains(&key.as_str()) {
            unknown.push(at);
        } else if key == "ownerReferences" {
            for (index, owner) in value.as_array().into_iter().flatten().enumerate() {
                let owner_path = format!("{at}[{index}]");
                for field in owner.as_object().into_iter().flat_map(|o| o.keys()) {
                    if !OWNER_REFERENCE.contains(&field.as_str()) {
                        unknown.push(join(&owner_path, field));
                    }
                }
            }
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cluster(topology: Value) -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": "ns", "labels": {"any": "x"}},
            "spec": {"topology": topology}})
    }

    #[test]
    fn unknown_fields_of_our_kinds_are_named_by_path() {
        let schemas = Schemas::new([]);
        let typo = cluster(json!({"classRef": {"name": "k"}, "version": "v1.31.0",
            "workers": {"machineDeployment": [{"class": "w", "name": "a"}],
                        "machineDeployments": [{"class": "w", "name": "a", "replica": 1}]},
            "variables": [{"name": "v", "value": {"anything": {"goes": true}}}]}));
        assert_eq!(
            schemas.findings(&typo),
            [
                r#"unknown field "spec.topology.workers.machineDeployment""#,
                r#"unknown field "spec.topology.workers.machineDeployments[0].replica""#
            ]
        );
        let meta = json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet",
            "metadata": {"name": "s", "labelz": {}, "ownerReferences": [{"name": "o", "x": 1}]},
            "spec": {"clusterSelector": {}, "resources": []}, "extra": 1});
        assert_eq!(
            schemas.findings(&meta),
            [
                r#"unknown field "extra""#,
                r#"unknown field "metadata.labelz""#,
                r#"unknown field "metadata.ownerReferences[0].x""#
            ]
        );
    }

    #[test]
    fn kinds_without_a_schema_have_no_unknown_fields() {
        let schemas = Schemas::new([]);
        let config_map =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "anything": 1});
        assert!(schemas.findings(&config_map).is_empty());
    }

    #[test]
    fn repeated_keys_are_warnings_naming_the_file() {
        assert!(repeated_keys(&["data.k".to_owned()], Path::new("c.yaml"), Validation::Ignore).is_empty());
        assert_eq!(
            repeated_keys(&["data.k".to_owned()], Path::new("c.yaml"), Validation::Strict),
            [r#"c.yaml: field "data.k" is written more than once; kubectl sends only its last value"#]
        );
    }

    #[test]
    fn crds_in_the_files_give_their_kinds_schemas() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "spec": {"group": "infrastructure.example.com", "names": {"kind": "Box"},
                "versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                     "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                        "tags": {"type": "object", "additionalProperties": {"type": "string"}}}}}}}}]}});
        let schemas = Schemas::new([&crd]);
        let object = json!({"apiVersion": "infrastructure.example.com/v1", "kind": "Box", "metadata": {"name": "b"},
            "spec": {"tags": {"a": "b"}, "template": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "t", "bad": 1},
                                                       "spec": {"free": 1}, "status": {}}, "sise": 1}});
        assert_eq!(
            schemas.findings(&object),
            [
                r#"unknown field "spec.sise""#,
                r#"unknown field "spec.template.metadata.bad""#,
                r#"unknown field "spec.template.status""#
            ]
        );
    }

    #[test]
    fn strict_refuses_with_kubectls_words_warn_admits_with_warnings() {
        let schemas = Schemas::new([]);
        let typo = cluster(
            json!({"classRef": {"name": "k"}, "version": "v1.31.0", "workers": {"machineDeployment": []}}),
        );
        let findings = schemas.findings(&typo);
        let mut store = MemoryStore::default();
        let refused = apply_validated(
            &mut store,
            false,
            typo.clone(),
            findings.clone(),
            Validation::Strict,
            "c.yaml",
            "now",
        )
        .unwrap();
        assert_eq!(refused.verdict, Verdict::Denied);
        assert_eq!(
            refused.message,
            "Error from server (BadRequest): error when creating \"c.yaml\": Cluster in version \"v1beta2\" cannot be \
             handled as a Cluster: strict decoding error: unknown field \"spec.topology.workers.machineDeployment\""
        );
        assert!(store.is_empty(), "a refused object is not stored");
        let live = cluster(json!({"classRef": {"name": "k"}, "version": "v1.31.0"}));
        let mut stored = MemoryStore::default();
        stored.insert(live).unwrap();
        let over = apply_validated(
            &mut stored,
            false,
            typo.clone(),
            findings.clone(),
            Validation::Strict,
            "c.yaml",
            "now",
        )
        .unwrap();
        assert!(
            over.message
                .starts_with("The request is invalid: patch: Invalid value: \"{\\\"apiVersion\\\"")
                && over.message.ends_with(
                    "\": strict decoding error: unknown field \"spec.topology.workers.machineDeployment\""
                ),
            "{}",
            over.message
        );
        let warned = apply_validated(
            &mut store,
            false,
            typo,
            findings,
            Validation::Warn,
            "c.yaml",
            "now",
        )
        .unwrap();
        assert_eq!(
            warned.warnings.first().map(String::as_str),
            Some(r#"unknown field "spec.topology.workers.machineDeployment""#)
        );
    }
}
