//! Machine-level settings that changed shape: the three node timeouts (v1beta1 durations at the
//! top) ↔ `deletion.*Seconds`, and a MachineDeployment's `strategy` ↔ `rollout.strategy`,
//! `deletion.order` and `healthCheck.remediation.maxInFlight`.

use serde_json::Value;

use super::health_check::{duration_of, seconds_of};
use super::value::{get, is_empty, put, remove, take, Obj};
use super::{ConvertError, Ctx};

/// Where a class's or topology's MachineDeployment keeps `remediation.maxInFlight`.
pub(super) const CLASS_REMEDIATION: [&str; 2] = ["healthCheck", "remediation"];

const TIMEOUTS: [(&str, &str); 3] = [
    ("nodeDrainTimeout", "nodeDrainTimeoutSeconds"),
    ("nodeVolumeDetachTimeout", "nodeVolumeDetachTimeoutSeconds"),
    ("nodeDeletionTimeout", "nodeDeletionTimeoutSeconds"),
];

/// `node*Timeout` under `obj` → `deletion.node*TimeoutSeconds`.
pub(super) fn timeouts_to_hub(obj: &mut Obj, ctx: &Ctx, field: &str) -> Result<(), ConvertError> {
    for (from, to) in TIMEOUTS {
        if let Some(timeout) = remove(obj, from) {
            let seconds = seconds_of(&timeout, ctx, &format!("{field}.{from}"))?;
            if !seconds.is_null() {
                put(obj, &["deletion", to], seconds);
            }
        }
    }
    Ok(())
}

/// `deletion.node*TimeoutSeconds` under `obj` → `node*Timeout`.
pub(super) fn timeouts_from_hub(obj: &mut Obj) {
    for (to, from) in TIMEOUTS {
        if let Some(seconds) = take(obj, &["deletion", from]) {
            obj.insert(to.into(), duration_of(&seconds));
        }
    }
}

/// A MachineDeployment's (class, topology or object) `strategy` → `rollout.strategy`,
/// `deletion.order` and `<remediation>.maxInFlight`, where `remediation` is
/// `healthCheck.remediation` in a class or topology and `remediation` in a MachineDeployment.
pub(super) fn strategy_to_hub(obj: &mut Obj, remediation_at: &[&str]) {
    let Some(Value::Object(mut strategy)) = remove(obj, "strategy") else {
        return;
    };
    if let Some(Value::Object(mut rolling)) = strategy.remove("rollingUpdate") {
        if let Some(order) = rolling.remove("deletePolicy").filter(|o| !is_empty(o)) {
            put(obj, &["deletion", "order"], order);
        }
        if !rolling.is_empty() {
            strategy.insert("rollingUpdate".into(), Value::Object(rolling));
        }
    }
    if let Some(Value::Object(mut remediation)) = strategy.remove("remediation") {
        if let Some(max) = remediation.remove("maxInFlight").filter(|m| !m.is_null()) {
            put(obj, &[remediation_at, &["maxInFlight"]].concat(), max);
        }
        for (key, value) in remediation {
            put(obj, &[remediation_at, &[key.as_str()]].concat(), value);
        }
    }
    if get(&strategy, "type").is_some_and(is_empty) {
        strategy.remove("type");
    }
    if !strategy.is_empty() {
        put(obj, &["rollout", "strategy"], Value::Object(strategy));
    }
}

/// The inverse of [`strategy_to_hub`]; run before the health check is converted.
pub(super) fn strategy_from_hub(obj: &mut Obj, remediation_at: &[&str]) {
    let mut strategy = match take(obj, &["rollout", "strategy"]) {
        Some(Value::Object(strategy)) => strategy,
        _ => Obj::new(),
    };
    if let Some(order) = take(obj, &["deletion", "order"]).filter(|o| !is_empty(o)) {
        put(&mut strategy, &["rollingUpdate", "deletePolicy"], order);
    }
    if let Some(max) = take(obj, &[remediation_at, &["maxInFlight"]].concat()) {
        put(&mut strategy, &["remediation", "maxInFlight"], max);
    }
    if !strategy.is_empty() {
        obj.insert("strategy".into(), Value::Object(strategy));
    }
}
