//! The Cluster's `TopologyReconciled` condition as Cluster API v1.14 writes it: a metav1
//! Condition in `status.conditions` (reasons `ReconcileSucceeded`, `ReconcileFailed`, the pending
//! and waiting reasons, `Paused`) and the v1beta1 one in `status.deprecated.v1beta1.conditions`
//! (`TopologyReconcileFailed` with severity Error for a failure, Info while waiting).

use serde_json::{json, Value};

use crate::api::conditions::{meta_condition, set_condition, V1BETA1_CONDITIONS};
use crate::topology::reconcile::TOPOLOGY_RECONCILED_CONDITION;

/// Reasons that say the topology waits (not a failure), the same in both shapes.
const WAITING_REASONS: [&str; 13] = [
    "ClusterCreating",
    "ControlPlaneUpgradePending",
    "MachineDeploymentsCreatePending",
    "MachineDeploymentsUpgradePending",
    "MachineDeploymentsUpgradeDeferred",
    "MachinePoolsCreatePending",
    "MachinePoolsUpgradePending",
    "MachinePoolsUpgradeDeferred",
    "LifecycleHookBlocking",
    "ClusterUpgrading",
    "ClusterClassNotReconciled",
    "Paused",
    "Deleting",
];

/// The metav1 reason of a successful reconcile.
const SUCCEEDED: &str = "ReconcileSucceeded";
/// The metav1 reason of a failed reconcile (the failure in the message).
const FAILED: &str = "ReconcileFailed";
/// The v1beta1 reason of a failed reconcile.
const FAILED_V1BETA1: &str = "TopologyReconcileFailed";

/// The two `TopologyReconciled` conditions for the engine's verdict `engine` (a condition with
/// `status`, `reason` and `message`; any reason that is not a waiting one is a failure), stamped
/// with the Cluster's `generation`: (metav1, v1beta1).
pub fn topology_conditions(engine: &Value, generation: Option<&Value>) -> (Value, Value) {
    let text = |key: &str| engine.get(key).and_then(Value::as_str).unwrap_or_default();
    let (meta, v1beta1) = if text("status") == "True" {
        (
            meta_condition(TOPOLOGY_RECONCILED_CONDITION, "True", SUCCEEDED, ""),
            json!({"type": TOPOLOGY_RECONCILED_CONDITION, "status": "True"}),
        )
    } else {
        let reason = text("reason");
        let (meta_reason, old_reason, severity) = if WAITING_REASONS.contains(&reason) {
            (reason, reason, "Info")
        } else {
            (FAILED, FAILED_V1BETA1, "Error")
        };
        (
            meta_condition(
                TOPOLOGY_RECONCILED_CONDITION,
                "False",
                meta_reason,
                text("message"),
            ),
            json!({"type": TOPOLOGY_RECONCILED_CONDITION, "status": "False", "reason": old_reason,
                   "severity": severity, "message": text("message")}),
        )
    };
    let mut meta = meta;
    if let Some(generation) = generation.filter(|g| !g.is_null()) {
        meta["observedGeneration"] = generation.clone();
    }
    (meta, v1beta1)
}

/// A merge patch of the Cluster's `status` (the one of `cluster`) that sets both conditions;
/// `None` when both already say the same.
pub fn status_patch(cluster: &Value, engine: &Value, now: &str) -> Option<Value> {
    let (meta, v1beta1) = topology_conditions(engine, cluster.pointer("/metadata/generation"));
    let status = cluster.get("status");
    let current = status.and_then(|s| s.get("conditions"));
    let current_v1beta1 = status.and_then(|s| s.pointer(V1BETA1_CONDITIONS));
    let meta = set_condition(current, meta, now);
    let v1beta1 = set_condition(current_v1beta1, v1beta1, now);
    let plans = upgrade_plans(status, engine.get("upgradePlans"));
    if meta.is_none() && v1beta1.is_none() && plans.is_empty() {
        return None;
    }
    let mut patch = json!({});
    for (part, plan) in plans {
        patch[part] = json!({ "upgradePlan": plan });
    }
    if let Some(list) = meta {
        patch["conditions"] = json!(list);
    }
    if let Some(list) = v1beta1 {
        patch["deprecated"] = json!({"v1beta1": {"conditions": list}});
    }
    Some(patch)
}

/// `status.controlPlane.upgradePlan` and `status.workers.upgradePlan` that differ from the
/// engine's (`null` removes an emptied one).
fn upgrade_plans(status: Option<&Value>, engine: Option<&Value>) -> Vec<(&'static str, Value)> {
    let Some(engine) = engine else {
        return Vec::new();
    };
    ["controlPlane", "workers"]
        .into_iter()
        .filter_map(|part| {
            let wanted = engine[part].as_array().filter(|v| !v.is_empty());
            let current = status
                .and_then(|s| s.get(part))
                .and_then(|p| p.get("upgradePlan"))
                .and_then(Value::as_array)
                .filter(|v| !v.is_empty());
            (wanted != current).then(|| (part, wanted.map_or(Value::Null, |v| json!(v))))
        })
        .collect()
}

/// The engine's verdict for a paused Cluster, worded as Cluster API words it.
pub fn paused(spec_paused: bool, annotated: bool) -> Value {
    let mut messages = Vec::new();
    if spec_paused {
        messages.push("Cluster spec.paused is set to true");
    }
    if annotated {
        messages.push("Cluster has the cluster.x-k8s.io/paused annotation");
    }
    json!({"type": TOPOLOGY_RECONCILED_CONDITION, "status": "False", "reason": "Paused",
           "message": messages.join(", ")})
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-11-25T12:00:00Z";

    #[test]
    fn a_failure_is_reconcile_failed_with_its_message_in_both_shapes() {
        let engine = json!({"type": "TopologyReconciled", "status": "False", "severity": "Warning",
            "reason": "TemplateNotFound", "message": "DockerClusterTemplate ns/t not found"});
        let (meta, v1beta1) = topology_conditions(&engine, Some(&json!(3)));
        assert_eq!(
            meta,
            json!({"type": "TopologyReconciled", "status": "False", "reason": "ReconcileFailed",
                "message": "DockerClusterTemplate ns/t not found", "observedGeneration": 3})
        );
        assert_eq!(v1beta1["reason"], "TopologyReconcileFailed");
        assert_eq!(v1beta1["severity"], "Error");
    }

    #[test]
    fn waiting_keeps_its_reason_and_success_is_reconcile_succeeded() {
        let engine = json!({"status": "False", "reason": "ControlPlaneUpgradePending", "message": "m"});
        let (meta, v1beta1) = topology_conditions(&engine, None);
        assert_eq!(meta["reason"], "ControlPlaneUpgradePending");
        assert_eq!(
            (&v1beta1["reason"], &v1beta1["severity"]),
            (&json!("ControlPlaneUpgradePending"), &json!("Info"))
        );
        let (meta, v1beta1) = topology_conditions(&json!({"status": "True"}), None);
        assert_eq!(meta["reason"], "ReconcileSucceeded");
        assert_eq!(v1beta1, json!({"type": "TopologyReconciled", "status": "True"}));
    }

    #[test]
    fn a_settled_cluster_needs_no_status_write() {
        let cluster = json!({"metadata": {"generation": 2}});
        let engine = json!({"status": "True"});
        let patch = status_patch(&cluster, &engine, NOW).unwrap();
        let mut written = cluster.clone();
        written["status"] = patch;
        assert_eq!(written["status"]["conditions"][0]["observedGeneration"], 2);
        assert_eq!(
            written["status"]["deprecated"]["v1beta1"]["conditions"][0]["status"],
            "True"
        );
        assert_eq!(status_patch(&written, &engine, "2026-11-25T13:00:00Z"), None);
    }

    #[test]
    fn a_paused_cluster_says_why() {
        let (meta, _) = topology_conditions(&paused(true, true), None);
        assert_eq!(meta["reason"], "Paused");
        assert_eq!(
            meta["message"],
            "Cluster spec.paused is set to true, Cluster has the cluster.x-k8s.io/paused annotation"
        );
    }

    #[test]
    fn the_upgrade_plans_are_written_when_they_change_and_removed_when_done() {
        let engine = json!({"status": "True", "upgradePlans": {
            "controlPlane": [{"version": "v1.32.0"}, {"version": "v1.33.0"}],
            "workers": [{"version": "v1.33.0"}]}});
        let cluster = json!({"status": {"controlPlane": {"upgradePlan": [{"version": "v1.33.0"}]}}});
        let patch = status_patch(&cluster, &engine, NOW).unwrap();
        assert_eq!(patch["controlPlane"]["upgradePlan"][0]["version"], "v1.32.0");
        assert_eq!(patch["workers"]["upgradePlan"][0]["version"], "v1.33.0");
        let done = json!({"status": "True", "upgradePlans": {"controlPlane": [], "workers": []}});
        let patch = status_patch(&cluster, &done, NOW).unwrap();
        assert_eq!(patch["controlPlane"].get("upgradePlan"), Some(&Value::Null));
        assert!(patch.get("workers").is_none());
    }
}
