//! The API server's own checks of an object's `metadata`, for every kind (its `ValidateObjectMeta`):
//! the name and generateName by the kind's name rule, the namespace as a DNS-1123 label, a
//! non-negative generation, label and annotation keys and values and the annotations' total size.
//! The offline API server runs them on every object it stores, whatever its kind.

use std::collections::BTreeMap;

use serde_json::Value;

use super::cluster::metadata;
use crate::api::names::{dns1035_label_problems, dns1123_label_problems, subdomain_problems};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// The rule names of a kind follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// A lowercase RFC 1123 subdomain (most kinds, and every custom resource).
    Subdomain,
    /// A lowercase RFC 1123 label (Namespace).
    Label,
    /// An RFC 1035 label (Service).
    Dns1035,
    /// A path segment: anything but `.`, `..`, `/` and `%` (the RBAC kinds, so `system:x` is a name).
    PathSegment,
}

impl NameRule {
    /// The rule of `kind` in `group` (`""` for the core group).
    pub fn of(group: &str, kind: &str) -> NameRule {
        match (group, kind) {
            ("", "Namespace") => NameRule::Label,
            ("", "Service") => NameRule::Dns1035,
            ("rbac.authorization.k8s.io", _) => NameRule::PathSegment,
            _ => NameRule::Subdomain,
        }
    }

    /// Why `name` breaks the rule; a generateName (`prefix`) is checked as the name it starts.
    fn problems(self, name: &str, prefix: bool) -> Vec<String> {
        // A prefix may end in '-': the generated suffix follows it.
        let name = if prefix && self != NameRule::PathSegment {
            mask_trailing_dash(name)
        } else {
            name.to_owned()
        };
        match self {
            NameRule::Subdomain => subdomain_problems(&name),
            NameRule::Label => dns1123_label_problems(&name),
            NameRule::Dns1035 => dns1035_label_problems(&name),
            NameRule::PathSegment => path_segment_problems(&name, prefix),
        }
    }
}

/// `name` with a trailing `-` replaced by `a`, as the API server checks a generateName.
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(stem) if !stem.is_empty() => format!("{stem}a"),
        _ => name.to_owned(),
    }
}

fn path_segment_problems(name: &str, prefix: bool) -> Vec<String> {
    let mut problems = Vec::new();
    if !prefix {
        for reserved in [".", ".."] {
            if name == reserved {
                problems.push(format!("may not be '{reserved}'"));
            }
        }
    }
    for forbidden in ["/", "%"] {
        if name.contains(forbidden) {
            problems.push(format!("may not contain '{forbidden}'"));
        }
    }
    problems
}

/// The errors the API server finds in `object`'s metadata, `metadata.`-prefixed, in its order.
pub fn validate_object_meta(object: &Value) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let path = FieldPath::new("metadata");
    let meta = object.get("metadata");
    let text = |field: &str| {
        meta.and_then(|m| m.get(field))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
    let rule = NameRule::of(group, kind);
    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        for problem in rule.problems(generate_name, true) {
            errors.push(FieldError::invalid(
                &path.child("generateName"),
                generate_name,
                problem,
            ));
        }
    }
    let name = text("name");
    if name.is_empty() {
        errors.push(FieldError::required(
            &path.child("name"),
            "name or generateName is required",
        ));
    } else {
        for problem in rule.problems(name, false) {
            errors.push(FieldError::invalid(&path.child("name"), name, problem));
        }
    }
    let namespace = text("namespace");
    for problem in dns1123_label_problems(namespace)
        .into_iter()
        .filter(|_| !namespace.is_empty())
    {
        errors.push(FieldError::invalid(&path.child("namespace"), namespace, problem));
    }
    if let Some(generation) = meta.and_then(|m| m.get("generation")).and_then(Value::as_i64) {
        if generation < 0 {
            errors.push(FieldError::invalid(
                &path.child("generation"),
                generation,
                "must be greater than or equal to 0",
            ));
        }
    }
    let strings = |field: &str| -> BTreeMap<String, String> {
        meta.and_then(|m| m.get(field))
            .and_then(Value::as_object)
            .map(|map| {
                map.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default()
    };
    errors.extend(metadata::validate(
        &strings("labels"),
        &strings("annotations"),
        &path,
    ));
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn causes(object: Value) -> Vec<String> {
        validate_object_meta(&object)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
        characters, '-' or '.', and must start and end with an alphanumeric character (e.g. \
        'example.com', regex used for validation is \
        '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    #[test]
    fn names_follow_their_kinds_rule_in_the_api_servers_words() {
        assert_eq!(
            causes(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name!"}})),
            [format!(
                r#"metadata.name: Invalid value: "Bad_Name!": {SUBDOMAIN}"#
            )]
        );
        let long = "a".repeat(254);
        assert_eq!(
            causes(
                json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet",
                "metadata": {"name": long, "namespace": "ns"}})
            ),
            [format!(
                r#"metadata.name: Invalid value: "{long}": must be no more than 253 characters"#
            )]
        );
        assert!(
            causes(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a.b"}}))[0]
                .contains("a DNS-1035 label must consist of")
        );
        assert!(
            causes(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}))[0]
                .ends_with("must not contain dots")
        );
        let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "system:capi"}});
        assert!(causes(role).is_empty());
        assert_eq!(
            causes(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "a/b"}})
            ),
            [r#"metadata.name: Invalid value: "a/b": may not contain '/'"#]
        );
    }

    #[test]
    fn generate_name_namespace_generation_labels_and_annotations() {
        assert!(
            causes(json!({"kind": "ConfigMap", "metadata": {"generateName": "cm-", "name": "cm-x1"}}))
                .is_empty()
        );
        assert_eq!(
            causes(json!({"kind": "ConfigMap", "metadata": {}})),
            ["metadata.name: Required value: name or generateName is required"]
        );
        let all = causes(
            json!({"kind": "Secret", "metadata": {"name": "s", "namespace": "Bad",
            "generation": -1, "labels": {"a": "-x"}, "annotations": {"b c": ""}}}),
        );
        assert_eq!(all.len(), 4, "{all:?}");
        assert!(all[0].starts_with(r#"metadata.namespace: Invalid value: "Bad": a lowercase RFC 1123 label"#));
        assert_eq!(
            all[1],
            "metadata.generation: Invalid value: -1: must be greater than or equal to 0"
        );
        assert!(all[2].starts_with(r#"metadata.labels: Invalid value: "-x": a valid label"#));
        assert!(all[3].starts_with(r#"metadata.annotations: Invalid value: "b c": name part"#));
        let big = json!({"kind": "ConfigMap", "metadata": {"name": "c", "annotations": {"a": "x".repeat(256 * 1024)}}});
        assert_eq!(
            causes(big),
            ["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }
}
