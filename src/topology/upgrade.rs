//! Version sequencing: the control plane takes the upgrade's steps one at a time, each only when it
//! is settled and no worker is still rolling out; workers take their (fewer) steps when the
//! control plane waits for them or has reached the target, a bounded number at a time, in topology
//! order, honouring the defer and hold-sequence annotations. New workers wait for a stable control
//! plane too. The lifecycle hooks are called on the way (see `upgrade_hooks`). Pure.
//!
//! The jobs, a file each: [`phase`] reads the control plane's state, [`control_plane`] decides its
//! next version, [`workers`] the workers'; this file gathers them into an [`UpgradePlan`].

mod control_plane;
mod phase;
mod workers;

use std::collections::BTreeMap;

use serde_json::Value;

use super::hooks::LifecycleHook;
use super::upgrade_hooks::{HookRunner, Versions};
use super::upgrade_outline::Outline;
use super::upgrade_steps::UpgradeSteps;
use control_plane::{decide_control_plane, rolled_out, ControlPlaneDecision};
use workers::{decide_workers, Gate};

pub use phase::ControlPlanePhase;

/// One worker (MachineDeployment or MachinePool) of the topology as it stands.
#[derive(Debug, Clone, Copy)]
pub struct Worker<'a> {
    /// Its name in the topology.
    pub topology_name: &'a str,
    /// The topology's annotations for it (defer and hold-sequence).
    pub annotations: &'a BTreeMap<String, String>,
    /// Its current object, when it exists.
    pub current: Option<CurrentWorker<'a>>,
    /// Whether its machines still run other versions than its spec's.
    pub rolling_out: bool,
}

/// The fields of an existing worker object that sequencing reads.
#[derive(Debug, Clone, Copy)]
pub struct CurrentWorker<'a> {
    /// The object's name.
    pub name: &'a str,
    /// Its `spec.template.spec.version`.
    pub version: &'a str,
    /// Its `spec.rollout.after`, when set.
    pub rollout_after: Option<&'a str>,
}

/// What one worker's object gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerDecision {
    /// The version.
    pub version: String,
    /// `spec.rollout.after`, when the topology (or an earlier plan) set it.
    pub rollout_after: Option<String>,
    /// False when it does not exist yet and must wait for the control plane.
    pub create: bool,
}

/// Everything the sequencing of one Cluster reads.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The topology's version.
    pub target: &'a str,
    /// The topology's `rolloutAfter` (RFC 3339), when set.
    pub rollout_after: Option<&'a str>,
    /// The current control plane, when it exists.
    pub control_plane: Option<&'a Value>,
    /// The control plane's machines.
    pub control_plane_machines: &'a [&'a Value],
    /// The MachineDeployments, in topology order.
    pub machine_deployments: &'a [Worker<'a>],
    /// The MachinePools, in topology order.
    pub machine_pools: &'a [Worker<'a>],
    /// How many workers of each kind may roll out at once (at least one).
    pub concurrency: usize,
    /// The upgrade's steps still ahead (empty when nothing is to upgrade).
    pub steps: &'a UpgradeSteps,
    /// The lowest version the workers run, when any worker has one.
    pub min_workers_version: Option<&'a str>,
}

/// The workers of one kind that are not where the topology wants them, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkersPending {
    /// Topology names of workers whose creation waits for a stable control plane.
    pub create: Vec<String>,
    /// Names of workers kept at their version (and rollout) until the control plane is done or
    /// others finish.
    pub upgrade: Vec<String>,
    /// Names of workers whose upgrade is deferred by annotation (theirs or an earlier worker's
    /// hold-sequence).
    pub deferred: Vec<String>,
    /// Names of workers rolling out now (before or because of this plan).
    pub rolling_out: Vec<String>,
}

impl WorkersPending {
    /// True when every worker of this kind is where the topology wants it.
    pub fn is_empty(&self) -> bool {
        self.create.is_empty() && self.upgrade.is_empty() && self.deferred.is_empty()
    }
}

/// The sequencing decided for one Cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradePlan {
    /// The topology's version.
    pub target: String,
    /// The version the control plane gets.
    pub control_plane_version: String,
    /// What the control plane is doing now.
    pub control_plane: ControlPlanePhase,
    /// True when the control plane does not take the target version yet.
    pub control_plane_pending: bool,
    /// True when this plan moves the control plane to the target version.
    pub control_plane_starting: bool,
    /// MachineDeployment decisions, in topology order.
    pub machine_deployments: Vec<WorkerDecision>,
    /// MachineDeployments not yet where the topology wants them.
    pub machine_deployments_pending: WorkersPending,
    /// MachinePool decisions, in topology order.
    pub machine_pools: Vec<WorkerDecision>,
    /// MachinePools not yet where the topology wants them.
    pub machine_pools_pending: WorkersPending,
    /// The steps still ahead when this reconcile began.
    pub steps: UpgradeSteps,
    /// The Cluster's `topology.internal.cluster.x-k8s.io/upgrade-step` annotation: the control
    /// plane's version while an upgrade runs, `None` otherwise.
    pub upgrade_step: Option<String>,
    /// The whole upgrade ahead, step by step (`None` when nothing is to upgrade).
    pub outline: Option<Outline>,
}

impl UpgradePlan {
    /// Decides the versions (and rollouts) of the control plane and of every worker, calling the
    /// upgrade's lifecycle hooks through `runner` where Cluster API v1.14 calls them.
    pub fn decide(inputs: &Inputs<'_>, runner: &mut HookRunner<'_>) -> Self {
        let Inputs {
            target,
            control_plane,
            machine_deployments,
            machine_pools,
            steps,
            ..
        } = *inputs;
        runner.steps = (steps.control_plane.clone(), steps.workers.clone());
        let phase = ControlPlanePhase::of(control_plane);
        let current_version = control_plane.and_then(|cp| cp["spec"]["version"].as_str());
        let workers_rolling_out = machine_deployments
            .iter()
            .chain(machine_pools)
            .any(|w| w.rolling_out);
        let mut control = ControlPlaneDecision {
            version: target.to_owned(),
            pending: false,
            starting: false,
            waiting_for_workers: false,
        };
        if let Some(current) = current_version {
            control = decide_control_plane(inputs, runner, current, &phase, workers_rolling_out);
        }
        let hook_holds_workers = runner.effects.held.iter().any(|h| {
            matches!(
                h.hook,
                LifecycleHook::AfterControlPlaneUpgrade | LifecycleHook::BeforeWorkersUpgrade
            )
        }) || runner.failed();
        let stable = matches!(phase, ControlPlanePhase::Stable | ControlPlanePhase::New)
            && !control.pending
            && !control.starting;
        let may_move = (stable || (control.waiting_for_workers && phase == ControlPlanePhase::Stable))
            && !hook_holds_workers;
        let gate = Gate {
            target,
            next: steps.workers.first().map_or(target, String::as_str),
            rollout_after: inputs.rollout_after,
            control_plane_stable: stable && !hook_holds_workers,
            workers_may_move: may_move,
            control_plane_rolled_out: rolled_out(inputs),
            concurrency: inputs.concurrency.max(1),
        };
        let (machine_deployments, machine_deployments_pending) = decide_workers(&gate, machine_deployments);
        let (machine_pools, machine_pools_pending) = decide_workers(&gate, machine_pools);
        let mut plan = UpgradePlan {
            target: target.to_owned(),
            control_plane_version: control.version,
            control_plane: phase,
            control_plane_pending: control.pending,
            control_plane_starting: control.starting,
            machine_deployments,
            machine_deployments_pending,
            machine_pools,
            machine_pools_pending,
            steps: steps.clone(),
            upgrade_step: None,
            outline: None,
        };
        let settled = stable
            && plan.is_done()
            && !workers_rolling_out
            && plan.machine_deployments_pending.rolling_out.is_empty()
            && plan.machine_pools_pending.rolling_out.is_empty();
        if settled
            && !runner.is_pending(LifecycleHook::AfterControlPlaneUpgrade)
            && !runner.is_pending(LifecycleHook::AfterWorkersUpgrade)
        {
            runner.call_pending(LifecycleHook::AfterClusterUpgrade, Versions::Reached(target));
        }
        // The step is recorded while the upgrade runs (AfterClusterUpgrade owed), or, as v1.14
        // does without the Runtime SDK, while a plan has steps ahead.
        let upgrading = runner.is_pending(LifecycleHook::AfterClusterUpgrade) || !steps.is_empty();
        plan.upgrade_step =
            (upgrading && control_plane.is_some()).then(|| plan.control_plane_version.clone());
        plan
    }

    /// True when something waits for the cluster's machines to progress (not only for a change
    /// of the topology, as deferred workers do): worth looking again soon.
    pub fn waits_on_rollout(&self) -> bool {
        let workers = |p: &WorkersPending| !p.create.is_empty() || !p.upgrade.is_empty();
        self.control_plane_pending
            || workers(&self.machine_deployments_pending)
            || workers(&self.machine_pools_pending)
    }

    /// True when the control plane is stable at the target version and no worker waits.
    pub fn is_done(&self) -> bool {
        !self.control_plane_pending
            && self.machine_deployments_pending.is_empty()
            && self.machine_pools_pending.is_empty()
    }
}

/// The `topology.cluster.x-k8s.io/upgrade-concurrency` annotation's value, 1 when absent or not a
/// positive integer (the webhook refuses such values).
pub fn concurrency(annotations: Option<&BTreeMap<String, String>>) -> usize {
    annotations
        .and_then(|a| a.get(crate::api::labels::TOPOLOGY_UPGRADE_CONCURRENCY_ANNOTATION))
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1)
}

#[cfg(test)]
#[path = "upgrade_tests.rs"]
mod tests;

/// What the upgrade tests share.
#[cfg(test)]
pub(crate) mod testing {
    use serde_json::Value;

    use super::{Inputs, UpgradePlan};
    use crate::topology::hooks::ProceedingHooks;
    use crate::topology::upgrade_hooks::HookRunner;
    use crate::topology::upgrade_steps::UpgradeSteps;

    /// No chained-upgrade steps.
    pub(crate) static NO_STEPS: UpgradeSteps = UpgradeSteps {
        control_plane: Vec::new(),
        workers: Vec::new(),
    };

    /// Decides without Runtime Extensions.
    pub(crate) fn decide(inputs: &Inputs<'_>) -> UpgradePlan {
        let mut runner = HookRunner::new(&ProceedingHooks::NONE, "default", Value::Null);
        UpgradePlan::decide(inputs, &mut runner)
    }
}
