use std::cell::RefCell;

use serde_json::json;

use super::*;
use crate::topology::hooks_pending::PENDING_HOOKS_ANNOTATION;

/// Handlers for every hook; those in `holding` answer retryAfterSeconds 30; requests recorded.
#[derive(Default)]
struct Scripted {
    holding: Vec<LifecycleHook>,
    calls: RefCell<Vec<LifecycleRequest>>,
}

impl LifecycleHooks for Scripted {
    fn registered(&self, _hook: LifecycleHook, _namespace: &str) -> bool {
        true
    }

    fn call(
        &self,
        hook: LifecycleHook,
        _namespace: &str,
        request: &LifecycleRequest,
    ) -> Result<HookOutcome, String> {
        self.calls.borrow_mut().push(request.clone());
        Ok(if self.holding.contains(&hook) {
            HookOutcome::Retry {
                after_seconds: 30,
                message: "draining".to_owned(),
            }
        } else {
            HookOutcome::Proceed
        })
    }
}

fn cluster(annotations: serde_json::Value) -> Value {
    json!({"metadata": {"name": "c1", "namespace": "ns", "annotations": annotations}})
}

#[test]
fn before_cluster_upgrade_marks_after_cluster_upgrade_pending_once_it_proceeds() {
    let hooks = Scripted::default();
    let mut runner = HookRunner::new(&hooks, "ns", cluster(json!({})));
    runner.steps = (vec!["v1.32.0".into(), "v1.33.0".into()], vec!["v1.33.0".into()]);
    assert!(runner.before_cluster_upgrade("v1.31.0", "v1.33.0"));
    assert_eq!(runner.effects.mark_pending, [LifecycleHook::AfterClusterUpgrade]);
    let calls = hooks.calls.borrow();
    assert_eq!(calls[0].kind, "BeforeClusterUpgradeRequest");
    assert_eq!(calls[0].from_kubernetes_version.as_deref(), Some("v1.31.0"));
    assert_eq!(calls[0].control_plane_upgrades.len(), 2);
    assert_eq!(calls[0].workers_upgrades[0].version, "v1.33.0");
    drop(calls);
    // Once the upgrade started, it is not called again.
    assert!(runner.before_cluster_upgrade("v1.31.0", "v1.33.0"));
    assert_eq!(hooks.calls.borrow().len(), 1);
}

#[test]
fn an_annotation_holds_before_cluster_upgrade_without_a_call() {
    let hooks = Scripted::default();
    let annotations = json!({"before-upgrade.hook.cluster.cluster.x-k8s.io/b": "", "before-upgrade.hook.cluster.cluster.x-k8s.io/a": ""});
    let mut runner = HookRunner::new(&hooks, "ns", cluster(annotations));
    assert!(!runner.before_cluster_upgrade("v1.31.0", "v1.32.0"));
    assert!(hooks.calls.borrow().is_empty());
    assert_eq!(runner.effects.requeue_after_seconds(), Some(1200));
    assert_eq!(
        runner.effects.message("upgrade").unwrap(),
        "Following hooks are blocking upgrade: BeforeClusterUpgrade: annotations before-upgrade.hook.cluster.cluster.x-k8s.io/a, before-upgrade.hook.cluster.cluster.x-k8s.io/b are set"
    );
}

#[test]
fn a_held_after_hook_stays_pending_and_a_passing_one_is_marked_done() {
    let hooks = Scripted {
        holding: vec![LifecycleHook::AfterControlPlaneUpgrade],
        ..Scripted::default()
    };
    let pending =
        json!({PENDING_HOOKS_ANNOTATION: "AfterClusterUpgrade,AfterControlPlaneUpgrade,AfterWorkersUpgrade"});
    let mut runner = HookRunner::new(&hooks, "ns", cluster(pending));
    assert!(!runner.call_pending(
        LifecycleHook::AfterControlPlaneUpgrade,
        Versions::Reached("v1.32.0")
    ));
    assert!(runner.call_pending(LifecycleHook::AfterWorkersUpgrade, Versions::Reached("v1.32.0")));
    // Not pending: no call.
    assert!(runner.call_pending(
        LifecycleHook::BeforeWorkersUpgrade,
        Versions::FromTo("v1.31.0", "v1.32.0")
    ));
    assert_eq!(runner.effects.mark_done, [LifecycleHook::AfterWorkersUpgrade]);
    assert_eq!(
        crate::topology::hooks_pending::updated(
            Some("AfterClusterUpgrade,AfterControlPlaneUpgrade,AfterWorkersUpgrade"),
            &runner.effects.mark_pending,
            &runner.effects.mark_done,
        )
        .as_deref(),
        Some("AfterClusterUpgrade,AfterControlPlaneUpgrade")
    );
    assert_eq!(runner.effects.requeue_after_seconds(), Some(30));
    assert_eq!(
        hooks.calls.borrow()[0].kubernetes_version.as_deref(),
        Some("v1.32.0")
    );
}

#[test]
fn a_failed_call_stops_further_calls() {
    struct Failing;
    impl LifecycleHooks for Failing {
        fn registered(&self, _: LifecycleHook, _: &str) -> bool {
            true
        }
        fn call(&self, _: LifecycleHook, _: &str, _: &LifecycleRequest) -> Result<HookOutcome, String> {
            Err("connection refused".to_owned())
        }
    }
    let mut runner = HookRunner::new(&Failing, "ns", cluster(json!({})));
    assert!(!runner.before_control_plane_upgrade("v1.31.0", "v1.32.0", true));
    assert!(runner.failed());
    assert!(runner.effects.mark_pending.is_empty());
}
