//! The status of an ExtensionConfig after a discovery: the handlers found (kept from before when
//! discovery failed, as Cluster API keeps them) and the `Discovered` condition: a metav1 Condition
//! in `status.conditions` (reasons `Discovered` / `NotDiscovered`) and the v1beta1 one in
//! `status.deprecated.v1beta1.conditions` (`DiscoveryFailed`), as Cluster API v1.14 writes them on
//! a `runtime.cluster.x-k8s.io/v1beta2` ExtensionConfig.

use serde_json::{json, Value};

use crate::api::conditions::condition_message;
use crate::api::runtime::{ExtensionHandler, GroupVersionHook, HOOKS_API_VERSION};
use crate::runtime::Registration;

/// The condition discovery sets.
pub const DISCOVERED_CONDITION: &str = "Discovered";
/// The v1beta1 reason of a failed discovery.
pub const DISCOVERY_FAILED_REASON: &str = "DiscoveryFailed";
/// The v1beta2 reasons.
const DISCOVERED_REASON: &str = "Discovered";
const NOT_DISCOVERED_REASON: &str = "NotDiscovered";

/// How a registered handler is listed in `status.handlers`.
pub fn status_handler(registration: &Registration) -> ExtensionHandler {
    ExtensionHandler {
        name: registration.name.clone(),
        request_hook: GroupVersionHook {
            api_version: HOOKS_API_VERSION.to_owned(),
            hook: registration.hook.clone(),
        },
        timeout_seconds: Some(i32::try_from(registration.timeout.as_secs()).unwrap_or(i32::MAX)),
        failure_policy: Some(registration.failure_policy),
    }
}

/// The status an ExtensionConfig whose status is `current` and generation `generation` gets
/// from a discovery `outcome` (its handlers, or why there are none) at `now` (RFC 3339).
/// Conditions of other types are kept, and a condition whose status does not change keeps its
/// transition time, so an unchanged outcome gives back `current`.
pub fn discovered_status(
    current: Option<&Value>,
    generation: i64,
    outcome: &Result<Vec<ExtensionHandler>, String>,
    now: &str,
) -> Value {
    let handlers = match outcome {
        Ok(handlers) => json!(handlers),
        Err(_) => current
            .and_then(|s| s.get("handlers"))
            .cloned()
            .unwrap_or_else(|| json!([])),
    };
    let (v1beta1, v1beta2) = match outcome {
        Ok(_) => (
            json!({"type": DISCOVERED_CONDITION, "status": "True"}),
            json!({"type": DISCOVERED_CONDITION, "status": "True", "reason": DISCOVERED_REASON,
                   "message": "", "observedGeneration": generation}),
        ),
        Err(error) => {
            let message = condition_message(&format!("Error in discovery: {error}"));
            (
                json!({"type": DISCOVERED_CONDITION, "status": "False", "severity": "Error",
                       "reason": DISCOVERY_FAILED_REASON, "message": message}),
                json!({"type": DISCOVERED_CONDITION, "status": "False", "reason": NOT_DISCOVERED_REASON,
                       "message": message, "observedGeneration": generation}),
            )
        }
    };
    let conditions = |pointer: &str, condition: Value| {
        let old = current
            .and_then(|s| s.pointer(pointer))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        with_condition(old, condition, now)
    };
    json!({
        "handlers": handlers,
        "conditions": conditions("/conditions", v1beta2),
        "deprecated": {"v1beta1": {"conditions": conditions("/deprecated/v1beta1/conditions", v1beta1)}},
    })
}

/// `conditions` with `condition` in place of the one of its type; the transition time is the
/// old one when the status is the same, `now` otherwise.
fn with_condition(conditions: &[Value], mut condition: Value, now: &str) -> Value {
    let kind = condition["type"].clone();
    let old = conditions.iter().find(|c| c["type"] == kind);
    condition["lastTransitionTime"] = match old {
        Some(old) if old["status"] == condition["status"] && old.get("lastTransitionTime").is_some() => {
            old["lastTransitionTime"].clone()
        }
        _ => json!(now),
    };
    let mut merged: Vec<Value> = conditions.iter().filter(|c| c["type"] != kind).cloned().collect();
    merged.push(condition);
    merged.sort_by(|a, b| a["type"].as_str().cmp(&b["type"].as_str()));
    Value::Array(merged)
}

/// Whether the status `current` already says what `desired` says, perhaps listing the handlers
/// in another order. A discovery answer lists them in any order (Cluster API's Runtime SDK builds
/// it from a Go map, so a restarted extension lists them anew): a new order alone is not written.
pub fn says_the_same(current: Option<&Value>, desired: &Value) -> bool {
    let by_name = |status: &Value| {
        let mut status = status.clone();
        if let Some(handlers) = status.get_mut("handlers").and_then(Value::as_array_mut) {
            handlers.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        }
        status
    };
    current.is_some_and(|current| current == desired || by_name(current) == by_name(desired))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::runtime::FailurePolicy;

    const T0: &str = "2026-01-01T00:00:00Z";
    const T1: &str = "2026-01-01T00:05:00Z";

    fn handler(name: &str) -> ExtensionHandler {
        ExtensionHandler {
            name: name.to_owned(),
            request_hook: GroupVersionHook {
                api_version: HOOKS_API_VERSION.to_owned(),
                hook: "GeneratePatches".to_owned(),
            },
            timeout_seconds: Some(10),
            failure_policy: Some(FailurePolicy::Fail),
        }
    }

    #[test]
    fn a_discovery_lists_the_handlers_and_is_stable() {
        let status = discovered_status(None, 1, &Ok(vec![handler("generate.ext")]), T0);
        assert_eq!(status["handlers"][0]["name"], "generate.ext");
        assert_eq!(status["handlers"][0]["failurePolicy"], "Fail");
        assert_eq!(status["handlers"][0]["timeoutSeconds"], 10);
        assert_eq!(
            status["deprecated"]["v1beta1"]["conditions"],
            json!([{"type": "Discovered", "status": "True", "lastTransitionTime": T0}])
        );
        assert_eq!(
            status["conditions"],
            json!([{"type": "Discovered", "status": "True", "reason": "Discovered", "message": "",
                "observedGeneration": 1, "lastTransitionTime": T0}])
        );
        let again = discovered_status(Some(&status), 1, &Ok(vec![handler("generate.ext")]), T1);
        assert_eq!(again, status, "the same outcome changes nothing, times included");
    }

    #[test]
    fn a_failed_discovery_keeps_the_handlers_and_says_why() {
        let before = discovered_status(None, 1, &Ok(vec![handler("generate.ext")]), T0);
        let error = "failed to discover extension \"ext\": http call failed: refused".to_owned();
        let status = discovered_status(Some(&before), 2, &Err(error), T1);
        assert_eq!(status["handlers"], before["handlers"]);
        let condition = &status["deprecated"]["v1beta1"]["conditions"][0];
        assert_eq!(condition["status"], "False");
        assert_eq!(condition["reason"], DISCOVERY_FAILED_REASON);
        assert_eq!(condition["severity"], "Error");
        assert_eq!(condition["lastTransitionTime"], T1);
        assert_eq!(
            condition["message"],
            "Error in discovery: failed to discover extension \"ext\": http call failed: refused"
        );
        let v1beta2 = &status["conditions"][0];
        assert_eq!(
            (v1beta2["reason"].as_str(), v1beta2["observedGeneration"].as_i64()),
            (Some("NotDiscovered"), Some(2))
        );
    }

    #[test]
    fn conditions_of_other_types_are_kept() {
        let current = json!({"conditions": [{"type": "Paused", "status": "False", "reason": "NotPaused",
            "message": "", "lastTransitionTime": T0}]});
        let status = discovered_status(Some(&current), 1, &Ok(Vec::new()), T1);
        let types: Vec<&str> = status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["type"].as_str())
            .collect();
        assert_eq!(types, ["Discovered", "Paused"]);
        assert_eq!(status["handlers"], json!([]));
    }

    #[test]
    fn handlers_listed_in_another_order_say_the_same() {
        let (a, b) = (handler("a.ext"), handler("b.ext"));
        let before = discovered_status(None, 1, &Ok(vec![a.clone(), b.clone()]), T0);
        let reordered = discovered_status(Some(&before), 1, &Ok(vec![b.clone(), a.clone()]), T1);
        assert_ne!(reordered, before, "the answer's order is kept");
        assert!(says_the_same(Some(&before), &reordered));
        let fewer = discovered_status(Some(&before), 1, &Ok(vec![b]), T1);
        assert!(!says_the_same(Some(&before), &fewer));
        let failed = discovered_status(Some(&before), 1, &Err("refused".to_owned()), T1);
        assert!(!says_the_same(Some(&before), &failed));
        assert!(!says_the_same(None, &before));
    }
}
