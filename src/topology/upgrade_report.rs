//! What an operator reads about an upgrade in progress: the reason and message of the
//! `TopologyReconciled` condition while versions or rollouts still wait.

use super::upgrade::{UpgradePlan, WorkersPending};
use super::upgrade_hooks::HookEffects;

/// The reason while a lifecycle hook holds the upgrade (v1.14's `ClusterUpgrading`).
pub const CLUSTER_UPGRADING: &str = "ClusterUpgrading";

/// Why the topology is not fully reconciled yet, when something waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The condition's reason (Cluster API's v1beta1 reason names).
    pub reason: &'static str,
    /// What waits and what it waits for.
    pub message: String,
}

/// The first thing that waits, in the order an upgrade proceeds (control plane, then
/// MachineDeployments, then MachinePools), with what it waits for; `None` when nothing waits.
pub fn pending(plan: &UpgradePlan, hooks: &HookEffects) -> Option<Pending> {
    let target = &plan.target;
    if let Some(held) = hooks.message("upgrade") {
        // Deterministic: the hooks in catalog order with their handlers' messages.
        return Some(Pending {
            reason: CLUSTER_UPGRADING,
            message: format!("Cluster is upgrading to {target}\n  * {held}"),
        });
    }
    if plan.is_done() {
        return None;
    }
    let (reason, what) = if plan.control_plane_pending {
        (
            "ControlPlaneUpgradePending",
            format!("Control plane upgrade to {target} on hold"),
        )
    } else if let Some(found) = workers("MachineDeployment", &plan.machine_deployments_pending, target) {
        found
    } else {
        workers("MachinePool", &plan.machine_pools_pending, target)?
    };
    let message = match waits_for(plan) {
        Some(because) => format!("{what}: {because}"),
        None => what,
    };
    Some(Pending { reason, message })
}

/// What the upgrade waits for first, in the order Cluster API v1.14 takes an upgrade: the
/// control plane's next step (a chained upgrade goes one minor at a time, the workers staying
/// until their step), the control plane's own provisioning, upgrade or rollout, the workers'
/// rollouts. The condition's message and `plan --current`'s rollout lines both say it.
pub fn waits_for(plan: &UpgradePlan) -> Option<String> {
    plan.control_plane_starting
        .then(|| {
            format!(
                "the control plane upgrades to {} first",
                plan.control_plane_version
            )
        })
        .or_else(|| plan.control_plane.describe())
        .or_else(|| rolling_out("MachineDeployment", &plan.machine_deployments_pending))
        .or_else(|| rolling_out("MachinePool", &plan.machine_pools_pending))
}

/// The reason and account of the first kind of wait among `pending` workers of `kind`.
fn workers(kind: &'static str, pending: &WorkersPending, target: &str) -> Option<(&'static str, String)> {
    let reason = |suffix: &str| -> &'static str {
        match (kind, suffix) {
            ("MachineDeployment", "UpgradePending") => "MachineDeploymentsUpgradePending",
            ("MachineDeployment", "CreatePending") => "MachineDeploymentsCreatePending",
            ("MachineDeployment", _) => "MachineDeploymentsUpgradeDeferred",
            (_, "UpgradePending") => "MachinePoolsUpgradePending",
            (_, "CreatePending") => "MachinePoolsCreatePending",
            _ => "MachinePoolsUpgradeDeferred",
        }
    };
    if !pending.upgrade.is_empty() {
        return Some((
            reason("UpgradePending"),
            format!(
                "{kind}(s) {} rollout and upgrade to {target} on hold",
                pending.upgrade.join(", ")
            ),
        ));
    }
    if !pending.create.is_empty() {
        return Some((
            reason("CreatePending"),
            format!(
                "{kind}(s) for topologies {} creation on hold",
                pending.create.join(", ")
            ),
        ));
    }
    (!pending.deferred.is_empty()).then(|| {
        (
            reason("UpgradeDeferred"),
            format!(
                "{kind}(s) {} upgrade to {target} deferred by the defer-upgrade or hold-upgrade-sequence annotation",
                pending.deferred.join(", ")
            ),
        )
    })
}

/// "MachineDeployment(s) a, b are rolling out" when some are.
fn rolling_out(kind: &str, pending: &WorkersPending) -> Option<String> {
    (!pending.rolling_out.is_empty())
        .then(|| format!("{kind}(s) {} are rolling out", pending.rolling_out.join(", ")))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::api::labels::TOPOLOGY_DEFER_UPGRADE_ANNOTATION;
    use crate::topology::upgrade::testing::{decide, NO_STEPS};
    use crate::topology::upgrade::{CurrentWorker, Inputs, Worker};

    fn plan(cp: serde_json::Value, workers: &[Worker<'_>]) -> UpgradePlan {
        decide(&Inputs {
            target: "v1.31.0",
            rollout_after: None,
            control_plane: Some(&cp),
            control_plane_machines: &[],
            machine_deployments: workers,
            machine_pools: &[],
            concurrency: 1,
            steps: &NO_STEPS,
            min_workers_version: None,
        })
    }

    fn md<'a>(name: &'a str, version: &'a str, annotations: &'a BTreeMap<String, String>) -> Worker<'a> {
        Worker {
            topology_name: name,
            annotations,
            current: Some(CurrentWorker {
                name,
                version,
                rollout_after: None,
            }),
            rolling_out: false,
        }
    }

    fn pending_of(plan: &UpgradePlan) -> Option<Pending> {
        pending(plan, &HookEffects::default())
    }

    #[test]
    fn the_message_names_what_waits_and_for_what() {
        let none = BTreeMap::new();
        let upgrading = json!({"spec": {"version": "v1.31.0"}, "status": {"version": "v1.30.0"}});
        let waiting = pending_of(&plan(upgrading, &[md("c1-md-0", "v1.30.0", &none)])).unwrap();
        assert_eq!(waiting.reason, "MachineDeploymentsUpgradePending");
        assert_eq!(
            waiting.message,
            "MachineDeployment(s) c1-md-0 rollout and upgrade to v1.31.0 on hold: the control plane is upgrading to v1.31.0"
        );

        let provisioning = json!({"spec": {"version": "v1.30.0"}});
        let waiting = pending_of(&plan(provisioning, &[])).unwrap();
        assert_eq!(waiting.reason, "ControlPlaneUpgradePending");
        assert_eq!(
            waiting.message,
            "Control plane upgrade to v1.31.0 on hold: the control plane is completing its initial provisioning"
        );

        let stable_old = json!({"spec": {"version": "v1.30.0"}, "status": {"version": "v1.30.0"}});
        let rolling = Worker {
            rolling_out: true,
            ..md("c1-md-0", "v1.30.0", &none)
        };
        let waiting = pending_of(&plan(stable_old, &[rolling])).unwrap();
        assert_eq!(
            waiting.message,
            "Control plane upgrade to v1.31.0 on hold: MachineDeployment(s) c1-md-0 are rolling out"
        );

        let defer = BTreeMap::from([(TOPOLOGY_DEFER_UPGRADE_ANNOTATION.to_owned(), String::new())]);
        let done = json!({"spec": {"version": "v1.31.0"}, "status": {"version": "v1.31.0"}});
        let waiting = pending_of(&plan(done.clone(), &[md("c1-md-0", "v1.30.0", &defer)])).unwrap();
        assert_eq!(waiting.reason, "MachineDeploymentsUpgradeDeferred");

        assert_eq!(pending_of(&plan(done, &[md("c1-md-0", "v1.31.0", &none)])), None);
    }
}
