//! The rollout's steps, driven as the controller drives them: a status, the class's revision and
//! the Clusters' health in, the next status out.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::health::Health;
use super::step::{step, ClusterFacts, Inputs, Step};
use super::waves::Member;
use crate::api::class_rollout::{
    ClassRolloutClassRef, ClusterClassRolloutSpec, ClusterClassRolloutStatus, HealthGate, RolloutWave,
};

const START: i64 = 1_800_000_000;

fn policy() -> ClusterClassRolloutSpec {
    let wave = |name: &str, max: Option<i32>| RolloutWave {
        name: name.into(),
        selector: LabelSelector {
            match_labels: (name == "canary").then(|| [("canary".to_owned(), "true".to_owned())].into()),
            ..Default::default()
        },
        max_rolling: max.map(IntOrString::Int),
    };
    ClusterClassRolloutSpec {
        class_ref: ClassRolloutClassRef {
            name: "quick-start".into(),
        },
        waves: vec![wave("canary", None), wave("fleet", Some(2))],
        health_gate: Some(HealthGate {
            soak: Some("30s".into()),
            deadline: Some("5m".into()),
        }),
        ..Default::default()
    }
}

/// Six Clusters, `c0` the canary; `healthy` says which are healthy at their current revision.
fn clusters(healthy: impl Fn(&str) -> bool) -> Vec<ClusterFacts> {
    (0..6)
        .map(|i| {
            let name = format!("c{i}");
            let labels = if i == 0 {
                [("canary".to_owned(), "true".to_owned())].into()
            } else {
                Default::default()
            };
            let health = if healthy(&name) {
                Health::Healthy
            } else {
                Health::Waiting("rolling".into())
            };
            ClusterFacts {
                member: Member {
                    namespace: "default".into(),
                    name,
                    labels,
                },
                health,
            }
        })
        .collect()
}

fn run(
    spec: &ClusterClassRolloutSpec,
    status: Option<&ClusterClassRolloutStatus>,
    live: &str,
    facts: &[ClusterFacts],
    at: i64,
) -> Step {
    let now = jiff::Timestamp::from_second(START + at).unwrap();
    step(&Inputs {
        spec,
        generation: Some(1),
        status,
        live_revision: Some(live),
        clusters: facts,
        now,
    })
    .unwrap()
}

fn at_revision(status: &ClusterClassRolloutStatus, revision: &str) -> Vec<String> {
    status
        .clusters
        .iter()
        .filter(|e| e.revision == revision)
        .map(|e| e.name.clone())
        .collect()
}

fn settled(spec: &ClusterClassRolloutSpec) -> ClusterClassRolloutStatus {
    run(spec, None, "r1", &clusters(|_| true), 0).status
}

#[test]
fn the_first_step_takes_the_class_as_every_clusters_revision() {
    let status = settled(&policy());
    assert_eq!(status.phase.as_deref(), Some("Complete"));
    assert_eq!(status.target_revision.as_deref(), Some("r1"));
    assert_eq!(status.stable_revision.as_deref(), Some("r1"));
    assert_eq!((status.updated_clusters, status.total_clusters), (6, 6));
}

#[test]
fn a_good_change_goes_canary_first_then_two_at_a_time_gated_on_health_and_soak() {
    let spec = policy();
    let mut status = settled(&spec);
    // The change: only the canary moves.
    let step1 = run(&spec, Some(&status), "r2", &clusters(|_| true), 10);
    assert_eq!(at_revision(&step1.status, "r2"), ["c0"]);
    assert_eq!(
        step1.events.iter().map(|e| e.reason).collect::<Vec<_>>(),
        ["RolloutStarted", "ClusterRolling"]
    );
    status = step1.status;
    // Canary rolling: nothing else starts, whatever the others' health.
    status = run(&spec, Some(&status), "r2", &clusters(|n| n != "c0"), 20).status;
    assert_eq!(at_revision(&status, "r2"), ["c0"]);
    // Canary healthy: the soak holds the next wave for 30 s.
    status = run(&spec, Some(&status), "r2", &clusters(|_| true), 40).status;
    assert_eq!(at_revision(&status, "r2"), ["c0"]);
    status = run(&spec, Some(&status), "r2", &clusters(|_| true), 69).status;
    assert_eq!(at_revision(&status, "r2"), ["c0"]);
    let next = run(&spec, Some(&status), "r2", &clusters(|_| true), 71);
    assert_eq!(
        at_revision(&next.status, "r2"),
        ["c0", "c1", "c2"],
        "two at a time"
    );
    assert_eq!(next.status.wave.as_ref().unwrap().name, "fleet");
    status = next.status;
    // c1 healthy, c2 not: one more starts, never more than two rolling.
    status = run(&spec, Some(&status), "r2", &clusters(|n| n != "c2"), 80).status;
    assert_eq!(at_revision(&status, "r2"), ["c0", "c1", "c2", "c3"]);
    status = run(
        &spec,
        Some(&status),
        "r2",
        &clusters(|n| n != "c2" && n != "c3"),
        90,
    )
    .status;
    assert_eq!(at_revision(&status, "r2").len(), 4, "two rolling: none starts");
    let mut reasons = Vec::new();
    for at in [100, 140, 180, 220] {
        let next = run(&spec, Some(&status), "r2", &clusters(|_| true), at);
        reasons.extend(next.events.iter().map(|e| e.reason));
        status = next.status;
    }
    assert_eq!(at_revision(&status, "r2").len(), 6);
    assert_eq!(status.phase.as_deref(), Some("Complete"));
    assert_eq!(status.stable_revision.as_deref(), Some("r2"));
    assert_eq!(reasons.last(), Some(&"RolloutComplete"), "{reasons:?}");
    assert_eq!(
        reasons.iter().filter(|r| **r == "WaveComplete").count(),
        1,
        "the fleet wave: {reasons:?}"
    );
}

#[test]
fn a_canary_never_healthy_halts_and_rolls_back_touching_no_other_cluster() {
    let spec = policy();
    let mut status = run(&spec, Some(&settled(&spec)), "r2", &clusters(|_| true), 0).status;
    for at in [60, 120, 240, 299] {
        status = run(&spec, Some(&status), "r2", &clusters(|n| n != "c0"), at).status;
        assert_eq!(at_revision(&status, "r2"), ["c0"]);
    }
    let halted = run(&spec, Some(&status), "r2", &clusters(|n| n != "c0"), 301);
    assert_eq!(halted.status.phase.as_deref(), Some("RolledBack"));
    assert_eq!(at_revision(&halted.status, "r1").len(), 6);
    assert_eq!(halted.status.halted_revision.as_deref(), Some("r2"));
    let reasons: Vec<_> = halted.events.iter().map(|e| (e.reason, e.warning)).collect();
    assert_eq!(reasons, [("RolloutHalted", true), ("RolledBack", true)]);
    assert!(
        halted.events[0].message.contains("default/c0: rolling"),
        "{}",
        halted.events[0].message
    );
    // The same bad content is not rolled out again; a new change is.
    let later = run(&spec, Some(&halted.status), "r2", &clusters(|_| true), 400);
    assert_eq!(later.status.phase.as_deref(), Some("RolledBack"));
    let fixed = run(&spec, Some(&later.status), "r3", &clusters(|_| true), 500);
    assert_eq!(at_revision(&fixed.status, "r3"), ["c0"]);
    assert_eq!(fixed.status.stable_revision.as_deref(), Some("r1"));
}

#[test]
fn hold_on_halt_leaves_the_canary_where_it_is() {
    let spec = ClusterClassRolloutSpec {
        on_halt: Some("Hold".into()),
        ..policy()
    };
    let status = run(&spec, Some(&settled(&spec)), "r2", &clusters(|_| true), 0).status;
    let halted = run(&spec, Some(&status), "r2", &clusters(|n| n != "c0"), 400).status;
    assert_eq!(halted.phase.as_deref(), Some("Halted"));
    assert_eq!(at_revision(&halted, "r2"), ["c0"]);
    let still = run(&spec, Some(&halted), "r2", &clusters(|_| true), 500).status;
    assert_eq!(
        at_revision(&still, "r2"),
        ["c0"],
        "a halted rollout starts nothing"
    );
}

#[test]
fn pause_holds_and_resume_goes_on() {
    let mut spec = policy();
    let status = run(&spec, Some(&settled(&spec)), "r2", &clusters(|_| true), 0).status;
    spec.paused = true;
    let paused = run(&spec, Some(&status), "r2", &clusters(|_| true), 100);
    assert_eq!(paused.status.phase.as_deref(), Some("Paused"));
    assert_eq!(
        at_revision(&paused.status, "r2"),
        ["c0"],
        "the canary done, the fleet waits"
    );
    let condition = paused
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Paused")
        .unwrap();
    assert_eq!(condition.status, "True");
    spec.paused = false;
    let resumed = run(&spec, Some(&paused.status), "r2", &clusters(|_| true), 200);
    assert_eq!(at_revision(&resumed.status, "r2").len(), 3);
}

#[test]
fn a_step_taken_again_after_a_restart_starts_no_more_clusters() {
    let spec = policy();
    let mut status = run(&spec, Some(&settled(&spec)), "r2", &clusters(|_| true), 0).status;
    status = run(&spec, Some(&status), "r2", &clusters(|_| true), 31).status;
    status = run(&spec, Some(&status), "r2", &clusters(|_| true), 62).status;
    assert_eq!(at_revision(&status, "r2").len(), 3);
    // The same facts again (a new leader reading the written status): the two rolling count.
    let again = run(&spec, Some(&status), "r2", &clusters(|n| n == "c0"), 63);
    assert_eq!(at_revision(&again.status, "r2").len(), 3);
    assert!(again.events.is_empty());
}

#[test]
fn a_cluster_created_during_a_rollout_starts_at_the_newest_revision() {
    let spec = policy();
    let status = run(&spec, Some(&settled(&spec)), "r2", &clusters(|_| true), 0).status;
    let mut facts = clusters(|_| true);
    facts.push(ClusterFacts {
        member: Member {
            namespace: "default".into(),
            name: "new".into(),
            labels: Default::default(),
        },
        health: Health::Waiting("provisioning".into()),
    });
    let next = run(&spec, Some(&status), "r2", &facts, 5).status;
    let entry = next.clusters.iter().find(|e| e.name == "new").unwrap();
    assert_eq!((entry.revision.as_str(), entry.rolled_at.is_none()), ("r2", true));
}

#[test]
fn a_change_mid_rollout_is_queued_or_supersedes() {
    let spec = policy();
    let status = run(&spec, Some(&settled(&spec)), "r2", &clusters(|_| true), 0).status;
    let queued = run(&spec, Some(&status), "r3", &clusters(|n| n != "c0"), 10).status;
    assert_eq!(queued.target_revision.as_deref(), Some("r2"));
    let superseding = ClusterClassRolloutSpec {
        on_class_change: Some("Supersede".into()),
        ..policy()
    };
    let superseded = run(&superseding, Some(&status), "r3", &clusters(|_| true), 10);
    assert_eq!(superseded.status.target_revision.as_deref(), Some("r3"));
    assert_eq!(superseded.status.stable_revision.as_deref(), Some("r1"));
    assert!(superseded.events.iter().any(|e| e.reason == "RolloutSuperseded"));
}

#[test]
fn clusters_start_only_inside_a_maintenance_window() {
    let mut spec = policy();
    // START is 2027-01-15T08:00:00Z, a Friday.
    spec.maintenance_windows = vec![crate::api::class_rollout::MaintenanceWindow {
        days: vec![],
        start: "09:00".into(),
        duration: "1h".into(),
    }];
    let status = run(&spec, Some(&settled(&spec)), "r2", &clusters(|_| true), 0);
    assert!(at_revision(&status.status, "r2").is_empty());
    assert!(status
        .held
        .as_deref()
        .unwrap_or_default()
        .contains("maintenance window"));
    let inside = run(&spec, Some(&status.status), "r2", &clusters(|_| true), 3_700);
    assert_eq!(at_revision(&inside.status, "r2"), ["c0"]);
}

#[test]
fn a_policy_that_cannot_be_applied_moves_nothing_and_says_why() {
    let mut spec = policy();
    let status = settled(&spec);
    spec.waves[0].selector.match_labels = Some([("not a key".to_owned(), "x".to_owned())].into());
    let now = jiff::Timestamp::from_second(START + 10).unwrap();
    let facts = clusters(|_| true);
    let inputs = Inputs {
        spec: &spec,
        generation: Some(2),
        status: Some(&status),
        live_revision: Some("r2"),
        clusters: &facts,
        now,
    };
    let invalid = step(&inputs).unwrap_err();
    assert!(
        invalid
            .problem
            .starts_with("spec.waves[0].selector: Invalid value: "),
        "{}",
        invalid.problem
    );
    assert_eq!(at_revision(&invalid.status, "r2"), Vec::<String>::new());
    let progressing = invalid
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Progressing")
        .unwrap();
    assert_eq!(
        (progressing.status.as_str(), progressing.reason.as_str()),
        ("False", "InvalidPolicy")
    );
    assert_eq!(invalid.status.observed_generation, Some(2));
}
