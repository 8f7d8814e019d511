//! MachineHealthCheck v1beta1 ↔ v1beta2 (`core/webhooks/conversion/machinehealthcheck.go`): the
//! spec's checks and remediation regroup exactly as a class's health check does (shared with
//! [`health_check`]), status conditions trade places, and the status counters (`int32` in
//! v1beta1, written always; `*int32` in v1beta2) keep a `0` only when the conversion-data says
//! it was set.

use serde_json::Value;

use super::data::{marshal_hub, set_annotation, take_annotation, unmarshal_hub};
use super::status::{conditions_from_hub, conditions_to_hub};
use super::value::{child, drop_empty, Obj};
use super::{health_check, ConvertError, Ctx, CONVERSION_DATA};

/// The spec fields that keep their place.
const KEPT: [&str; 2] = ["clusterName", "selector"];
const COUNTERS: [&str; 3] = ["expectedMachines", "currentHealthy", "remediationsAllowed"];

/// Splits `spec` into the fields that keep their place and the rest, under `key` of a holder.
fn split(spec: &mut Obj, key: &str) -> (Obj, Obj) {
    let kept: Obj = KEPT
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), spec.remove(*k)?)))
        .collect();
    let mut holder = Obj::new();
    holder.insert(key.to_owned(), Value::Object(std::mem::take(spec)));
    (kept, holder)
}

/// Puts the converted rest (under `key` of `holder`) back into `spec` beside the kept fields.
fn join(spec: &mut Obj, kept: Obj, mut holder: Obj, key: &str) {
    spec.extend(kept);
    if let Some(Value::Object(rest)) = holder.remove(key) {
        spec.extend(rest);
    }
}

/// A v1beta1 MachineHealthCheck → v1beta2, in place.
pub(super) fn to_hub(obj: &mut Obj, ctx: &Ctx) -> Result<(), ConvertError> {
    let restored = unmarshal_hub(obj, ctx)?.map(Value::Object).unwrap_or(Value::Null);
    if let Some(spec) = child(obj, "spec") {
        let (kept, mut holder) = split(spec, "machineHealthCheck");
        health_check::to_hub(&mut holder, ctx, "spec")?;
        join(spec, kept, holder, "healthCheck");
    }
    if let Some(status) = child(obj, "status") {
        conditions_to_hub(status, &[]);
        drop_empty(status, "v1beta2");
        for key in COUNTERS {
            let zero = status.get(key).is_none_or(|v| v.as_i64() == Some(0));
            if zero {
                let was_zero = restored
                    .pointer(&format!("/status/{key}"))
                    .and_then(Value::as_i64)
                    == Some(0);
                if was_zero {
                    status.insert(key.to_owned(), Value::from(0));
                } else {
                    status.remove(key);
                }
            }
        }
    }
    drop_empty(obj, "status");
    Ok(())
}

/// A v1beta2 MachineHealthCheck → v1beta1, in place.
pub(super) fn from_hub(obj: &mut Obj, ctx: &Ctx) -> Result<(), ConvertError> {
    take_annotation(obj, CONVERSION_DATA);
    let data = marshal_hub(obj);
    if let Some(spec) = child(obj, "spec") {
        let (kept, mut holder) = split(spec, "healthCheck");
        health_check::from_hub(&mut holder, &ctx.namespace);
        join(spec, kept, holder, "machineHealthCheck");
    }
    // v1beta1 writes the counters always (no omitempty), so a status always.
    if let Some(status) = super::value::child_or_new(obj, "status") {
        conditions_from_hub(status, &[]);
        for key in COUNTERS {
            status.entry(key).or_insert(Value::from(0));
        }
    }
    set_annotation(obj, CONVERSION_DATA, data);
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::api::convert::tests::crds;
    use crate::api::convert::{from_hub, to_hub};

    fn spoke() -> serde_json::Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "MachineHealthCheck",
            "metadata": {"name": "mhc", "namespace": "ns1"},
            "spec": {
                "clusterName": "c1",
                "selector": {"matchLabels": {"pool": "a"}},
                "unhealthyConditions": [{"type": "Ready", "status": "Unknown", "timeout": "5m0s"}],
                "maxUnhealthy": "40%",
                "nodeStartupTimeout": "10m0s",
                "remediationTemplate": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerRemediationTemplate", "namespace": "ns1", "name": "r"}
            },
            "status": {"expectedMachines": 3, "currentHealthy": 2, "remediationsAllowed": 0, "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        })
    }

    #[test]
    fn regroups_checks_and_remediation() {
        let hub = to_hub(spoke()).unwrap();
        assert_eq!(
            hub["spec"],
            json!({
                "clusterName": "c1",
                "selector": {"matchLabels": {"pool": "a"}},
                "checks": {
                    "unhealthyNodeConditions": [{"type": "Ready", "status": "Unknown", "timeoutSeconds": 300}],
                    "nodeStartupTimeoutSeconds": 600
                },
                "remediation": {
                    "triggerIf": {"unhealthyLessThanOrEqualTo": "40%"},
                    "templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerRemediationTemplate", "name": "r"}
                }
            })
        );
        assert_eq!(
            hub["status"]["deprecated"]["v1beta1"]["conditions"][0]["type"],
            "Ready"
        );
        let mut back = from_hub(hub, "cluster.x-k8s.io/v1beta1", &crds()).unwrap();
        back["metadata"].as_object_mut().unwrap().remove("annotations");
        assert_eq!(back, spoke());
    }

    #[test]
    fn a_zero_counter_survives_only_through_the_conversion_data() {
        let mut hub = to_hub(spoke()).unwrap();
        hub["status"]["remediationsAllowed"] = json!(0);
        assert!(
            to_hub(spoke()).unwrap()["status"]
                .get("remediationsAllowed")
                .is_none(),
            "0 is unset"
        );
        let spoke = from_hub(hub.clone(), "cluster.x-k8s.io/v1beta1", &crds()).unwrap();
        assert_eq!(spoke["status"]["remediationsAllowed"], 0);
        assert_eq!(to_hub(spoke).unwrap(), hub);
    }
}
