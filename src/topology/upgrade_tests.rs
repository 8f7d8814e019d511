use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::testing::{decide, NO_STEPS};
use super::*;
use crate::api::labels::{TOPOLOGY_DEFER_UPGRADE_ANNOTATION, TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION};

const OLD: &str = "v1.30.0";
const NEW: &str = "v1.31.0";

fn control_plane(spec: &str, status: Option<&str>) -> Value {
    let mut cp = json!({"spec": {"version": spec, "replicas": 3}});
    if let Some(status) = status {
        cp["status"] = json!({"version": status, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3});
    }
    cp
}

fn worker<'a>(
    name: &'a str,
    version: Option<&'a str>,
    annotations: &'a BTreeMap<String, String>,
) -> Worker<'a> {
    Worker {
        topology_name: name,
        annotations,
        current: version.map(|version| CurrentWorker {
            name,
            version,
            rollout_after: None,
        }),
        rolling_out: false,
    }
}

fn inputs<'a>(cp: Option<&'a Value>, workers: &'a [Worker<'a>]) -> Inputs<'a> {
    Inputs {
        target: NEW,
        rollout_after: None,
        control_plane: cp,
        control_plane_machines: &[],
        machine_deployments: workers,
        machine_pools: &[],
        concurrency: 1,
        steps: &NO_STEPS,
        min_workers_version: None,
    }
}

fn versions(plan: &UpgradePlan) -> Vec<&str> {
    plan.machine_deployments
        .iter()
        .map(|d| d.version.as_str())
        .collect()
}

#[test]
fn the_control_plane_phase_follows_its_spec_and_status() {
    assert_eq!(ControlPlanePhase::of(None), ControlPlanePhase::New);
    assert_eq!(
        ControlPlanePhase::of(Some(&control_plane(OLD, None))),
        ControlPlanePhase::Provisioning
    );
    assert_eq!(
        ControlPlanePhase::of(Some(&control_plane(NEW, Some(OLD)))),
        ControlPlanePhase::Upgrading { to: NEW.into() }
    );
    assert_eq!(
        ControlPlanePhase::of(Some(&control_plane(OLD, Some(OLD)))),
        ControlPlanePhase::Stable
    );
    let mut scaling = control_plane(OLD, Some(OLD));
    scaling["status"]["updatedReplicas"] = json!(2);
    assert_eq!(ControlPlanePhase::of(Some(&scaling)), ControlPlanePhase::Scaling);
    scaling["status"]["updatedReplicas"] = json!(3);
    scaling["status"]["unavailableReplicas"] = json!(1);
    assert_eq!(ControlPlanePhase::of(Some(&scaling)), ControlPlanePhase::Scaling);
    let managed = json!({"spec": {"version": OLD}, "status": {"version": OLD}});
    assert_eq!(ControlPlanePhase::of(Some(&managed)), ControlPlanePhase::Stable);
}

#[test]
fn a_new_cluster_takes_the_target_everywhere() {
    let none = BTreeMap::new();
    let workers = [worker("md-0", None, &none)];
    let plan = decide(&inputs(None, &workers));
    assert_eq!(plan.control_plane_version, NEW);
    assert_eq!(versions(&plan), [NEW]);
    assert!(plan.machine_deployments[0].create);
    assert!(plan.is_done());
}

#[test]
fn the_control_plane_starts_first_and_workers_wait() {
    let none = BTreeMap::new();
    let cp = control_plane(OLD, Some(OLD));
    let workers = [worker("md-0", Some(OLD), &none), worker("md-1", Some(OLD), &none)];
    let plan = decide(&inputs(Some(&cp), &workers));
    assert_eq!(plan.control_plane_version, NEW);
    assert!(!plan.control_plane_pending);
    assert_eq!(versions(&plan), [OLD, OLD]);
    assert_eq!(plan.machine_deployments_pending.upgrade, ["md-0", "md-1"]);

    let upgrading = control_plane(NEW, Some(OLD));
    let plan = decide(&inputs(Some(&upgrading), &workers));
    assert_eq!(
        plan.control_plane,
        ControlPlanePhase::Upgrading { to: NEW.into() }
    );
    assert_eq!(versions(&plan), [OLD, OLD]);
}

#[test]
fn workers_upgrade_one_at_a_time_unless_the_cluster_allows_more() {
    let none = BTreeMap::new();
    let cp = control_plane(NEW, Some(NEW));
    let workers = [
        worker("md-0", Some(OLD), &none),
        worker("md-1", Some(OLD), &none),
        worker("md-2", Some(OLD), &none),
    ];
    let plan = decide(&inputs(Some(&cp), &workers));
    assert_eq!(versions(&plan), [NEW, OLD, OLD]);
    assert_eq!(plan.machine_deployments_pending.upgrade, ["md-1", "md-2"]);

    let plan = decide(&Inputs {
        concurrency: 2,
        ..inputs(Some(&cp), &workers)
    });
    assert_eq!(versions(&plan), [NEW, NEW, OLD]);

    // md-0 already done, md-1 rolling out its machines: md-2 waits for it.
    let mut rolling = workers;
    rolling[0] = worker("md-0", Some(NEW), &none);
    rolling[1] = Worker {
        rolling_out: true,
        ..worker("md-1", Some(NEW), &none)
    };
    let plan = decide(&inputs(Some(&cp), &rolling));
    assert_eq!(versions(&plan), [NEW, NEW, OLD]);
    assert_eq!(plan.machine_deployments_pending.rolling_out, ["md-1"]);
}

#[test]
fn the_control_plane_waits_for_workers_still_rolling_out() {
    let none = BTreeMap::new();
    let cp = control_plane(OLD, Some(OLD));
    let workers = [Worker {
        rolling_out: true,
        ..worker("md-0", Some(OLD), &none)
    }];
    let plan = decide(&inputs(Some(&cp), &workers));
    assert_eq!(plan.control_plane_version, OLD);
    assert!(plan.control_plane_pending);
    assert!(!plan.is_done());
}

#[test]
fn provisioning_or_scaling_control_planes_hold_upgrades_and_new_workers() {
    let none = BTreeMap::new();
    let provisioning = control_plane(OLD, None);
    let workers = [worker("md-0", Some(OLD), &none), worker("md-new", None, &none)];
    let plan = decide(&inputs(Some(&provisioning), &workers));
    assert_eq!(plan.control_plane_version, OLD);
    assert!(plan.control_plane_pending);
    assert_eq!(plan.machine_deployments_pending.create, ["md-new"]);
    assert!(!plan.machine_deployments[1].create);

    let mut scaling = control_plane(NEW, Some(NEW));
    scaling["status"]["readyReplicas"] = json!(1);
    let plan = decide(&inputs(Some(&scaling), &workers));
    assert_eq!(versions(&plan), [OLD, NEW]);
    assert!(!plan.machine_deployments[1].create);
}

#[test]
fn defer_and_hold_sequence_keep_workers_back() {
    let none = BTreeMap::new();
    let defer = BTreeMap::from([(TOPOLOGY_DEFER_UPGRADE_ANNOTATION.to_owned(), String::new())]);
    let hold = BTreeMap::from([(
        TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION.to_owned(),
        String::new(),
    )]);
    let cp = control_plane(NEW, Some(NEW));
    let workers = [
        worker("md-0", Some(OLD), &defer),
        worker("md-1", Some(OLD), &none),
        worker("md-2", Some(OLD), &hold),
        worker("md-3", Some(OLD), &none),
    ];
    let plan = decide(&Inputs {
        concurrency: 10,
        ..inputs(Some(&cp), &workers)
    });
    assert_eq!(versions(&plan), [OLD, NEW, OLD, OLD]);
    assert_eq!(
        plan.machine_deployments_pending.deferred,
        ["md-0", "md-2", "md-3"]
    );
    assert!(
        !plan.is_done() && !plan.waits_on_rollout(),
        "only a change of the topology lifts a deferral: nothing to poll for"
    );
    let queued = [worker("md-1", Some(OLD), &none), worker("md-3", Some(OLD), &none)];
    let plan = decide(&inputs(Some(&cp), &queued));
    assert_eq!(plan.machine_deployments_pending.upgrade, ["md-3"]);
    assert!(plan.waits_on_rollout(), "md-3 goes once md-1 has rolled out");
}

#[test]
fn rollout_after_reaches_workers_once_the_control_plane_has_carried_it_out() {
    const AFTER: &str = "2026-01-01T00:00:00Z";
    let none = BTreeMap::new();
    let workers = [worker("md-0", Some(NEW), &none)];
    let mut cp = control_plane(NEW, Some(NEW));
    let decide = |cp: &Value, machines: &[&Value]| {
        decide(&Inputs {
            rollout_after: Some(AFTER),
            control_plane: Some(cp),
            control_plane_machines: machines,
            ..inputs(None, &workers)
        })
    };
    // The control plane has not taken it yet.
    let plan = decide(&cp, &[]);
    assert_eq!(plan.machine_deployments[0].rollout_after, None);
    assert_eq!(plan.machine_deployments_pending.upgrade, ["md-0"]);

    // It has, but a machine older than rolloutAfter remains.
    cp["spec"]["rollout"] = json!({"after": AFTER});
    let old = json!({"metadata": {"creationTimestamp": "2025-12-31T23:59:59Z"}});
    let new = json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:05Z"}});
    assert_eq!(
        decide(&cp, &[&old, &new]).machine_deployments[0].rollout_after,
        None
    );

    // Every control plane machine is newer: the workers follow.
    let plan = decide(&cp, &[&new]);
    assert_eq!(plan.machine_deployments[0].rollout_after.as_deref(), Some(AFTER));
    assert!(plan.is_done());
}

#[test]
fn the_concurrency_annotation_is_a_positive_integer_or_one() {
    let with = |v: &str| {
        BTreeMap::from([(
            crate::api::labels::TOPOLOGY_UPGRADE_CONCURRENCY_ANNOTATION.to_owned(),
            v.to_owned(),
        )])
    };
    assert_eq!(concurrency(None), 1);
    assert_eq!(concurrency(Some(&with("3"))), 3);
    assert_eq!(concurrency(Some(&with("0"))), 1);
    assert_eq!(concurrency(Some(&with("x"))), 1);
}

#[test]
fn v1beta2_control_planes_are_read_from_their_versions_and_counters() {
    let cp = |versions: Value, counters: Value| {
        let mut status = json!({"versions": versions, "replicas": 3, "readyReplicas": 3});
        if let (Some(status), Some(counters)) = (status.as_object_mut(), counters.as_object()) {
            status.extend(counters.clone());
        }
        json!({"spec": {"version": NEW, "replicas": 3}, "status": status})
    };
    let settled = json!({"upToDateReplicas": 3, "availableReplicas": 3});
    let mixed = json!([{"version": NEW, "replicas": 2}, {"version": OLD, "replicas": 1}]);
    assert_eq!(
        ControlPlanePhase::of(Some(&cp(mixed, settled.clone()))),
        ControlPlanePhase::Upgrading { to: NEW.into() }
    );
    let done = json!([{"version": NEW, "replicas": 3}]);
    assert_eq!(
        ControlPlanePhase::of(Some(&cp(done.clone(), settled))),
        ControlPlanePhase::Stable
    );
    let unavailable = json!({"upToDateReplicas": 3, "availableReplicas": 2});
    assert_eq!(
        ControlPlanePhase::of(Some(&cp(done, unavailable))),
        ControlPlanePhase::Scaling
    );
    assert_eq!(
        ControlPlanePhase::of(Some(&cp(json!([]), json!({})))),
        ControlPlanePhase::Provisioning
    );
}

/// The steps from `cp` (workers at `min`) to `target`, one minor at a time, defaulted.
fn chained(target: &str, cp: &str, min: &str) -> UpgradeSteps {
    let listed: Vec<String> = ["v1.30.0", "v1.31.0", "v1.32.0", "v1.33.0"]
        .map(String::from)
        .to_vec();
    let steps = crate::topology::upgrade_steps::from_class_versions(&listed, target, cp).unwrap();
    crate::topology::upgrade_steps::default_and_validate(target, cp, Some(min), steps, Vec::new()).unwrap()
}

#[test]
fn a_three_minor_upgrade_steps_the_control_plane_and_moves_workers_once() {
    let none = BTreeMap::new();
    let workers = [worker("md-0", Some("v1.30.0"), &none)];
    let mut seen = Vec::new();
    let mut cp_version = "v1.30.0".to_owned();
    for _ in 0..3 {
        let cp = control_plane(&cp_version, Some(&cp_version));
        let steps = chained("v1.33.0", &cp_version, "v1.30.0");
        let plan = decide(&Inputs {
            target: "v1.33.0",
            steps: &steps,
            min_workers_version: Some("v1.30.0"),
            ..inputs(Some(&cp), &workers)
        });
        assert!(plan.control_plane_starting);
        assert_eq!(
            versions(&plan),
            ["v1.30.0"],
            "workers wait while the control plane steps"
        );
        assert_eq!(
            plan.upgrade_step.as_deref(),
            Some(plan.control_plane_version.as_str())
        );
        cp_version = plan.control_plane_version.clone();
        seen.push(cp_version.clone());
    }
    assert_eq!(seen, ["v1.31.0", "v1.32.0", "v1.33.0"]);
    // At the target, the control plane waits for the workers, which take one step.
    let cp = control_plane("v1.33.0", Some("v1.33.0"));
    let steps = chained("v1.33.0", "v1.33.0", "v1.30.0");
    assert_eq!(steps.workers, ["v1.33.0"]);
    let plan = decide(&Inputs {
        target: "v1.33.0",
        steps: &steps,
        min_workers_version: Some("v1.30.0"),
        ..inputs(Some(&cp), &workers)
    });
    assert!(!plan.control_plane_starting);
    assert_eq!(versions(&plan), ["v1.33.0"]);
}

#[test]
fn workers_take_an_intermediate_step_when_the_skew_policy_requires_it() {
    let none = BTreeMap::new();
    let workers = [worker("md-0", Some("v1.30.0"), &none)];
    let steps = UpgradeSteps {
        control_plane: vec!["v1.34.0".into(), "v1.35.0".into()],
        workers: vec!["v1.33.0".into(), "v1.35.0".into()],
    };
    // The control plane reached v1.33: it waits while the workers catch up to it.
    let cp = control_plane("v1.33.0", Some("v1.33.0"));
    let plan = decide(&Inputs {
        target: "v1.35.0",
        steps: &steps,
        min_workers_version: Some("v1.30.0"),
        ..inputs(Some(&cp), &workers)
    });
    assert_eq!(plan.control_plane_version, "v1.33.0");
    assert!(plan.control_plane_pending);
    assert_eq!(versions(&plan), ["v1.33.0"]);
}
