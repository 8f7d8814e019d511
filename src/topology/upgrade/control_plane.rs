//! The control plane's side of sequencing: its next version in Cluster API v1.14's order, with
//! the lifecycle hooks called on the way, and whether it has carried out the topology's
//! `rolloutAfter`.

use super::phase::ControlPlanePhase;
use super::Inputs;
use crate::topology::hooks::LifecycleHook;
use crate::topology::upgrade_hooks::{HookRunner, Versions};

/// The control plane's version and state in one reconcile.
pub(super) struct ControlPlaneDecision {
    /// The version it gets.
    pub(super) version: String,
    /// True when it does not take the target version yet.
    pub(super) pending: bool,
    /// True when this reconcile moves it to a new version.
    pub(super) starting: bool,
    /// True when it waits for the workers to take its step.
    pub(super) waiting_for_workers: bool,
}

/// The control plane's next version (Cluster API v1.14's order): nothing new while it provisions
/// or upgrades; then the last step's AfterControlPlaneUpgrade and BeforeWorkersUpgrade; wait while
/// the workers take this step or roll out; then AfterWorkersUpgrade; then, when the target is not
/// reached, BeforeClusterUpgrade (once per upgrade) and BeforeControlPlaneUpgrade, and the next step.
pub(super) fn decide_control_plane(
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
pub(super) fn rolled_out(inputs: &Inputs<'_>) -> bool {
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
