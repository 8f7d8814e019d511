//! `machineHealthCheck` (v1beta1) ↔ `healthCheck {enabled, checks, remediation}` (v1beta2), as
//! ClusterClass `controlPlane`/`machineDeployments[]` and Cluster topology carry it: durations
//! become `*Seconds`, `maxUnhealthy`/`unhealthyRange` move under `remediation.triggerIf`, the
//! remediation template ref keeps only apiVersion, kind and name.

use serde_json::Value;

use super::duration;
use super::refs::{from_template_ref, to_template_ref};
use super::value::{is_empty, put, remove, take, Obj};
use super::{ConvertError, Ctx};

/// v1beta1 `machineHealthCheck` under `obj` → `healthCheck` (merged with what is there).
pub(super) fn to_hub(obj: &mut Obj, ctx: &Ctx, field: &str) -> Result<(), ConvertError> {
    let Some(Value::Object(mut mhc)) = remove(obj, "machineHealthCheck") else {
        return Ok(());
    };
    let mut hc = match obj.remove("healthCheck") {
        Some(Value::Object(hc)) => hc,
        _ => Obj::new(),
    };
    let field = format!("{field}.machineHealthCheck");
    if let Some(enable) = mhc.remove("enable") {
        hc.insert("enabled".into(), enable);
    }
    for (from, to) in [
        ("unhealthyConditions", "unhealthyNodeConditions"),
        ("unhealthyMachineConditions", "unhealthyMachineConditions"),
    ] {
        if let Some(Value::Array(conditions)) = mhc.remove(from) {
            let converted = conditions
                .into_iter()
                .enumerate()
                .map(|(i, c)| condition_to_hub(c, ctx, &format!("{field}.{from}[{i}].timeout")))
                .collect::<Result<Vec<_>, _>>()?;
            put(&mut hc, &["checks", to], Value::Array(converted));
        }
    }
    if let Some(timeout) = mhc.remove("nodeStartupTimeout") {
        let seconds = seconds_of(&timeout, ctx, &format!("{field}.nodeStartupTimeout"))?;
        put(&mut hc, &["checks", "nodeStartupTimeoutSeconds"], seconds);
    }
    if let Some(max) = mhc.remove("maxUnhealthy") {
        put(
            &mut hc,
            &["remediation", "triggerIf", "unhealthyLessThanOrEqualTo"],
            max,
        );
    }
    if let Some(range) = mhc.remove("unhealthyRange").filter(|r| !is_empty(r)) {
        put(&mut hc, &["remediation", "triggerIf", "unhealthyInRange"], range);
    }
    if let Some(template) = mhc.remove("remediationTemplate").filter(|t| !t.is_null()) {
        put(
            &mut hc,
            &["remediation", "templateRef"],
            to_template_ref(&template),
        );
    }
    // Fields v1beta1 did not know (a newer server's) travel along.
    hc.extend(mhc);
    if !hc.is_empty() {
        obj.insert("healthCheck".into(), Value::Object(hc));
    }
    Ok(())
}

/// `healthCheck` under `obj` → v1beta1 `machineHealthCheck`, with the remediation template in
/// `namespace`. A MachineDeployment's `remediation.maxInFlight` must be taken out before.
pub(super) fn from_hub(obj: &mut Obj, namespace: &str) {
    let Some(Value::Object(mut hc)) = obj.remove("healthCheck") else {
        return;
    };
    if hc.is_empty() {
        return;
    }
    let mut mhc = Obj::new();
    if let Some(enabled) = hc.remove("enabled") {
        mhc.insert("enable".into(), enabled);
    }
    for (from, to) in [
        ("unhealthyNodeConditions", "unhealthyConditions"),
        ("unhealthyMachineConditions", "unhealthyMachineConditions"),
    ] {
        if let Some(Value::Array(conditions)) = take(&mut hc, &["checks", from]) {
            let converted = conditions.into_iter().map(condition_from_hub).collect();
            mhc.insert(to.into(), Value::Array(converted));
        }
    }
    if let Some(seconds) = take(&mut hc, &["checks", "nodeStartupTimeoutSeconds"]) {
        mhc.insert("nodeStartupTimeout".into(), duration_of(&seconds));
    }
    if let Some(max) = take(
        &mut hc,
        &["remediation", "triggerIf", "unhealthyLessThanOrEqualTo"],
    ) {
        mhc.insert("maxUnhealthy".into(), max);
    }
    if let Some(range) =
        take(&mut hc, &["remediation", "triggerIf", "unhealthyInRange"]).filter(|r| !is_empty(r))
    {
        mhc.insert("unhealthyRange".into(), range);
    }
    if let Some(template) = take(&mut hc, &["remediation", "templateRef"]).filter(|t| !is_empty(t)) {
        mhc.insert(
            "remediationTemplate".into(),
            from_template_ref(&template, namespace),
        );
    }
    mhc.extend(hc);
    obj.insert("machineHealthCheck".into(), Value::Object(mhc));
}

fn condition_to_hub(condition: Value, ctx: &Ctx, field: &str) -> Result<Value, ConvertError> {
    let Value::Object(mut condition) = condition else {
        return Ok(condition);
    };
    // `timeout` is a required metav1.Duration: absent reads as 0s.
    let seconds = match condition.remove("timeout") {
        Some(timeout) => seconds_of(&timeout, ctx, field)?,
        None => Value::from(0),
    };
    condition.insert("timeoutSeconds".into(), seconds);
    Ok(Value::Object(condition))
}

fn condition_from_hub(condition: Value) -> Value {
    let Value::Object(mut condition) = condition else {
        return condition;
    };
    let seconds = condition.remove("timeoutSeconds").unwrap_or(Value::from(0));
    condition.insert("timeout".into(), duration_of(&seconds));
    Value::Object(condition)
}

/// A v1beta1 duration string as whole seconds.
pub(super) fn seconds_of(value: &Value, ctx: &Ctx, field: &str) -> Result<Value, ConvertError> {
    match value {
        Value::Null => Ok(Value::Null),
        Value::String(text) => duration::to_seconds(text)
            .map(Value::from)
            .ok_or_else(|| ctx.invalid(field, format!("time: invalid duration {text:?}"))),
        _ => Err(ctx.invalid(field, "a duration must be a string")),
    }
}

/// Whole seconds as a v1beta1 duration string; anything else is carried as is.
pub(super) fn duration_of(value: &Value) -> Value {
    match value.as_i64() {
        Some(seconds) => Value::String(duration::from_seconds(seconds)),
        None => value.clone(),
    }
}
