//! The status the ClusterClass reconciler writes: `status.variables` from the inline definitions
//! (and the definitions of external patches the class's status already holds: DiscoverVariables
//! is not called here), `observedGeneration`, and the `VariablesReconciled` condition. Shared by
//! the controller and the offline API server of `check` and `plan`.

use serde_json::{json, Value};

use crate::api::labels::VARIABLES_RECONCILED_CONDITION;
use crate::api::{ClusterClass, ClusterClassVariable};
use crate::variables::status_variables;

/// The reconciled status of `class` at `generation`; conditions change at `now` (RFC 3339).
pub fn class_status(class: &ClusterClass, generation: i64, now: &str) -> Value {
    let discovered = kept_discoveries(class);
    json!({
        "variables": status_variables(&class.spec.variables, &discovered),
        "observedGeneration": generation,
        "conditions": [variables_condition(&discovered, now)],
    })
}

/// True when `current` already says what `desired` says, transition times aside: the reconciler
/// writes nothing then.
pub fn status_is_current(current: Option<&Value>, desired: &Value) -> bool {
    let Some(current) = current else {
        return false;
    };
    let without_times = |status: &Value| {
        let mut status = status.clone();
        if let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) {
            for condition in conditions.iter_mut().filter_map(Value::as_object_mut) {
                condition.remove("lastTransitionTime");
            }
        }
        status
    };
    without_times(current) == without_times(desired)
}

/// Per external patch with a DiscoverVariables extension, the definitions from it that the class's
/// status lists (as a management cluster's controller wrote them), as the extension declared them.
fn kept_discoveries(class: &ClusterClass) -> Vec<(String, Vec<ClusterClassVariable>)> {
    let listed = class
        .status
        .as_ref()
        .map(|s| s.variables.as_slice())
        .unwrap_or_default();
    class
        .spec
        .patches
        .iter()
        .filter(|p| {
            p.external
                .as_ref()
                .is_some_and(|e| e.discover_variables_extension.is_some())
        })
        .map(|patch| {
            let variables = listed
                .iter()
                .flat_map(|v| v.definitions.iter().map(move |d| (v, d)))
                .filter(|(_, d)| d.from == patch.name)
                .map(|(v, d)| ClusterClassVariable {
                    name: v.name.clone(),
                    required: d.required,
                    metadata: d.metadata.clone(),
                    schema: d.schema.clone(),
                })
                .collect();
            (patch.name.clone(), variables)
        })
        .collect()
}

/// `VariablesReconciled`: True, unless an external patch declares variables that only its
/// runtime extension can tell (no extension is called here) and the status holds none from it,
/// which leaves the class's variables incomplete.
fn variables_condition(discovered: &[(String, Vec<ClusterClassVariable>)], now: &str) -> Value {
    let discovers = discovered.iter().any(|(_, variables)| variables.is_empty());
    if discovers {
        json!({"type": VARIABLES_RECONCILED_CONDITION, "status": "False", "severity": "Warning",
               "reason": "VariablesDiscoveryUnavailable", "lastTransitionTime": now,
               "message": "variables of external patches can only be discovered by their runtime extension"})
    } else {
        json!({"type": VARIABLES_RECONCILED_CONDITION, "status": "True", "lastTransitionTime": now})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(yaml: &str) -> ClusterClass {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    #[test]
    fn inline_variables_are_listed_and_reconciled() {
        let class = class(
            "metadata: {name: c}\nspec:\n  variables:\n  - {name: region, required: true, schema: {openAPIV3Schema: {type: string}}}",
        );
        let status = class_status(&class, 3, "2026-01-01T00:00:00Z");
        assert_eq!(status["observedGeneration"], 3);
        assert_eq!(status["variables"][0]["name"], "region");
        assert_eq!(status["variables"][0]["definitions"][0]["from"], "inline");
        assert_eq!(status["conditions"][0]["status"], "True");
    }

    #[test]
    fn discovered_definitions_in_the_status_are_kept() {
        let class = class(
            "metadata: {name: c}\nspec:\n  patches:\n  - {name: ext, external: {generateExtension: g.e, discoverVariablesExtension: d.e}}\n\
             status:\n  variables:\n  - {name: image, definitions: [{from: ext, schema: {openAPIV3Schema: {type: string}}}]}\n  \
             - {name: gone, definitions: [{from: removed, schema: {openAPIV3Schema: {type: string}}}]}",
        );
        let status = class_status(&class, 1, "2026-01-01T00:00:00Z");
        assert_eq!(status["variables"].as_array().unwrap().len(), 1);
        assert_eq!(status["variables"][0]["definitions"][0]["from"], "ext");
        assert_eq!(status["conditions"][0]["status"], "True");
    }

    #[test]
    fn only_transition_times_may_differ_for_a_status_to_be_current() {
        let class = class("metadata: {name: c}\nspec: {}");
        let old = class_status(&class, 1, "2026-01-01T00:00:00Z");
        assert!(status_is_current(
            Some(&old),
            &class_status(&class, 1, "2026-02-02T00:00:00Z")
        ));
        assert!(!status_is_current(
            Some(&old),
            &class_status(&class, 2, "2026-01-01T00:00:00Z")
        ));
        assert!(!status_is_current(None, &old));
    }
}
