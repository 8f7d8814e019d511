//! Label and annotation checks of topology metadata, worded like the API server's
//! `ValidateLabels` and `ValidateAnnotations` (qualified-name keys, label values, total size).

use std::collections::BTreeMap;

use crate::api::convert::{v1beta1_fields_problems, V1BETA1_FIELDS};
use crate::api::names::{label_value_problems, qualified_name_problems};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// Largest total size of a map of annotations, keys and values together.
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// Validates labels and annotations found at `path` (`<path>.labels`, `<path>.annotations`).
pub fn validate(
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    path: &FieldPath,
) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let labels_path = path.child("labels");
    for (key, value) in labels {
        for problem in qualified_name_problems(key) {
            errors.push(FieldError::invalid(&labels_path, key.as_str(), problem));
        }
        for problem in label_value_problems(value) {
            errors.push(FieldError::invalid(&labels_path, value.as_str(), problem));
        }
    }
    let annotations_path = path.child("annotations");
    for key in annotations.keys() {
        // Annotation keys are qualified names in which case does not matter.
        for problem in qualified_name_problems(&key.to_lowercase()) {
            errors.push(FieldError::invalid(&annotations_path, key.as_str(), problem));
        }
    }
    let size: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > ANNOTATIONS_MAX_BYTES {
        errors.push(FieldError::too_long(&annotations_path, ANNOTATIONS_MAX_BYTES));
    }
    errors
}

/// The hub annotation [`V1BETA1_FIELDS`] of a `kind` object (`Cluster`, `ClusterClass`): each
/// entry must be one of the v1beta1 fields the annotation exists for, with a value that field
/// accepts. Checked when the annotation is new or changed (`old` is the stored object's), so an
/// object stored before the check can still be updated; a bad entry it keeps is ignored on read.
pub fn validate_v1beta1_fields(kind: &str, new: Option<&String>, old: Option<&String>) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let Some(text) = new.filter(|text| Some(*text) != old) else {
        return errors;
    };
    let path = FieldPath::new("metadata")
        .child("annotations")
        .key(V1BETA1_FIELDS);
    for (value, detail) in v1beta1_fields_problems(kind, text) {
        errors.push(FieldError::invalid(&path, value, detail));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
        with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
        '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

    fn metadata(yaml: &str) -> BTreeMap<String, String> {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    fn causes(errors: &FieldErrors) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn valid_keys_and_values_pass() {
        let labels = metadata("{example.com/MyName: v_1, a: '', topology.cluster.x-k8s.io/owned: ''}");
        let annotations = metadata("{Example.COM/Mixed-Case: anything at all}");
        assert!(validate(&labels, &annotations, &FieldPath::new("metadata")).is_empty());
    }

    #[test]
    fn key_problems_come_before_value_problems() {
        let labels = metadata("{-bad: -bad}");
        let errors = validate(
            &labels,
            &BTreeMap::new(),
            &FieldPath::new("spec").child("metadata"),
        );
        assert_eq!(
            causes(&errors),
            vec![
                format!("spec.metadata.labels: Invalid value: \"-bad\": name part {NAME_RULE}"),
                "spec.metadata.labels: Invalid value: \"-bad\": a valid label must be an empty string or consist of \
                 alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. \
                 'MyValue',  or 'my_value',  or '12345', regex used for validation is \
                 '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
                    .to_owned(),
            ]
        );
    }

    #[test]
    fn annotation_keys_ignore_case_and_total_size_is_bounded() {
        let mut annotations = metadata("{'bad key': x}");
        annotations.insert("big".into(), "x".repeat(ANNOTATIONS_MAX_BYTES));
        let errors = validate(&BTreeMap::new(), &annotations, &FieldPath::new("m"));
        assert_eq!(
            causes(&errors),
            vec![
                format!("m.annotations: Invalid value: \"bad key\": name part {NAME_RULE}"),
                "m.annotations: Too long: may not be more than 262144 bytes".to_owned(),
            ]
        );
    }

    #[test]
    fn v1beta1_fields_accept_only_their_fields_and_ratchet() {
        let bad = r#"[{"path": "/spec/topology/rolloutAfter", "value": "not-a-time; $(rm -rf /)"},
                      {"path": "/spec/paused", "value": true}]"#
            .to_owned();
        let errors = validate_v1beta1_fields("Cluster", Some(&bad), None);
        assert_eq!(
            causes(&errors),
            vec![
                "metadata.annotations[topology.cluster.x-k8s.io/v1beta1-fields]: Invalid value: \"not-a-time; $(rm -rf \
                 /)\": entry 0: spec.topology.rolloutAfter in body must be of type date-time: \"not-a-time; $(rm -rf /)\""
                    .to_owned(),
                "metadata.annotations[topology.cluster.x-k8s.io/v1beta1-fields]: Invalid value: \"/spec/paused\": entry 1: \
                 not a v1beta1 field of a Cluster that this annotation keeps"
                    .to_owned(),
            ]
        );
        assert!(validate_v1beta1_fields("Cluster", Some(&bad), Some(&bad)).is_empty());
        let good = r#"[{"path": "/spec/topology/rolloutAfter", "value": "2026-01-01T00:00:00Z"}]"#.to_owned();
        assert!(validate_v1beta1_fields("Cluster", Some(&good), Some(&bad)).is_empty());
    }
}
