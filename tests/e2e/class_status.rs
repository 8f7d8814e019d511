//! Stands in for the ClusterClass controller: writes the status a reconciled ClusterClass has, so
//! the Cluster webhook (which trusts only reconciled classes) checks variables against it.
//!
//! The ClusterClass controller will replace this module: once it runs in the e2e environment,
//! the scenarios wait for the status it writes instead.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::kubectl::Kubectl;

/// Writes `status.variables`, `status.observedGeneration` and a True `VariablesReconciled`
/// condition on ClusterClass `namespace/name`, computed from its inline variables the way the
/// reconciler does.
pub fn reconcile(kubectl: &Kubectl, namespace: &str, name: &str) -> Result<(), String> {
    let class = kubectl.get_json("clusterclass", namespace, name)?;
    let patch = json!({ "status": status_of(&class, &now_rfc3339()) });
    kubectl.ok(&[
        "patch",
        "clusterclass",
        name,
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch.to_string(),
    ])?;
    Ok(())
}

/// The status a reconciled `class` has: every inline variable as one definition `from: inline`.
fn status_of(class: &Value, now: &str) -> Value {
    let variables: Vec<Value> = class
        .pointer("/spec/variables")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|variable| {
            let mut definition = json!({
                "from": "inline",
                "required": variable.get("required").cloned().unwrap_or(json!(false)),
                "schema": variable.get("schema").cloned().unwrap_or(json!({})),
            });
            if let Some(metadata) = variable.get("metadata") {
                definition["metadata"] = metadata.clone();
            }
            json!({
                "name": variable.get("name").cloned().unwrap_or_default(),
                "definitionsConflict": false,
                "definitions": [definition],
            })
        })
        .collect();
    json!({
        "observedGeneration": class.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
        "conditions": [{
            "type": "VariablesReconciled",
            "status": "True",
            "lastTransitionTime": now,
        }],
        "variables": variables,
    })
}

/// The current UTC time as RFC 3339 with seconds, e.g. `2026-11-22T13:05:00Z`.
fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_gregorian() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(20_414), (2025, 11, 22));
    }

    #[test]
    fn status_lists_inline_variables() {
        let class: Value = serde_yaml_ng::from_str(
            "metadata: {generation: 3}
spec:
  variables:
  - name: region
    required: true
    metadata: {labels: {a: b}}
    schema: {openAPIV3Schema: {type: string}}
  - name: size
    schema: {openAPIV3Schema: {type: integer}}",
        )
        .unwrap();
        assert_eq!(
            status_of(&class, "2026-01-01T00:00:00Z"),
            json!({
                "observedGeneration": 3,
                "conditions": [{"type": "VariablesReconciled", "status": "True",
                                "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                "variables": [
                    {"name": "region", "definitionsConflict": false, "definitions": [
                        {"from": "inline", "required": true, "metadata": {"labels": {"a": "b"}},
                         "schema": {"openAPIV3Schema": {"type": "string"}}}]},
                    {"name": "size", "definitionsConflict": false, "definitions": [
                        {"from": "inline", "required": false,
                         "schema": {"openAPIV3Schema": {"type": "integer"}}}]},
                ],
            })
        );
    }
}
