//! What the offline API server refuses itself, before any webhook, for every kind it stores: a
//! `spec: null` pruned as the API server prunes nulls (then missing where our CRDs require it),
//! and object metadata the API server's `ValidateObjectMeta` refuses, in kubectl's words
//! (`The ConfigMap "Bad_Name!" is invalid: metadata.name: Invalid value: ...`).

use serde_json::Value;

use crate::admission::object_meta::validate_object_meta;
use crate::field::{truncate, FieldError, FieldErrors, FieldPath};
use crate::store::group_of as api_group;

/// Kinds whose CRD lists `spec` as required (Cluster API v1.14.0).
const SPEC_REQUIRED: &[(&str, &str)] = &[
    ("addons.cluster.x-k8s.io", "ClusterResourceSet"),
    ("addons.cluster.x-k8s.io", "ClusterResourceSetBinding"),
    ("runtime.cluster.x-k8s.io", "ExtensionConfig"),
];

/// The longest object name a message repeats (a DNS subdomain's limit).
const MAX_NAME_SHOWN: usize = 253;

/// Prunes a null `spec` or `status` of `object` and checks what the API server checks of every
/// object; kubectl's message when it would refuse it.
pub fn check(object: &mut Value) -> Result<(), String> {
    if let Some(map) = object.as_object_mut() {
        for field in ["spec", "status"] {
            if map.get(field).is_some_and(Value::is_null) {
                map.remove(field);
            }
        }
    }
    let mut errors = validate_object_meta(object);
    let group = api_group(object["apiVersion"].as_str().unwrap_or_default());
    let kind = object["kind"].as_str().unwrap_or_default();
    if SPEC_REQUIRED.contains(&(group, kind)) && object.get("spec").is_none() {
        errors.push(FieldError::required(&FieldPath::new("spec"), ""));
    }
    if errors.is_empty() {
        return Ok(());
    }
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(invalid(kind, name, &errors))
}

/// kubectl's message when the API server's schema check ([`super::schema_check`]) refuses
/// `object` (in the version it was written in; `old` the stored object in that version); none
/// when it passes.
pub fn schema_refusal(object: &Value, old: Option<&Value>) -> Option<String> {
    let errors = super::schema_check::schema_errors(object, old);
    if errors.is_empty() {
        return None;
    }
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Some(invalid(
        object["kind"].as_str().unwrap_or_default(),
        name,
        &errors,
    ))
}

/// kubectl's message for an object the API server finds invalid: one cause on the line, several
/// as a list. kubectl names the kind alone (the Status's `details.kind`), whatever its group.
fn invalid(kind: &str, name: &str, errors: &FieldErrors) -> String {
    let resource = kind;
    let name = truncate(name.to_owned(), MAX_NAME_SHOWN);
    let mut causes: Vec<String> = Vec::with_capacity(errors.len());
    for cause in errors.iter().map(ToString::to_string) {
        if !causes.contains(&cause) {
            causes.push(cause);
        }
    }
    match causes.as_slice() {
        [one] => format!("The {resource} {name:?} is invalid: {one}"),
        many => format!("The {resource} {name:?} is invalid: \n* {}", many.join("\n* ")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_null_spec_is_pruned_then_required_where_our_crds_require_it() {
        let mut set = json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet",
            "metadata": {"name": "s", "namespace": "ns"}, "spec": null});
        assert_eq!(
            check(&mut set),
            Err(r#"The ClusterResourceSet "s" is invalid: spec: Required value"#.to_owned())
        );
        let mut config_map =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "spec": null});
        assert_eq!(check(&mut config_map), Ok(()));
        assert!(config_map.get("spec").is_none());
    }

    #[test]
    fn bad_metadata_is_refused_as_kubectl_shows_it() {
        let mut config_map =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name!"}});
        let message = check(&mut config_map).unwrap_err();
        assert!(
            message.starts_with(
                r#"The ConfigMap "Bad_Name!" is invalid: metadata.name: Invalid value: "Bad_Name!": a lowercase RFC 1123 subdomain must consist of"#
            ),
            "{message}"
        );
        let mut binding = json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSetBinding",
            "metadata": {"name": "b", "namespace": "ns", "labels": {"-a": "b"}}});
        let message = check(&mut binding).unwrap_err();
        assert!(
            message.starts_with("The ClusterResourceSetBinding \"b\" is invalid: \n* metadata.labels: "),
            "{message}"
        );
        assert!(message.ends_with("\n* spec: Required value"), "{message}");
        let mut long =
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a".repeat(1 << 20)}});
        assert!(
            check(&mut long).unwrap_err().len() < 4096,
            "a 1 MB name is not echoed whole"
        );
    }
}
