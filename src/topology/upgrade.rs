//! Version sequencing: the control plane takes the upgrade's steps one at a time, each only when it
//! is settled and no worker is still rolling out; workers take their (fewer) steps when the
//! control plane waits for them or has reached the target, a bounded number at a time, in topology
//! order, honouring the defer and hold-sequence annotations. New workers wait for a stable control
//! plane too. The lifecycle hooks are called on the way (see `upgrade_hooks`). Pure.

use std::collections::BTreeMap;

use serde_json::Value;

use super::hooks::LifecycleHook;
use super::upgrade_hooks::{HookRunner, Versions};
use super::upgrade_outline::Outline;
use super::upgrade_steps::UpgradeSteps;
use crate::api::labels::{TOPOLOGY_DEFER_UPGRADE_ANNOTATION, TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION};

/// What the current control plane is doing, as its spec and status tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlPlanePhase {
    /// Not created yet.
    New,
    /// Created, but no version reported yet (first provisioning).
    Provisioning,
    /// Its spec asks for a newer version than its status reports.
    Upgrading {
        /// The version it is upgrading to.
        to: String,
    },
    /// Its replicas are not all updated, ready and available.
    Scaling,
    /// Running its spec's version with every replica up to date.
    Stable,
}

impl ControlPlanePhase {
    /// The phase of `control_plane` (`None` when it does not exist yet).
    pub fn of(control_plane: Option<&Value>) -> Self {
        let Some(cp) = control_plane else {
            return ControlPlanePhase::New;
        };
        let spec_version = cp["spec"]["version"].as_str().unwrap_or_default();
        let versions = status_versions(cp);
        if versions.first().is_none_or(|v| v.is_empty()) {
            return ControlPlanePhase::Provisioning;
        }
        if versions
            .iter()
            .any(|status_version| newer(spec_version, status_version))
        {
            return ControlPlanePhase::Upgrading {
                to: spec_version.to_owned(),
            };
        }
        if scaling(cp) {
            return ControlPlanePhase::Scaling;
        }
        ControlPlanePhase::Stable
    }

    /// A short account for a condition message, `None` when stable or new.
    pub fn describe(&self) -> Option<String> {
        match self {
            ControlPlanePhase::Provisioning => {
                Some("the control plane is completing its initial provisioning".into())
            }
            ControlPlanePhase::Upgrading { to } => Some(format!("the control plane is upgrading to {to}")),
            ControlPlanePhase::Scaling => {
                Some("the control plane is rolling out or scaling its replicas".into())
            }
            ControlPlanePhase::New | ControlPlanePhase::Stable => None,
        }
    }
}

/// The versions a control plane's machines run: v1beta2 `status.versions[].version` when listed,
/// else v1beta1 `status.version` (as v1.14's contract reads either).
fn status_versions(cp: &Value) -> Vec<&str> {
    let status = &cp["status"];
    match status["versions"].as_array().filter(|v| !v.is_empty()) {
        Some(versions) => versions
            .iter()
            .map(|v| v["version"].as_str().unwrap_or_default())
            .collect(),
        None => status["version"].as_str().into_iter().collect(),
    }
}

/// Whether `spec` names a strictly newer version than `status` (tolerant of a leading `v`);
/// unparsable versions compare as different when not equal.
fn newer(spec: &str, status: &str) -> bool {
    let parse = |v: &str| semver::Version::parse(v.trim_start_matches('v')).ok();
    match (parse(spec), parse(status)) {
        (Some(spec), Some(status)) => spec > status,
        _ => spec != status,
    }
}

/// Whether a control plane with `spec.replicas` has replicas that are not yet up to date, ready
/// and available (a missing status field counts as not yet). Control planes without replicas never
/// scale. The v1beta2 contract's counters (`upToDateReplicas`, `availableReplicas`) are read when
/// the status has them, else the v1beta1 ones (`updatedReplicas`, `unavailableReplicas`).
fn scaling(cp: &Value) -> bool {
    let Some(desired) = cp["spec"]["replicas"].as_i64() else {
        return false;
    };
    let status = &cp["status"];
    let v1beta2 = status.get("upToDateReplicas").is_some() || status.get("availableReplicas").is_some();
    let (up_to_date, available) = if v1beta2 {
        (
            status["upToDateReplicas"].as_i64(),
            status["availableReplicas"].as_i64(),
        )
    } else {
        let unavailable = status["unavailableReplicas"].as_i64().unwrap_or(0);
        (status["updatedReplicas"].as_i64(), Some(desired - unavailable))
    };
    [
        status["replicas"].as_i64(),
        up_to_date,
        status["readyReplicas"].as_i64(),
        available,
    ]
    .iter()
    .any(|count| *count != Some(desired))
}

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

/// What gates a worker's change: whether the control plane is stable, and whether it has finished
/// the rollout `rollout_after` asks for.
#[derive(Debug, Clone, Copy)]
struct Gate<'a> {
    target: &'a str,
    /// The workers' next step (the target when they take it in one).
    next: &'a str,
    rollout_after: Option<&'a str>,
    /// Whether new workers may be created.
    control_plane_stable: bool,
    /// Whether existing workers may take their next step.
    workers_may_move: bool,
    control_plane_rolled_out: bool,
    concurrency: usize,
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

/// The control plane's version and state in one reconcile.
struct ControlPlaneDecision {
    version: String,
    pending: bool,
    starting: bool,
    waiting_for_workers: bool,
}

/// The control plane's next version (Cluster API v1.14's order): nothing new while it provisions
/// or upgrades; then the last step's AfterControlPlaneUpgrade and BeforeWorkersUpgrade; wait while
/// the workers take this step or roll out; then AfterWorkersUpgrade; then, when the target is not
/// reached, BeforeClusterUpgrade (once per upgrade) and BeforeControlPlaneUpgrade, and the next step.
fn decide_control_plane(
    inputs: &Inputs<'_>,
    runner: &mut HookRunner<'_>,
    current: &str,
    phase: &ControlPlanePhase,
    workers_rolling_out: bool,
) -> ControlPlaneDecision {
    let target = inputs.target;
    let at_target = current == target;
    let hold = |waiting_for_workers: bool| ControlPlaneDecision {
        version: current.to_owned(),
        pending: !at_target,
        starting: false,
        waiting_for_workers,
    };
    if !matches!(phase, ControlPlanePhase::Stable | ControlPlanePhase::Scaling) {
        return hold(false);
    }
    let steps = inputs.steps;
    let min_workers = inputs.min_workers_version.unwrap_or(current);
    if !runner.call_pending(
        LifecycleHook::AfterControlPlaneUpgrade,
        Versions::Reached(current),
    ) || !runner.call_pending(
        LifecycleHook::BeforeWorkersUpgrade,
        Versions::FromTo(min_workers, current),
    ) {
        return hold(false);
    }
    if steps.workers.first().is_some_and(|v| v == current) {
        return hold(true);
    }
    if workers_rolling_out
        || !runner.call_pending(LifecycleHook::AfterWorkersUpgrade, Versions::Reached(current))
        || at_target
        || *phase != ControlPlanePhase::Stable
        || !runner.before_cluster_upgrade(current, target)
    {
        return hold(false);
    }
    let next = steps.control_plane.first().map_or(target, String::as_str);
    let workers_move = steps.workers.first().is_some_and(|v| v == next);
    if !runner.before_control_plane_upgrade(current, next, workers_move) {
        return hold(false);
    }
    ControlPlaneDecision {
        version: next.to_owned(),
        pending: next != target,
        starting: true,
        waiting_for_workers: false,
    }
}

/// Whether the control plane has carried out the topology's `rolloutAfter`: it asks for the same
/// time (at `spec.rollout.after`, where v1.14 writes it for either contract) and every control
/// plane machine known was created at or after it. True without one.
fn rolled_out(inputs: &Inputs<'_>) -> bool {
    let Some(after) = inputs.rollout_after else {
        return true;
    };
    let asked = inputs
        .control_plane
        .is_some_and(|cp| cp["spec"]["rollout"]["after"].as_str() == Some(after));
    asked
        && inputs.control_plane_machines.iter().all(|machine| {
            let created = machine["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default();
            not_before(created, after)
        })
}

/// Whether timestamp `time` is at or after `reference` (both RFC 3339; unparsable is false).
fn not_before(time: &str, reference: &str) -> bool {
    let parse = |t: &str| t.parse::<jiff::Timestamp>().ok();
    matches!((parse(time), parse(reference)), (Some(t), Some(r)) if t >= r)
}

/// The decisions for one kind of worker, in topology order.
fn decide_workers(gate: &Gate<'_>, workers: &[Worker<'_>]) -> (Vec<WorkerDecision>, WorkersPending) {
    let mut pending = WorkersPending {
        rolling_out: workers
            .iter()
            .filter(|w| w.rolling_out)
            .filter_map(|w| w.current.map(|c| c.name.to_owned()))
            .collect(),
        ..WorkersPending::default()
    };
    let desired = || WorkerDecision {
        version: gate.next.to_owned(),
        rollout_after: gate.rollout_after.map(str::to_owned),
        create: true,
    };
    let mut held_from_here = false;
    let mut decisions = Vec::with_capacity(workers.len());
    for worker in workers {
        held_from_here |= worker
            .annotations
            .contains_key(TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION);
        let Some(current) = worker.current else {
            if !gate.control_plane_stable {
                pending.create.push(worker.topology_name.to_owned());
            }
            decisions.push(WorkerDecision {
                version: gate.target.to_owned(),
                create: gate.control_plane_stable,
                ..desired()
            });
            continue;
        };
        let kept = WorkerDecision {
            version: current.version.to_owned(),
            rollout_after: current.rollout_after.map(str::to_owned),
            create: true,
        };
        let needs_upgrade = current.version != gate.target;
        let needs_rollout = gate.rollout_after.is_some() && current.rollout_after != gate.rollout_after;
        let decision = if !needs_upgrade && !needs_rollout {
            kept
        } else if held_from_here || worker.annotations.contains_key(TOPOLOGY_DEFER_UPGRADE_ANNOTATION) {
            pending.deferred.push(current.name.to_owned());
            kept
        } else if pending.rolling_out.len() >= gate.concurrency
            || !gate.workers_may_move
            || (needs_upgrade && gate.next == current.version)
            || (needs_rollout && !gate.control_plane_rolled_out)
        {
            pending.upgrade.push(current.name.to_owned());
            kept
        } else {
            pending.rolling_out.push(current.name.to_owned());
            desired()
        };
        decisions.push(decision);
    }
    (decisions, pending)
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
