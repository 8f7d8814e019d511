//! The workers' side of sequencing: which workers of one kind take the next step now, in
//! topology order and a bounded number at a time, and which wait (and why).

use super::{Worker, WorkerDecision, WorkersPending};
use crate::api::labels::{TOPOLOGY_DEFER_UPGRADE_ANNOTATION, TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION};

/// What gates a worker's change: whether the control plane is stable, and whether it has finished
/// the rollout `rollout_after` asks for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Gate<'a> {
    pub(super) target: &'a str,
    /// The workers' next step (the target when they take it in one).
    pub(super) next: &'a str,
    pub(super) rollout_after: Option<&'a str>,
    /// Whether new workers may be created.
    pub(super) control_plane_stable: bool,
    /// Whether existing workers may take their next step.
    pub(super) workers_may_move: bool,
    pub(super) control_plane_rolled_out: bool,
    pub(super) concurrency: usize,
}

/// The decisions for one kind of worker, in topology order.
pub(super) fn decide_workers(
    gate: &Gate<'_>,
    workers: &[Worker<'_>],
) -> (Vec<WorkerDecision>, WorkersPending) {
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
