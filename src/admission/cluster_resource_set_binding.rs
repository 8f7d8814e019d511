//! The ClusterResourceSetBinding webhook: validation only. `spec.clusterName` is immutable once
//! set, as in Cluster API; the limits of the CRD schema (list sizes, name lengths, resource
//! kinds) are checked too, for the offline `check`.

use super::cluster_resource_set::validate_resource_ref;
use super::Outcome;
use crate::api::{ClusterResourceSetBinding, ResourceSetBinding, MAX_RESOURCES, MAX_RESOURCE_NAME};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// Longest Cluster name a binding may name.
const MAX_CLUSTER_NAME: usize = 63;
/// Longest recorded hash.
const MAX_HASH: usize = 256;

/// Validating webhook for create (`old` is None) and update.
pub fn validate(new: &ClusterResourceSetBinding, old: Option<&ClusterResourceSetBinding>) -> Outcome {
    let spec = FieldPath::new("spec");
    let mut errors = FieldErrors::new();
    let cluster_name = &new.spec.cluster_name;
    if cluster_name.len() > MAX_CLUSTER_NAME {
        errors.push(FieldError::too_long(&spec.child("clusterName"), MAX_CLUSTER_NAME));
    }
    let bindings = spec.child("bindings");
    if new.spec.bindings.len() > MAX_RESOURCES {
        errors.push(FieldError::too_many(
            &bindings,
            new.spec.bindings.len(),
            MAX_RESOURCES,
        ));
    }
    for (i, binding) in new.spec.bindings.iter().enumerate() {
        errors.extend(validate_binding(binding, &bindings.index(i)));
    }
    if let Some(old) = old {
        let old_name = &old.spec.cluster_name;
        if !old_name.is_empty() && old_name != cluster_name {
            errors.push(FieldError::invalid(
                &spec.child("clusterName"),
                cluster_name.as_str(),
                "field is immutable",
            ));
        }
    }
    Outcome::from_errors(errors)
}

fn validate_binding(binding: &ResourceSetBinding, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let name = path.child("clusterResourceSetName");
    if binding.cluster_resource_set_name.is_empty() {
        errors.push(FieldError::required(&name, ""));
    } else if binding.cluster_resource_set_name.len() > MAX_RESOURCE_NAME {
        errors.push(FieldError::too_long(&name, MAX_RESOURCE_NAME));
    }
    let resources = path.child("resources");
    if binding.resources.len() > MAX_RESOURCES {
        errors.push(FieldError::too_many(
            &resources,
            binding.resources.len(),
            MAX_RESOURCES,
        ));
    }
    for (i, resource) in binding.resources.iter().enumerate() {
        let item = resources.index(i);
        errors.extend(validate_resource_ref(&resource.resource, &item));
        if resource.hash.len() > MAX_HASH {
            errors.push(FieldError::too_long(&item.child("hash"), MAX_HASH));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(spec: &str) -> ClusterResourceSetBinding {
        serde_yaml_ng::from_str(&format!(
            "metadata: {{name: c1, namespace: default}}\nspec: {spec}"
        ))
        .unwrap()
    }

    fn errors(outcome: Outcome) -> Vec<String> {
        outcome.errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn cluster_name_is_immutable_once_set() {
        let old = binding("{clusterName: c1}");
        assert_eq!(
            errors(validate(&binding("{clusterName: c2}"), Some(&old))),
            [r#"spec.clusterName: Invalid value: "c2": field is immutable"#]
        );
        assert!(validate(&binding("{clusterName: c1}"), Some(&binding("{}")))
            .errors
            .is_empty());
        assert!(validate(&binding("{clusterName: c1}"), Some(&old))
            .errors
            .is_empty());
    }

    #[test]
    fn bindings_must_fit_the_schema() {
        let bad = binding(
            "{bindings: [{clusterResourceSetName: '', resources: [{name: a, kind: Deployment, applied: true}]}]}",
        );
        assert_eq!(
            errors(validate(&bad, None)),
            [
                "spec.bindings[0].clusterResourceSetName: Required value",
                r#"spec.bindings[0].resources[0].kind: Unsupported value: "Deployment": supported values: "Secret", "ConfigMap""#,
            ]
        );
    }
}
