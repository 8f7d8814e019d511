//! The conditions of a rollout's status, from its phase: `Progressing`, `Halted` and `Paused`,
//! each keeping its last transition time while its status holds.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::api::class_rollout::{
    ClusterClassRolloutStatus, PHASE_COMPLETE, PHASE_HALTED, PHASE_PAUSED, PHASE_PENDING, PHASE_PROGRESSING,
    PHASE_ROLLED_BACK,
};

/// Sets the three conditions on `status` at `now`; `held` says why waiting Clusters do not start.
pub fn set_conditions(status: &mut ClusterClassRolloutStatus, held: Option<&str>, now: Timestamp) {
    let phase = status.phase.clone().unwrap_or_default();
    let target = status.target_revision.clone().unwrap_or_default();
    let wave = status.wave.as_ref().map(|w| w.name.clone()).unwrap_or_default();
    let progress = format!(
        "{} of {} Clusters at {target}",
        status.updated_clusters, status.total_clusters
    );
    let progressing = match phase.as_str() {
        PHASE_PROGRESSING | PHASE_PAUSED => ("True", "WaveInProgress", format!("wave {wave}: {progress}")),
        PHASE_COMPLETE => ("False", "Complete", progress),
        PHASE_PENDING => (
            "False",
            "RevisionPending",
            "the class has no revision yet".to_owned(),
        ),
        _ => ("False", "Halted", progress),
    };
    let halted = match phase.as_str() {
        PHASE_HALTED => (
            "True",
            "Halted",
            halted_message(status, "its Clusters stay where they are"),
        ),
        PHASE_ROLLED_BACK => (
            "True",
            "RolledBack",
            halted_message(status, "its Clusters went back"),
        ),
        _ => ("False", "NotHalted", String::new()),
    };
    let paused = match (phase.as_str(), held) {
        (PHASE_PAUSED, _) => ("True", "Paused", held.unwrap_or("spec.paused is true").to_owned()),
        (_, Some(held)) => ("True", "OutsideMaintenanceWindow", held.to_owned()),
        _ => ("False", "NotPaused", String::new()),
    };
    let generation = status.observed_generation;
    for (type_, (state, reason, message)) in [
        ("Progressing", progressing),
        ("Halted", halted),
        ("Paused", paused),
    ] {
        set(
            &mut status.conditions,
            type_,
            state,
            reason,
            message,
            generation,
            now,
        );
    }
}

/// `status` as a policy that cannot be applied leaves it: nothing moves, and `Progressing` says
/// why, naming the field.
pub fn set_invalid(status: &mut ClusterClassRolloutStatus, problem: &str, now: Timestamp) {
    let generation = status.observed_generation;
    let message = format!("the policy cannot be applied: {problem}");
    set(
        &mut status.conditions,
        "Progressing",
        "False",
        "InvalidPolicy",
        message,
        generation,
        now,
    );
}

fn halted_message(status: &ClusterClassRolloutStatus, what: &str) -> String {
    format!(
        "{} missed a wave's deadline; {what}; a new change of the class starts a new rollout",
        status.halted_revision.as_deref().unwrap_or_default()
    )
}

fn set(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    generation: Option<i64>,
    now: Timestamp,
) {
    let previous = conditions.iter().position(|c| c.type_ == type_);
    let since = previous
        .map(|i| &conditions[i])
        .filter(|c| c.status == status)
        .map_or(Time(now), |c| c.last_transition_time.clone());
    let condition = Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message,
        observed_generation: generation,
        last_transition_time: since,
    };
    match previous {
        Some(index) => conditions[index] = condition,
        None => conditions.push(condition),
    }
}
