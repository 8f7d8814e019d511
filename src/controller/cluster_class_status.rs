//! The status the ClusterClass controller writes on a v1beta2 class, as Cluster API v1.14 does:
//! `variables` and `observedGeneration` as the engine decides them
//! ([`class_status`](crate::topology::class_status::class_status)), `VariablesReady` and
//! `RefVersionsUpToDate` as metav1 conditions in `status.conditions`, and their v1beta1 twins
//! (`VariablesReconciled`, `RefVersionsUpToDate`) in `status.deprecated.v1beta1.conditions`.

use serde_json::{json, Value};

use crate::api::conditions::{find, meta_condition, set_condition, V1BETA1_CONDITIONS};

/// The metav1 condition of the class's variables.
pub const VARIABLES_READY: &str = "VariablesReady";
/// Its v1beta1 twin.
const VARIABLES_RECONCILED: &str = "VariablesReconciled";
/// Why variables are not ready.
const VARIABLE_DISCOVERY_FAILED: &str = "VariableDiscoveryFailed";

/// The two variables conditions for the engine's verdict (its `VariablesReconciled` or
/// `VariablesReady` condition: True, or False with the discovery error as message).
fn variables_conditions(engine: &Value) -> (Value, Value) {
    let conditions = engine.get("conditions");
    let verdict = find(conditions, VARIABLES_RECONCILED).or_else(|| find(conditions, VARIABLES_READY));
    let failed = verdict.filter(|c| c["status"] != "True");
    match failed {
        None => (
            meta_condition(VARIABLES_READY, "True", VARIABLES_READY, ""),
            json!({"type": VARIABLES_RECONCILED, "status": "True"}),
        ),
        Some(condition) => {
            let message = condition["message"].as_str().unwrap_or_default();
            (
                meta_condition(VARIABLES_READY, "False", VARIABLE_DISCOVERY_FAILED, message),
                json!({"type": VARIABLES_RECONCILED, "status": "False", "severity": "Error",
                       "reason": VARIABLE_DISCOVERY_FAILED, "message": message}),
            )
        }
    }
}

/// A merge patch of the class's `status` (currently `current`) from the engine's `engine` status
/// and the `RefVersionsUpToDate` conditions (metav1, v1beta1), the metav1 ones stamped with
/// `generation`; `None` when the class already says all of it.
pub fn class_status_patch(
    current: Option<&Value>,
    engine: &Value,
    ref_versions: (Value, Value),
    generation: i64,
    now: &str,
) -> Option<Value> {
    let (variables_meta, variables_old) = variables_conditions(engine);
    let (refs_meta, refs_old) = ref_versions;
    let mut meta = current.and_then(|s| s.get("conditions")).cloned();
    let mut old = current.and_then(|s| s.pointer(V1BETA1_CONDITIONS)).cloned();
    let mut changed = false;
    for mut condition in [variables_meta, refs_meta] {
        condition["observedGeneration"] = json!(generation);
        if let Some(list) = set_condition(meta.as_ref(), condition, now) {
            meta = Some(Value::Array(list));
            changed = true;
        }
    }
    let mut old_changed = false;
    for condition in [variables_old, refs_old] {
        if let Some(list) = set_condition(old.as_ref(), condition, now) {
            old = Some(Value::Array(list));
            old_changed = true;
        }
    }
    let mut patch = json!({});
    for key in ["variables", "observedGeneration"] {
        let desired = engine.get(key).filter(|v| !v.is_null());
        if let Some(desired) = desired.filter(|d| current.and_then(|s| s.get(key)) != Some(*d)) {
            patch[key] = desired.clone();
        }
    }
    if changed {
        patch["conditions"] = meta.unwrap_or_else(|| json!([]));
    }
    if old_changed {
        patch["deprecated"] = json!({"v1beta1": {"conditions": old}});
    }
    (patch.as_object().is_some_and(|p| !p.is_empty())).then_some(patch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs() -> (Value, Value) {
        (
            meta_condition("RefVersionsUpToDate", "True", "RefVersionsUpToDate", ""),
            json!({"type": "RefVersionsUpToDate", "status": "True"}),
        )
    }

    #[test]
    fn a_reconciled_class_gets_both_shapes_once() {
        let engine = json!({"variables": [{"name": "x"}], "observedGeneration": 4,
            "conditions": [{"type": "VariablesReconciled", "status": "True"}]});
        let patch = class_status_patch(None, &engine, refs(), 4, "T0").unwrap();
        assert_eq!(patch["observedGeneration"], 4);
        let types: Vec<&str> = patch["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].as_str().unwrap())
            .collect();
        assert_eq!(types, ["VariablesReady", "RefVersionsUpToDate"]);
        assert_eq!(patch["conditions"][0]["reason"], "VariablesReady");
        assert_eq!(patch["conditions"][0]["observedGeneration"], 4);
        assert_eq!(
            patch["deprecated"]["v1beta1"]["conditions"][0],
            json!({"type": "VariablesReconciled", "status": "True", "lastTransitionTime": "T0"})
        );
        assert_eq!(class_status_patch(Some(&patch), &engine, refs(), 4, "T1"), None);
    }

    #[test]
    fn a_failed_discovery_is_variables_ready_false() {
        let engine = json!({"variables": [], "conditions": [{"type": "VariablesReconciled",
            "status": "False", "reason": "VariableDiscoveryFailed", "message": "VariableDiscovery failed: x"}]});
        let patch = class_status_patch(None, &engine, refs(), 1, "T0").unwrap();
        assert_eq!(patch["conditions"][0]["status"], "False");
        assert_eq!(patch["conditions"][0]["reason"], "VariableDiscoveryFailed");
        assert_eq!(patch["conditions"][0]["message"], "VariableDiscovery failed: x");
        assert_eq!(
            patch["deprecated"]["v1beta1"]["conditions"][0]["severity"],
            "Error"
        );
    }
}
