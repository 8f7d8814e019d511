//! The steps of the wave in progress: who is late (and the halt and rollback that follow), who
//! starts, and whether the wave is done.

use jiff::SignedDuration;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::health::Health;
use super::step::Stepper;
use super::waves::Wave;
use crate::api::class_rollout::{
    ClusterRevisionStatus, ON_HALT_HOLD, PHASE_HALTED, PHASE_PAUSED, PHASE_PROGRESSING, PHASE_ROLLED_BACK,
};

impl Stepper<'_> {
    pub(super) fn health_of(&self, namespace: &str, name: &str) -> Health {
        if self.moved.contains(&(namespace.to_owned(), name.to_owned())) {
            return Health::Waiting("it has just moved".to_owned());
        }
        self.health
            .get(&(namespace, name))
            .map_or(Health::Waiting("it is gone".to_owned()), |h| (*h).clone())
    }

    /// The position of the Cluster `namespace/name`'s entry (the entries are kept in
    /// namespace/name order).
    fn entry_index(&self, namespace: &str, name: &str) -> Option<usize> {
        self.status
            .clusters
            .binary_search_by(|e| (e.namespace.as_str(), e.name.as_str()).cmp(&(namespace, name)))
            .ok()
    }

    /// The entries of the wave's members.
    fn entries_of<'s>(&'s self, wave: &'s Wave) -> impl Iterator<Item = &'s ClusterRevisionStatus> + 's {
        wave.members
            .iter()
            .filter_map(|(namespace, name)| self.entry_index(namespace, name))
            .map(|index| &self.status.clusters[index])
    }

    /// Halts when a Cluster this rollout moved is still not healthy `deadline` after it moved.
    pub(super) fn halt_if_late(&mut self, wave: &Wave) -> bool {
        let target = self.target();
        let late = self.entries_of(wave).find_map(|entry| {
            let rolled = entry.rolled_at.as_ref()?;
            let waiting = match self.health_of(&entry.namespace, &entry.name) {
                Health::Healthy => return None,
                Health::Waiting(why) => why,
            };
            let overdue = self.inputs.now.duration_since(rolled.0) > self.deadline;
            (entry.revision == target && overdue)
                .then(|| format!("{}/{}: {waiting}", entry.namespace, entry.name))
        });
        let Some(late) = late else {
            return false;
        };
        self.halt(&wave.name, &late);
        true
    }

    fn halt(&mut self, wave: &str, late: &str) {
        let target = self.target();
        let deadline = self.deadline;
        self.status.halted_revision = Some(target.clone());
        self.event(
            true,
            "RolloutHalted",
            format!("wave {wave} not healthy within {deadline:#}: {late}"),
        );
        if self.inputs.spec.on_halt.as_deref() == Some(ON_HALT_HOLD) {
            self.status.phase = Some(PHASE_HALTED.to_owned());
            return;
        }
        let stable = self.status.stable_revision.clone().unwrap_or_default();
        let now = Time(self.inputs.now);
        let mut back = 0;
        for entry in &mut self.status.clusters {
            if entry.revision == target {
                entry.revision.clone_from(&stable);
                entry.rolled_at = Some(now.clone());
                back += 1;
            }
        }
        self.status.target_revision = Some(stable.clone());
        self.status.wave = None;
        self.status.phase = Some(PHASE_ROLLED_BACK.to_owned());
        self.event(true, "RolledBack", format!("{back} Clusters back to {stable}"));
    }

    /// Starts Clusters of the wave not at the target, while fewer than its limit roll.
    pub(super) fn start_clusters(&mut self, wave: &Wave, window_open: bool) {
        let target = self.target();
        let rolling = self
            .entries_of(wave)
            .filter(|e| e.revision == target && e.rolled_at.is_some())
            .filter(|e| !self.health_of(&e.namespace, &e.name).is_healthy())
            .count();
        let pending: Vec<(String, String)> = self
            .entries_of(wave)
            .filter(|e| e.revision != target)
            .map(|e| (e.namespace.clone(), e.name.clone()))
            .collect();
        let paused = self.inputs.spec.paused;
        self.status.phase = Some(if paused { PHASE_PAUSED } else { PHASE_PROGRESSING }.to_owned());
        if pending.is_empty() {
            return;
        }
        if paused || !window_open {
            let why = if paused {
                "the rollout is paused"
            } else {
                "outside every maintenance window"
            };
            self.held = Some(format!(
                "{} Clusters of wave {} wait: {why}",
                pending.len(),
                wave.name
            ));
            return;
        }
        let now = Time(self.inputs.now);
        for (namespace, name) in pending.into_iter().take(wave.max_rolling.saturating_sub(rolling)) {
            if let Some(index) = self.entry_index(&namespace, &name) {
                let entry = &mut self.status.clusters[index];
                entry.revision.clone_from(&target);
                entry.rolled_at = Some(now.clone());
            }
            self.event(
                false,
                "ClusterRolling",
                format!("wave {}: {namespace}/{name} to {target}", wave.name),
            );
            self.moved.insert((namespace, name));
        }
    }

    /// True when every Cluster of the wave runs the target and those this rollout moved are
    /// healthy, and have been for the soak.
    pub(super) fn wave_done(&mut self, wave: &Wave) -> bool {
        let target = self.target();
        let all_there = self.entries_of(wave).all(|e| e.revision == target);
        let healthy = self
            .entries_of(wave)
            .filter(|e| e.rolled_at.is_some())
            .all(|e| self.health_of(&e.namespace, &e.name).is_healthy());
        let rolled_any = self.entries_of(wave).any(|e| e.rolled_at.is_some());
        let now = self.inputs.now;
        let Some(current) = self.status.wave.as_mut() else {
            return false;
        };
        if !(all_there && healthy) {
            current.healthy_since = None;
            return false;
        }
        if rolled_any && self.soak > SignedDuration::ZERO {
            let since = current.healthy_since.get_or_insert(Time(now)).0;
            if now.duration_since(since) < self.soak {
                return false;
            }
        }
        if rolled_any {
            let message = format!(
                "wave {}: {} Clusters healthy at {target}",
                wave.name,
                wave.members.len()
            );
            self.event(false, "WaveComplete", message);
        }
        true
    }
}
