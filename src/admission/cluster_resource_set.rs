//! The ClusterResourceSet webhooks: defaulting (`spec.strategy` to `ApplyOnce`) and validation
//! (a cluster selector that parses and is not empty, `strategy` and `clusterSelector` immutable,
//! Secret or ConfigMap resources). The checks the CRD schema makes (enums, lengths) are made here
//! too, so an offline `check` refuses what the API server would. A resource listed twice is
//! admitted, as Cluster API admits it (it is applied and recorded once).

use super::go_printed::label_selector;
use super::Outcome;
use crate::api::selector::Selector;
use crate::api::{
    ClusterResourceSet, ResourceRef, MAX_RESOURCES, MAX_RESOURCE_NAME, RESOURCE_KINDS, STRATEGIES,
    STRATEGY_APPLY_ONCE,
};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// Mutating webhook: an empty strategy becomes `ApplyOnce`.
pub fn default(set: &mut ClusterResourceSet) {
    if set.spec.strategy.is_empty() {
        set.spec.strategy = STRATEGY_APPLY_ONCE.to_owned();
    }
}

/// Validating webhook for create (`old` is None) and update.
pub fn validate(new: &ClusterResourceSet, old: Option<&ClusterResourceSet>) -> Outcome {
    let spec = FieldPath::new("spec");
    let selector_path = spec.child("clusterSelector");
    // Cluster API shows the selector as Go prints the typed value.
    let selector_value = || label_selector(&new.spec.cluster_selector);
    let mut errors = FieldErrors::new();
    match Selector::parse(&new.spec.cluster_selector) {
        Err(err) => errors.push(FieldError::invalid_shown(
            &selector_path,
            selector_value(),
            err.to_string(),
        )),
        Ok(selector) if selector.is_empty() => errors.push(FieldError::invalid_shown(
            &selector_path,
            selector_value(),
            "selector must not be empty",
        )),
        Ok(_) => {}
    }
    let strategy = &new.spec.strategy;
    if !strategy.is_empty() && !STRATEGIES.contains(&strategy.as_str()) {
        errors.push(FieldError::not_supported(
            &spec.child("strategy"),
            strategy.as_str(),
            &STRATEGIES,
        ));
    }
    errors.extend(validate_resources(&new.spec.resources, &spec.child("resources")));
    if let Some(old) = old {
        if !old.spec.strategy.is_empty() && old.spec.strategy != *strategy {
            errors.push(FieldError::invalid(
                &spec.child("strategy"),
                strategy.as_str(),
                "field is immutable",
            ));
        }
        if old.spec.cluster_selector != new.spec.cluster_selector {
            errors.push(FieldError::invalid_shown(
                &selector_path,
                selector_value(),
                "field is immutable",
            ));
        }
    }
    Outcome::from_errors(errors)
}

/// The resource list: at most [`MAX_RESOURCES`], each a valid reference.
fn validate_resources(resources: &[ResourceRef], path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    if resources.len() > MAX_RESOURCES {
        errors.push(FieldError::too_many(path, resources.len(), MAX_RESOURCES));
    }
    for (i, resource) in resources.iter().enumerate() {
        errors.extend(validate_resource_ref(resource, &path.index(i)));
    }
    errors
}

/// A reference to a Secret or ConfigMap: a supported kind and a name of 1 to 253 bytes.
pub(crate) fn validate_resource_ref(resource: &ResourceRef, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let name = path.child("name");
    if resource.name.is_empty() {
        errors.push(FieldError::required(&name, ""));
    } else if resource.name.len() > MAX_RESOURCE_NAME {
        errors.push(FieldError::too_long(&name, MAX_RESOURCE_NAME));
    }
    if !RESOURCE_KINDS.contains(&resource.kind.as_str()) {
        errors.push(FieldError::not_supported(
            &path.child("kind"),
            resource.kind.as_str(),
            &RESOURCE_KINDS,
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(spec: &str) -> ClusterResourceSet {
        serde_yaml_ng::from_str(&format!(
            "metadata: {{name: crs1, namespace: default}}\nspec: {spec}"
        ))
        .unwrap()
    }

    fn errors(outcome: Outcome) -> Vec<String> {
        outcome.errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn strategy_defaults_to_apply_once_and_is_kept_when_set() {
        let mut empty = set("{clusterSelector: {matchLabels: {a: b}}}");
        default(&mut empty);
        assert_eq!(empty.spec.strategy, "ApplyOnce");
        let mut reconcile = set("{strategy: Reconcile}");
        default(&mut reconcile);
        assert_eq!(reconcile.spec.strategy, "Reconcile");
    }

    #[test]
    fn a_valid_set_passes_and_an_empty_selector_does_not() {
        let good = set("{clusterSelector: {matchLabels: {cni: calico}}, resources: [{name: a, kind: Secret}, {name: a, kind: ConfigMap}]}");
        assert!(validate(&good, None).errors.is_empty());
        assert_eq!(
            errors(validate(&set("{clusterSelector: {}}"), None)),
            ["spec.clusterSelector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: selector must not be empty"]
        );
    }

    #[test]
    fn resources_must_be_secrets_or_config_maps_and_may_repeat() {
        let bad = set(
            "{clusterSelector: {matchLabels: {a: b}}, strategy: Sometimes, resources: [{name: x, kind: Secret}, {name: '', kind: Pod}, {name: x, kind: Secret}]}",
        );
        assert_eq!(
            errors(validate(&bad, None)),
            [
                r#"spec.strategy: Unsupported value: "Sometimes": supported values: "ApplyOnce", "Reconcile""#,
                "spec.resources[1].name: Required value",
                r#"spec.resources[1].kind: Unsupported value: "Pod": supported values: "Secret", "ConfigMap""#,
            ]
        );
    }

    #[test]
    fn strategy_and_selector_are_immutable() {
        let old = set("{clusterSelector: {matchLabels: {a: b}}, strategy: ApplyOnce}");
        let new = set("{clusterSelector: {matchLabels: {a: c}}, strategy: Reconcile}");
        assert_eq!(
            errors(validate(&new, Some(&old))),
            [
                r#"spec.strategy: Invalid value: "Reconcile": field is immutable"#,
                r#"spec.clusterSelector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"c"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"#,
            ]
        );
        let unset = set("{clusterSelector: {matchLabels: {a: b}}}");
        let now_set = set("{clusterSelector: {matchLabels: {a: b}}, strategy: Reconcile}");
        assert!(
            validate(&now_set, Some(&unset)).errors.is_empty(),
            "an unset strategy may be set"
        );
    }
}
