//! The status the ClusterClass reconciler writes: `status.variables` from the inline definitions
//! and those each external patch's DiscoverVariables hook answered, `observedGeneration`, and the
//! `VariablesReady` condition (metav1, in `status.conditions`) with its v1beta1 twin
//! `VariablesReconciled` (in `status.deprecated.v1beta1.conditions`). The caller makes the hook calls and passes their outcomes in.
//! Shared by the controller and the offline API server of `check` and `plan`.

use serde_json::{json, Value};

use crate::api::labels::{VARIABLES_READY_CONDITION, VARIABLES_RECONCILED_CONDITION};
use crate::api::runtime::{DiscoverVariablesResponse, ResponseStatus};
use crate::api::{ClusterClass, ClusterClassVariable};
use crate::field::FieldPath;
use crate::variables::{status_variables, validate_definitions};

/// The reason of a False `VariablesReady` (and `VariablesReconciled`), as Cluster API writes it.
pub const VARIABLE_DISCOVERY_FAILED_REASON: &str = "VariableDiscoveryFailed";

/// The outcome of one external patch's DiscoverVariables call: the patch's name, and the hook's
/// answer or why the call failed.
pub type Discovery = (String, Result<DiscoverVariablesResponse, String>);

/// The external patches of `class` whose variables a DiscoverVariables hook gives: patch name,
/// handler name, and the settings of the request.
pub fn discovering_patches(
    class: &ClusterClass,
) -> impl Iterator<Item = (&str, &str, &std::collections::BTreeMap<String, String>)> {
    class.spec.patches.iter().filter_map(|patch| {
        let external = patch.external.as_ref()?;
        let handler = Some(external.discover_variables_extension.as_str()).filter(|h| !h.is_empty())?;
        Some((patch.name.as_str(), handler, &external.settings))
    })
}

/// The reconciled status of `class` at `generation`, given the DiscoverVariables outcome of each
/// of its [`discovering_patches`]; conditions change at `now` (RFC 3339). When a discovery fails
/// the class keeps its listed variables and `observedGeneration` (as Cluster API does: Clusters
/// of the class then wait) and `VariablesReady` (and `VariablesReconciled`) is False with the
/// reasons.
pub fn class_status(class: &ClusterClass, generation: i64, discoveries: &[Discovery], now: &str) -> Value {
    let mut discovered = Vec::with_capacity(discoveries.len());
    let mut errors = Vec::new();
    for (patch, outcome) in discoveries {
        match discovered_variables(patch, outcome) {
            Ok(variables) => discovered.push((patch.clone(), variables)),
            Err(error) => errors.push(error),
        }
    }
    if errors.is_empty() {
        return json!({
            "variables": status_variables(&class.spec.variables, &discovered),
            "observedGeneration": generation,
            "conditions": [{"type": VARIABLES_READY_CONDITION, "status": "True",
                "reason": VARIABLES_READY_CONDITION, "observedGeneration": generation, "lastTransitionTime": now}],
            "deprecated": {"v1beta1": {"conditions": [
                {"type": VARIABLES_RECONCILED_CONDITION, "status": "True", "lastTransitionTime": now}]}},
        });
    }
    let kept = class.status.as_ref();
    let message = format!("VariableDiscovery failed: {}", aggregate(&errors));
    let mut status = json!({
        "variables": kept.map(|s| s.variables.as_slice()).unwrap_or_default(),
        "conditions": [{
            "type": VARIABLES_READY_CONDITION, "status": "False", "reason": VARIABLE_DISCOVERY_FAILED_REASON,
            "message": message, "observedGeneration": generation, "lastTransitionTime": now,
        }],
        "deprecated": {"v1beta1": {"conditions": [{
            "type": VARIABLES_RECONCILED_CONDITION, "status": "False", "severity": "Error",
            "reason": VARIABLE_DISCOVERY_FAILED_REASON, "lastTransitionTime": now, "message": message,
        }]}},
    });
    if let Some(observed) = kept.and_then(|s| s.observed_generation) {
        status["observedGeneration"] = json!(observed);
    }
    status
}

/// For reconciling without calling extensions (the offline commands): each discovering patch's
/// definitions as the class's status already lists them (a management cluster's controller, or
/// `plan`'s own call of the hook, wrote them). A patch the status lists nothing from answered
/// no variables when the status says the variables are ready (its discovery succeeded), and
/// counts as not discovered otherwise.
pub fn listed_discoveries(class: &ClusterClass) -> Vec<Discovery> {
    let status = class.status.as_ref();
    let listed = status.map(|s| s.variables.as_slice()).unwrap_or_default();
    let discovered = status.is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == VARIABLES_READY_CONDITION && c.status == "True")
    });
    discovering_patches(class)
        .map(|(patch, _, _)| {
            let variables: Vec<ClusterClassVariable> = listed
                .iter()
                .flat_map(|v| v.definitions.iter().map(move |d| (v, d)))
                .filter(|(_, d)| d.from == patch)
                .map(|(v, d)| ClusterClassVariable {
                    name: v.name.clone(),
                    required: d.required,
                    deprecated_v1_beta1_metadata: d.deprecated_v1_beta1_metadata.clone(),
                    schema: d.schema.clone(),
                })
                .collect();
            let outcome = if variables.is_empty() && !discovered {
                Err(
                    "variables of external patches can only be discovered by their runtime extension"
                        .to_owned(),
                )
            } else {
                Ok(DiscoverVariablesResponse {
                    api_version: String::new(),
                    kind: String::new(),
                    status: ResponseStatus::Success,
                    message: String::new(),
                    variables,
                })
            };
            (patch.to_owned(), outcome)
        })
        .collect()
}

/// The definitions one patch's hook answered, checked as a class's own are; or why there are none.
fn discovered_variables(
    patch: &str,
    outcome: &Result<DiscoverVariablesResponse, String>,
) -> Result<Vec<ClusterClassVariable>, String> {
    let response = outcome
        .as_ref()
        .map_err(|error| format!("failed to call DiscoverVariables for patch {patch}: {error}"))?;
    if response.status == ResponseStatus::Failure {
        return Err(format!(
            "patch {patch} returned status \"Failure\" with message {:?}",
            response.message
        ));
    }
    let errors = validate_definitions(&response.variables, &FieldPath::new(patch).child("variables"));
    if errors.is_empty() {
        Ok(response.variables.clone())
    } else {
        Err(aggregate(
            &errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ))
    }
}

/// Several errors as one message, as Go's error aggregates print them.
fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// True when `current` already says what `desired` says, transition times aside: the reconciler
/// writes nothing then.
pub fn status_is_current(current: Option<&Value>, desired: &Value) -> bool {
    let Some(current) = current else {
        return false;
    };
    let without_times = |status: &Value| {
        let mut status = status.clone();
        for pointer in ["/conditions", "/deprecated/v1beta1/conditions"] {
            if let Some(conditions) = status.pointer_mut(pointer).and_then(Value::as_array_mut) {
                for condition in conditions.iter_mut().filter_map(Value::as_object_mut) {
                    condition.remove("lastTransitionTime");
                }
            }
        }
        status
    };
    without_times(current) == without_times(desired)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-01-01T00:00:00Z";

    fn class(yaml: &str) -> ClusterClass {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    fn answer(variables: &str) -> Result<DiscoverVariablesResponse, String> {
        Ok(DiscoverVariablesResponse {
            api_version: String::new(),
            kind: String::new(),
            status: ResponseStatus::Success,
            message: String::new(),
            variables: serde_yaml_ng::from_str(variables).unwrap(),
        })
    }

    const PROXY_CLASS: &str = "metadata: {name: c}\nspec:\n  variables:\n  \
        - {name: http-proxy, schema: {openAPIV3Schema: {type: string, default: proxy.example.com}}}\n  patches:\n  \
        - {name: lbImageRepository, external: {generateExtension: g.e, discoverVariablesExtension: d.e, settings: {k: v}}}\n\
        status:\n  observedGeneration: 2\n  variables:\n  \
        - {name: old, definitions: [{from: lbImageRepository, schema: {openAPIV3Schema: {type: string}}}]}";

    #[test]
    fn inline_variables_are_listed_and_reconciled() {
        let class = class(
            "metadata: {name: c}\nspec:\n  variables:\n  - {name: region, required: true, schema: {openAPIV3Schema: {type: string}}}",
        );
        let status = class_status(&class, 3, &[], NOW);
        assert_eq!(status["observedGeneration"], 3);
        assert_eq!(status["variables"][0]["name"], "region");
        assert_eq!(status["variables"][0]["definitions"][0]["from"], "inline");
        assert_eq!(status["conditions"][0]["status"], "True");
    }

    #[test]
    fn discovered_definitions_merge_with_inline_ones_and_conflicts_are_flagged() {
        let class = class(PROXY_CLASS);
        assert_eq!(
            discovering_patches(&class)
                .map(|(p, h, s)| (p, h, s.get("k").cloned()))
                .collect::<Vec<_>>(),
            [("lbImageRepository", "d.e", Some("v".to_owned()))]
        );
        let discovered = answer("[{name: http-proxy, schema: {openAPIV3Schema: {type: object}}}]");
        let status = class_status(&class, 3, &[("lbImageRepository".into(), discovered)], NOW);
        assert_eq!(status["observedGeneration"], 3);
        let variables = status["variables"].as_array().unwrap();
        assert_eq!(variables.len(), 1, "{status}");
        assert_eq!(variables[0]["definitionsConflict"], true);
        assert_eq!(variables[0]["definitions"][0]["from"], "inline");
        assert_eq!(variables[0]["definitions"][1]["from"], "lbImageRepository");
        assert_eq!(status["conditions"][0]["status"], "True");
    }

    #[test]
    fn a_failed_discovery_keeps_the_listed_variables_and_generation() {
        let class = class(PROXY_CLASS);
        let failed = (
            "lbImageRepository".to_owned(),
            Err("connection refused".to_owned()),
        );
        let status = class_status(&class, 3, &[failed], NOW);
        assert_eq!(status["observedGeneration"], 2);
        assert_eq!(status["variables"][0]["name"], "old");
        let condition = &status["conditions"][0];
        assert_eq!(condition["status"], "False");
        assert_eq!(condition["reason"], VARIABLE_DISCOVERY_FAILED_REASON);
        assert_eq!(
            condition["message"],
            "VariableDiscovery failed: failed to call DiscoverVariables for patch lbImageRepository: connection refused"
        );
    }

    #[test]
    fn failure_answers_and_invalid_definitions_are_discovery_failures() {
        let class = class(PROXY_CLASS);
        let mut refused = answer("[]");
        if let Ok(response) = refused.as_mut() {
            response.status = ResponseStatus::Failure;
            response.message = "no settings".into();
        }
        let invalid = answer("[{name: builtin, schema: {openAPIV3Schema: {type: string}}}]");
        let status = class_status(&class, 3, &[("a".into(), refused), ("b".into(), invalid)], NOW);
        let message = status["conditions"][0]["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "VariableDiscovery failed: [patch a returned status \"Failure\" with message \"no settings\", b.variables[builtin].name: Invalid value"
            ),
            "{message}"
        );
    }

    #[test]
    fn listed_definitions_stand_in_for_discovery_offline() {
        let class = class(PROXY_CLASS);
        let listed = listed_discoveries(&class);
        let status = class_status(&class, 3, &listed, NOW);
        assert_eq!(status["variables"].as_array().unwrap().len(), 2, "{status}");
        assert_eq!(status["conditions"][0]["status"], "True");
        let bare = self::class(
            "metadata: {name: c}\nspec:\n  patches:\n  - {name: ext, external: {generateExtension: g.e, discoverVariablesExtension: d.e}}",
        );
        let status = class_status(&bare, 1, &listed_discoveries(&bare), NOW);
        assert_eq!(status["conditions"][0]["status"], "False");
        assert!(status.get("observedGeneration").is_none());
    }

    #[test]
    fn a_patch_listing_nothing_after_a_successful_discovery_answered_no_variables() {
        let yaml = "metadata: {name: c}\nspec:\n  variables:\n  \
            - {name: region, schema: {openAPIV3Schema: {type: string}}}\n  patches:\n  \
            - {name: ext, external: {generateExtension: g.e, discoverVariablesExtension: d.e}}";
        let discovered = class_status(&class(yaml), 1, &[("ext".into(), answer("[]"))], NOW);
        assert_eq!(discovered["conditions"][0]["status"], "True");
        let mut listed = class(yaml);
        listed.status = serde_json::from_value(discovered).unwrap();
        let status = class_status(&listed, 2, &listed_discoveries(&listed), NOW);
        assert_eq!(status["conditions"][0]["status"], "True", "{status}");
        assert_eq!(status["variables"][0]["name"], "region");
        assert_eq!(status["observedGeneration"], 2);
    }

    #[test]
    fn only_transition_times_may_differ_for_a_status_to_be_current() {
        let class = class("metadata: {name: c}\nspec: {}");
        let old = class_status(&class, 1, &[], NOW);
        assert!(status_is_current(
            Some(&old),
            &class_status(&class, 1, &[], "2026-02-02T00:00:00Z")
        ));
        assert!(!status_is_current(Some(&old), &class_status(&class, 2, &[], NOW)));
        assert!(!status_is_current(None, &old));
    }
}
