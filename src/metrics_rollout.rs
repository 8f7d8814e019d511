//! Prometheus metrics of ClusterClass rollouts in waves: per class governed by a
//! ClusterClassRollout (a label set bounded by the policies the cluster holds), the Clusters at
//! the target revision and in all, the wave in progress, the phase, and the events of the steps.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The phases a rollout's `status.phase` takes, each a gauge that is 1 in the current one.
const PHASES: [&str; 6] = [
    "Complete",
    "Progressing",
    "Paused",
    "Halted",
    "RolledBack",
    "Pending",
];

/// A class governed by a rollout policy.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ClassLabels {
    /// The class's namespace.
    pub namespace: String,
    /// The class's name.
    pub class: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PhaseLabels {
    namespace: String,
    class: String,
    phase: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct EventLabels {
    namespace: String,
    class: String,
    reason: &'static str,
}

/// Where a rollout stands after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RolloutState<'a> {
    /// `status.phase`.
    pub phase: &'a str,
    /// The wave in progress, from 0; -1 when none runs.
    pub wave: i64,
    /// Clusters at the target revision.
    pub updated: i64,
    /// Clusters of the class.
    pub total: i64,
}

/// The metric families of class rollouts.
#[derive(Debug, Clone, Default)]
pub struct RolloutMetrics {
    updated: Family<ClassLabels, Gauge>,
    total: Family<ClassLabels, Gauge>,
    wave: Family<ClassLabels, Gauge>,
    phase: Family<PhaseLabels, Gauge>,
    events: Family<EventLabels, Counter>,
}

impl RolloutMetrics {
    /// Creates the families and registers them in `registry` (already prefixed).
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        registry.register(
            "class_rollout_updated_clusters",
            "Clusters of a class at its rollout's target revision",
            metrics.updated.clone(),
        );
        registry.register(
            "class_rollout_clusters",
            "Clusters of a class governed by a ClusterClassRollout",
            metrics.total.clone(),
        );
        registry.register(
            "class_rollout_wave",
            "The wave in progress of a class's rollout, from 0; -1 when none runs",
            metrics.wave.clone(),
        );
        registry.register(
            "class_rollout_phase",
            "1 in the current phase of a class's rollout, 0 in the others",
            metrics.phase.clone(),
        );
        registry.register(
            "class_rollout_events",
            "Steps of class rollouts, by reason (RolloutStarted, ClusterRolling, WaveComplete, RolloutHalted...)",
            metrics.events.clone(),
        );
        metrics
    }

    /// Records where the rollout of `class` stands.
    pub fn record_state(&self, class: &ClassLabels, state: RolloutState<'_>) {
        self.updated.get_or_create(class).set(state.updated);
        self.total.get_or_create(class).set(state.total);
        self.wave.get_or_create(class).set(state.wave);
        for phase in PHASES {
            let labels = PhaseLabels {
                namespace: class.namespace.clone(),
                class: class.class.clone(),
                phase,
            };
            self.phase
                .get_or_create(&labels)
                .set(i64::from(phase == state.phase));
        }
    }

    /// Counts one event of `class`'s rollout (reasons are the step's fixed set).
    pub fn record_event(&self, class: &ClassLabels, reason: &'static str) {
        let labels = EventLabels {
            namespace: class.namespace.clone(),
            class: class.class.clone(),
            reason,
        };
        self.events.get_or_create(&labels).inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_shows_in_the_families() {
        let mut registry = Registry::default();
        let metrics = RolloutMetrics::register(&mut registry);
        let class = ClassLabels {
            namespace: "default".into(),
            class: "quick-start".into(),
        };
        metrics.record_state(
            &class,
            RolloutState {
                phase: "Progressing",
                wave: 1,
                updated: 3,
                total: 6,
            },
        );
        metrics.record_event(&class, "ClusterRolling");
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains(r#"class_rollout_wave{namespace="default",class="quick-start"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"class_rollout_phase{namespace="default",class="quick-start",phase="Progressing"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"class_rollout_phase{namespace="default",class="quick-start",phase="Complete"} 0"#
            ),
            "{text}"
        );
        assert!(text.contains(r#"class_rollout_events_total{namespace="default",class="quick-start",reason="ClusterRolling"} 1"#), "{text}");
    }
}
