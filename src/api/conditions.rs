//! Conditions as JSON, in both shapes a v1beta2 object carries: metav1 Conditions in
//! `status.conditions` (type, status, reason and message required, `observedGeneration`), and the
//! deprecated v1beta1 ones (with a severity, no reason when True) in
//! `status.deprecated.v1beta1.conditions`. Setting one keeps its transition time while its status
//! does not change, and reports "nothing to write" when its meaning is the same.

use serde_json::{json, Value};

use crate::field::truncated;

/// `status.deprecated.v1beta1.conditions`, as a JSON pointer.
pub const V1BETA1_CONDITIONS: &str = "/deprecated/v1beta1/conditions";

/// The longest condition message written: metav1 Condition's `maxLength` (the API server refuses
/// a status with a longer one, so the write would fail and the reason be lost).
pub const MAX_CONDITION_MESSAGE: usize = 32768;

/// `message` cut (with a marker) to fit a condition: every condition a controller writes goes
/// through it, so an extension's or an object's huge text never makes a status write fail.
pub fn condition_message(message: &str) -> String {
    if message.len() <= MAX_CONDITION_MESSAGE {
        return message.to_owned();
    }
    // Room for the marker `truncated` appends.
    truncated(message, MAX_CONDITION_MESSAGE - 32)
}

/// A metav1 Condition of `type_`, `status` (`"True"`, `"False"`, `"Unknown"`), `reason` and
/// `message`, without a transition time (set by [`set_condition`]).
pub fn meta_condition(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": condition_message(message)})
}

/// `conditions` with `condition` in place of the one of its type (appended when new); `None`
/// when the one there already says the same (status, reason, message, severity,
/// observedGeneration), so nothing needs writing. The transition time is the old one while the
/// status stays, else the condition's own (a mirrored condition carries its source's), else
/// `now`.
pub fn set_condition(conditions: Option<&Value>, mut condition: Value, now: &str) -> Option<Vec<Value>> {
    if let Some(Value::String(message)) = condition.get_mut("message") {
        *message = condition_message(message);
    }
    let mut list: Vec<Value> = conditions.and_then(Value::as_array).cloned().unwrap_or_default();
    let same_type = |c: &Value| c["type"] == condition["type"];
    let old = list.iter().position(same_type);
    let kept_time = old
        .map(|i| &list[i])
        .filter(|old| old["status"] == condition["status"])
        .and_then(|old| old.get("lastTransitionTime"))
        .filter(|t| !t.is_null())
        .cloned();
    let own_time = condition
        .get("lastTransitionTime")
        .filter(|t| !t.is_null())
        .cloned();
    condition["lastTransitionTime"] = kept_time.or(own_time).unwrap_or_else(|| json!(now));
    match old {
        Some(i) => {
            let meaning = |c: &Value| {
                ["status", "reason", "message", "severity", "observedGeneration"]
                    .map(|key| c.get(key).filter(|v| !v.is_null() && *v != "").cloned())
            };
            if meaning(&list[i]) == meaning(&condition) {
                return None;
            }
            list[i] = condition;
        }
        None => list.push(condition),
    }
    Some(list)
}

/// The condition of `type_` in `conditions`, if any.
pub fn find<'a>(conditions: Option<&'a Value>, type_: &str) -> Option<&'a Value> {
    conditions
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c["type"] == type_)
}

/// Whether the condition of `type_` in `conditions` is True.
pub fn is_true(conditions: Option<&Value>, type_: &str) -> bool {
    find(conditions, type_).is_some_and(|c| c["status"] == "True")
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: &str = "2026-01-01T00:00:00Z";
    const T1: &str = "2026-01-01T00:05:00Z";

    /// Issue 26: a huge message (an extension's text) is cut to what a condition may hold.
    #[test]
    fn condition_messages_are_bounded() {
        let huge = "x".repeat(20 << 20);
        let list = set_condition(
            None,
            json!({"type": "Ready", "status": "False", "message": huge}),
            T0,
        )
        .unwrap();
        let message = list[0]["message"].as_str().unwrap();
        assert!(message.len() <= MAX_CONDITION_MESSAGE, "{}", message.len());
        assert!(message.ends_with("more bytes)"));
        let meta = meta_condition("Ready", "False", "Failed", &huge);
        assert_eq!(meta["message"].as_str().unwrap(), message);
        assert_eq!(condition_message("short"), "short");
    }

    #[test]
    fn a_condition_keeps_its_time_while_its_status_stays_and_an_unchanged_one_is_not_written() {
        let first = set_condition(None, meta_condition("Ready", "False", "NotReady", "x"), T0).unwrap();
        assert_eq!(first[0]["lastTransitionTime"], T0);
        let list = json!(first);
        assert_eq!(
            set_condition(Some(&list), meta_condition("Ready", "False", "NotReady", "x"), T1),
            None
        );
        let moved = set_condition(Some(&list), meta_condition("Ready", "False", "Other", "y"), T1).unwrap();
        assert_eq!(moved[0]["lastTransitionTime"], T0);
        let flipped = set_condition(Some(&list), meta_condition("Ready", "True", "Ready", ""), T1).unwrap();
        assert_eq!(flipped[0]["lastTransitionTime"], T1);
        assert!(is_true(Some(&json!(flipped)), "Ready"));
    }

    #[test]
    fn other_conditions_stay_in_place_and_a_new_type_is_appended() {
        let list = json!([{"type": "Ready", "status": "False"}, {"type": "Paused", "status": "False"}]);
        let replaced = set_condition(Some(&list), meta_condition("Ready", "True", "Ready", ""), T0).unwrap();
        assert_eq!(replaced.len(), 2);
        assert_eq!(
            (&replaced[0]["status"], &replaced[1]["type"]),
            (&json!("True"), &json!("Paused"))
        );
        let appended = set_condition(
            Some(&list),
            meta_condition("Available", "True", "Available", ""),
            T0,
        )
        .unwrap();
        assert_eq!(appended[2]["type"], "Available");
        assert_eq!(find(Some(&json!(appended)), "Paused").unwrap()["status"], "False");
    }
}
