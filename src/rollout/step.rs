//! The next step of a class's rollout, decided from the policy, the rollout's status, the
//! revision of the class as it is now, and each Cluster's health: which Clusters move to which
//! revision, when a wave is done, when the rollout halts and rolls back. Every state lives in the
//! status, so a controller that restarts mid-wave takes up where it was and never has more
//! Clusters rolling than the policy allows.

use std::collections::{HashMap, HashSet};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::health::Health;
use super::policy::{gate_duration, review_policy};
use super::waves::{plan_waves, Member};
use super::window::window_open;
use crate::api::class_rollout::{
    ClusterClassRolloutSpec, ClusterClassRolloutStatus, ClusterRevisionStatus, WaveStatus,
    ON_CHANGE_SUPERSEDE, PHASE_COMPLETE, PHASE_HALTED, PHASE_PENDING, PHASE_PROGRESSING,
};

/// How long a rolled Cluster may take to become healthy when the policy says nothing.
const DEFAULT_DEADLINE: SignedDuration = SignedDuration::from_mins(30);

/// A Cluster of the class and its health at the revision its status entry names.
#[derive(Debug, Clone)]
pub struct ClusterFacts {
    /// Who it is, and its labels.
    pub member: Member,
    /// Its health at its current revision.
    pub health: Health,
}

/// What a step decides from.
#[derive(Debug)]
pub struct Inputs<'a> {
    /// The policy.
    pub spec: &'a ClusterClassRolloutSpec,
    /// The policy's generation.
    pub generation: Option<i64>,
    /// The status as last written.
    pub status: Option<&'a ClusterClassRolloutStatus>,
    /// The revision of the class as it is now; `None` while it cannot be taken.
    pub live_revision: Option<&'a str>,
    /// The class's Clusters.
    pub clusters: &'a [ClusterFacts],
    /// The time of the step.
    pub now: Timestamp,
}

/// Something an operator should read in the rollout's events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutEvent {
    /// A Warning rather than Normal event.
    pub warning: bool,
    /// CamelCase reason.
    pub reason: &'static str,
    /// The message.
    pub message: String,
}

/// The step's outcome: the status to write and the events to publish.
#[derive(Debug, Clone)]
pub struct Step {
    /// The new status.
    pub status: ClusterClassRolloutStatus,
    /// What happened.
    pub events: Vec<RolloutEvent>,
    /// Why no Cluster could start although some wait (paused, outside a window), if so.
    pub held: Option<String>,
}

/// A policy that cannot be applied (a bad selector or duration): nothing moves.
#[derive(Debug, Clone)]
pub struct Invalid {
    /// The status to write: as it was, with `Progressing` saying why.
    pub status: Box<ClusterClassRolloutStatus>,
    /// The problem, named with its field path.
    pub problem: String,
}

/// Decides the rollout's next step. An error is a policy that cannot be applied (a bad
/// selector or duration), named with its field path.
pub fn step(inputs: &Inputs) -> Result<Step, Invalid> {
    step_valid(inputs).map_err(|problem| {
        let mut status = inputs.status.cloned().unwrap_or_default();
        status.observed_generation = inputs.generation;
        super::step_conditions::set_invalid(&mut status, &problem, inputs.now);
        Invalid {
            status: Box::new(status),
            problem,
        }
    })
}

fn step_valid(inputs: &Inputs) -> Result<Step, String> {
    let review = review_policy(inputs.spec, None);
    if !review.errors.is_empty() {
        return Err(review.errors.to_string());
    }
    let soak = duration(
        inputs.spec.health_gate.as_ref().and_then(|g| g.soak.as_deref()),
        "soak",
    )?;
    let deadline = duration(
        inputs
            .spec
            .health_gate
            .as_ref()
            .and_then(|g| g.deadline.as_deref()),
        "deadline",
    )?
    .unwrap_or(DEFAULT_DEADLINE);
    let mut stepper = Stepper {
        inputs,
        status: inputs.status.cloned().unwrap_or_default(),
        events: Vec::new(),
        held: None,
        soak: soak.unwrap_or(SignedDuration::ZERO),
        deadline,
        health: inputs
            .clusters
            .iter()
            .map(|f| ((f.member.namespace.as_str(), f.member.name.as_str()), &f.health))
            .collect(),
        moved: HashSet::new(),
    };
    stepper.status.observed_generation = inputs.generation;
    if stepper.status.target_revision.is_none() {
        let Some(live) = inputs.live_revision else {
            stepper.status.phase = Some(PHASE_PENDING.to_owned());
            return Ok(stepper.finish());
        };
        stepper.status.target_revision = Some(live.to_owned());
        stepper.status.stable_revision = Some(live.to_owned());
        stepper.status.phase = Some(PHASE_COMPLETE.to_owned());
    }
    stepper.sync_members();
    for _ in 0..2 {
        stepper.on_class_change();
        if !stepper.running() {
            break;
        }
        stepper.advance()?;
        if stepper.running() {
            break;
        }
    }
    Ok(stepper.finish())
}

/// A duration of the health gate, checked.
fn duration(text: Option<&str>, field: &str) -> Result<Option<SignedDuration>, String> {
    text.map(|text| {
        gate_duration(text).ok_or_else(|| {
            format!("spec.healthGate.{field}: Invalid value: {text:?}: want a duration such as 10m")
        })
    })
    .transpose()
}

pub(super) struct Stepper<'a> {
    pub(super) inputs: &'a Inputs<'a>,
    pub(super) status: ClusterClassRolloutStatus,
    pub(super) events: Vec<RolloutEvent>,
    pub(super) held: Option<String>,
    pub(super) soak: SignedDuration,
    pub(super) deadline: SignedDuration,
    /// Each Cluster's health as read, by (namespace, name).
    pub(super) health: HashMap<(&'a str, &'a str), &'a Health>,
    /// Clusters moved to another revision in this step: not healthy at it yet, whatever the
    /// health read before.
    pub(super) moved: HashSet<(String, String)>,
}

impl Stepper<'_> {
    pub(super) fn target(&self) -> String {
        self.status.target_revision.clone().unwrap_or_default()
    }

    fn running(&self) -> bool {
        self.status.wave.is_some() && self.status.phase.as_deref() != Some(PHASE_HALTED)
    }

    pub(super) fn event(&mut self, warning: bool, reason: &'static str, message: String) {
        self.events.push(RolloutEvent {
            warning,
            reason,
            message,
        });
    }

    /// One entry per Cluster of the class: a new Cluster starts at the target revision, a
    /// deleted one leaves.
    fn sync_members(&mut self) {
        let target = self.target();
        let known: HashMap<(String, String), ClusterRevisionStatus> =
            std::mem::take(&mut self.status.clusters)
                .into_iter()
                .map(|entry| ((entry.namespace.clone(), entry.name.clone()), entry))
                .collect();
        let mut entries: Vec<ClusterRevisionStatus> = self
            .inputs
            .clusters
            .iter()
            .map(|facts| {
                let key = (facts.member.namespace.clone(), facts.member.name.clone());
                known.get(&key).cloned().unwrap_or_else(|| ClusterRevisionStatus {
                    namespace: key.0,
                    name: key.1,
                    revision: target.clone(),
                    rolled_at: None,
                })
            })
            .collect();
        entries.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        self.status.clusters = entries;
    }

    /// Starts a rollout when the class's revision is new (or retargets the running one under
    /// `Supersede`; under `Queue` it waits for the running one to end).
    fn on_class_change(&mut self) {
        let Some(live) = self.inputs.live_revision else {
            return;
        };
        let status = &self.status;
        if status.target_revision.as_deref() == Some(live) || status.halted_revision.as_deref() == Some(live)
        {
            return;
        }
        let now = Time(self.inputs.now);
        let first_wave = WaveStatus {
            index: 0,
            name: String::new(),
            started_at: now.clone(),
            healthy_since: None,
        };
        if self.running() {
            if self.inputs.spec.on_class_change.as_deref() != Some(ON_CHANGE_SUPERSEDE) {
                return;
            }
            let message = format!("{live} supersedes {} from the first wave", self.target());
            self.status.target_revision = Some(live.to_owned());
            self.status.wave = Some(first_wave);
            self.event(false, "RolloutSuperseded", message);
            return;
        }
        if self.status.phase.as_deref() != Some(PHASE_HALTED) {
            self.status.stable_revision = self.status.target_revision.clone();
        }
        let message = format!(
            "rolling out {live} over {}",
            self.status.stable_revision.as_deref().unwrap_or_default()
        );
        self.status.target_revision = Some(live.to_owned());
        self.status.halted_revision = None;
        for entry in &mut self.status.clusters {
            entry.rolled_at = None;
        }
        self.status.wave = Some(first_wave);
        self.status.phase = Some(PHASE_PROGRESSING.to_owned());
        self.event(false, "RolloutStarted", message);
    }

    /// Moves the running rollout on: halts it on a Cluster past its deadline, starts Clusters
    /// of the current wave up to its limit, and goes to the next wave once this one is healthy
    /// (and has soaked).
    fn advance(&mut self) -> Result<(), String> {
        let members: Vec<Member> = self.inputs.clusters.iter().map(|f| f.member.clone()).collect();
        let waves = plan_waves(self.inputs.spec, &members)?;
        let open = window_open(&self.inputs.spec.maintenance_windows, self.inputs.now)?;
        loop {
            let index = self
                .status
                .wave
                .as_ref()
                .map_or(0, |w| usize::try_from(w.index).unwrap_or(0));
            let Some(wave) = waves.get(index) else {
                self.complete();
                return Ok(());
            };
            if let Some(current) = self.status.wave.as_mut() {
                current.name.clone_from(&wave.name);
            }
            if self.halt_if_late(wave) {
                return Ok(());
            }
            self.start_clusters(wave, open);
            if !self.wave_done(wave) {
                return Ok(());
            }
            let next = index + 1;
            self.status.wave = Some(WaveStatus {
                index: i32::try_from(next).unwrap_or(i32::MAX),
                name: waves.get(next).map(|w| w.name.clone()).unwrap_or_default(),
                started_at: Time(self.inputs.now),
                healthy_since: None,
            });
        }
    }

    fn complete(&mut self) {
        let target = self.target();
        self.status.stable_revision = Some(target.clone());
        self.status.wave = None;
        self.status.phase = Some(PHASE_COMPLETE.to_owned());
        self.event(false, "RolloutComplete", format!("every Cluster runs {target}"));
    }

    fn finish(mut self) -> Step {
        let target = self.status.target_revision.clone();
        self.status.total_clusters = i32::try_from(self.status.clusters.len()).unwrap_or(i32::MAX);
        let updated = self
            .status
            .clusters
            .iter()
            .filter(|e| Some(&e.revision) == target.as_ref())
            .count();
        self.status.updated_clusters = i32::try_from(updated).unwrap_or(i32::MAX);
        super::step_conditions::set_conditions(&mut self.status, self.held.as_deref(), self.inputs.now);
        Step {
            status: self.status,
            events: self.events,
            held: self.held,
        }
    }
}
