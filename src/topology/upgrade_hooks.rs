//! The upgrade's lifecycle hook calls, as the sequencing reaches them: each call goes through the
//! [`LifecycleHooks`] seam, and what it leaves (hooks to mark pending or done, the hook that holds
//! the upgrade, the earliest time to look again) is collected for the controller, which persists
//! the pending-hooks annotation before it applies anything. Pure: no clock (a held answer's
//! remaining time comes from the seam's implementation).

use std::cell::OnceCell;
use std::collections::BTreeMap;

use serde_json::Value;

use super::hooks::{HookOutcome, LifecycleHook, LifecycleHooks};
use super::hooks_pending;
use crate::api::labels::BEFORE_CLUSTER_UPGRADE_HOOK_ANNOTATION_PREFIX;
use crate::api::runtime::{LifecycleRequest, UpgradeStep};
use crate::api::Cluster;

/// How long a BeforeClusterUpgrade held by annotation waits before looking again (as v1.14).
const ANNOTATION_HOLD_SECONDS: u32 = 20 * 60;

/// The API version of lifecycle hook requests.
const HOOKS_API_VERSION: &str = "hooks.runtime.cluster.x-k8s.io/v1alpha1";

/// A hook that holds the upgrade, with what its handlers said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBy {
    /// The hook.
    pub hook: LifecycleHook,
    /// The handlers' message (may be empty).
    pub message: String,
    /// Seconds until the hook is to be called again.
    pub retry_after_seconds: u32,
}

/// What the hook calls of one reconcile leave for the controller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookEffects {
    /// Hooks called, in order (the plan output shows them).
    pub called: Vec<LifecycleHook>,
    /// Hooks to add to the pending-hooks annotation.
    pub mark_pending: Vec<LifecycleHook>,
    /// Hooks to remove from the pending-hooks annotation.
    pub mark_done: Vec<LifecycleHook>,
    /// The hooks holding the upgrade now.
    pub held: Vec<HeldBy>,
    /// A call that failed: which hook, and why.
    pub failed: Option<(LifecycleHook, String)>,
}

impl HookEffects {
    /// The lowest non-zero `retryAfterSeconds` among the holding hooks.
    pub fn requeue_after_seconds(&self) -> Option<u32> {
        self.held
            .iter()
            .map(|h| h.retry_after_seconds)
            .filter(|s| *s > 0)
            .min()
    }

    /// What holds `action`, as Cluster API words it ("Following hooks are blocking upgrade: ..."),
    /// hooks in catalog order so the text does not change between reconciles.
    pub fn message(&self, action: &str) -> Option<String> {
        let mut held: Vec<&HeldBy> = self.held.iter().collect();
        held.sort_by_key(|h| h.hook);
        let parts: Vec<String> = held
            .iter()
            .map(|h| match h.message.as_str() {
                "" => h.hook.name().to_owned(),
                message => format!("{}: {message}", h.hook.name()),
            })
            .collect();
        (!parts.is_empty()).then(|| format!("Following hooks are blocking {action}: {}", parts.join("; ")))
    }
}

/// The Cluster as hook requests carry it (its v1beta2 JSON without `managedFields`), made when
/// first needed: most reconciles call no hook.
pub struct RequestCluster<'a> {
    typed: Option<&'a Cluster>,
    json: OnceCell<Value>,
}

impl<'a> RequestCluster<'a> {
    /// The JSON of `cluster`, made on first use.
    pub fn of(cluster: &'a Cluster) -> Self {
        RequestCluster {
            typed: Some(cluster),
            json: OnceCell::new(),
        }
    }

    /// The Cluster's JSON.
    pub fn json(&self) -> &Value {
        self.json.get_or_init(|| {
            let mut json = self
                .typed
                .and_then(|cluster| serde_json::to_value(cluster).ok())
                .unwrap_or(Value::Null);
            if let Some(metadata) = json.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.remove("managedFields");
            }
            json
        })
    }
}

impl From<Value> for RequestCluster<'_> {
    fn from(json: Value) -> Self {
        RequestCluster {
            typed: None,
            json: OnceCell::from(json),
        }
    }
}

/// Calls the upgrade's hooks for one Cluster and remembers what they leave.
pub struct HookRunner<'a> {
    hooks: &'a dyn LifecycleHooks,
    namespace: &'a str,
    cluster: RequestCluster<'a>,
    annotations: BTreeMap<String, String>,
    /// The control plane's and the workers' steps still ahead (sent with each request).
    pub steps: (Vec<String>, Vec<String>),
    /// What the calls left.
    pub effects: HookEffects,
}

impl<'a> HookRunner<'a> {
    /// A runner for the Cluster `cluster` (sent in requests) in `namespace`, whose annotations
    /// say which hooks are pending.
    pub fn new(
        hooks: &'a dyn LifecycleHooks,
        namespace: &'a str,
        cluster: impl Into<RequestCluster<'a>>,
    ) -> Self {
        let cluster = cluster.into();
        let annotations = match cluster.typed {
            Some(typed) => typed.metadata.annotations.clone().unwrap_or_default(),
            None => cluster.json()["metadata"]["annotations"]
                .as_object()
                .map(|map| {
                    map.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                        .collect()
                })
                .unwrap_or_default(),
        };
        HookRunner {
            hooks,
            namespace,
            cluster,
            annotations,
            steps: (Vec::new(), Vec::new()),
            effects: HookEffects::default(),
        }
    }

    /// Whether `hook` is pending: in the annotation or marked in this reconcile, and not done.
    pub fn is_pending(&self, hook: LifecycleHook) -> bool {
        let marked = self.effects.mark_pending.contains(&hook)
            || hooks_pending::is_pending(Some(&self.annotations), hook);
        marked && !self.effects.mark_done.contains(&hook)
    }

    /// Marks hooks pending (the controller persists it before applying objects).
    pub fn mark_pending(&mut self, hooks: &[LifecycleHook]) {
        for hook in hooks {
            if !self.is_pending(*hook) {
                self.effects.mark_done.retain(|h| h != hook);
                self.effects.mark_pending.push(*hook);
            }
        }
    }

    fn mark_done(&mut self, hook: LifecycleHook) {
        if self.is_pending(hook) {
            self.effects.mark_pending.retain(|h| *h != hook);
            if hooks_pending::is_pending(Some(&self.annotations), hook) {
                self.effects.mark_done.push(hook);
            }
        }
    }

    /// The Cluster as requests carry it.
    pub fn cluster(&self) -> &Value {
        self.cluster.json()
    }

    /// Whether a call failed in this reconcile (nothing moves further then).
    pub fn failed(&self) -> bool {
        self.effects.failed.is_some()
    }

    fn request(&self, hook: LifecycleHook, versions: Versions<'_>) -> LifecycleRequest {
        let steps = |versions: &[String]| {
            versions
                .iter()
                .map(|v| UpgradeStep { version: v.clone() })
                .collect()
        };
        let (from, to, reached) = match versions {
            Versions::FromTo(from, to) => (Some(from.to_owned()), Some(to.to_owned()), None),
            Versions::Reached(version) => (None, None, Some(version.to_owned())),
        };
        let with_steps = hook != LifecycleHook::AfterClusterUpgrade;
        let workers = if with_steps {
            steps(&self.steps.1)
        } else {
            Vec::new()
        };
        LifecycleRequest {
            api_version: HOOKS_API_VERSION.to_owned(),
            kind: format!("{}Request", hook.name()),
            settings: BTreeMap::new(),
            cluster: self.cluster.json().clone(),
            from_kubernetes_version: from,
            to_kubernetes_version: to,
            kubernetes_version: reached,
            control_plane_upgrades: if with_steps {
                steps(&self.steps.0)
            } else {
                Vec::new()
            },
            workers_upgrades: workers,
        }
    }

    /// Calls `hook` when any handler serves the Cluster: true when the upgrade may go on. A held
    /// or failed call is remembered.
    fn call(&mut self, hook: LifecycleHook, versions: Versions<'_>) -> bool {
        if self.failed() {
            return false;
        }
        if !self.hooks.registered(hook, self.namespace) {
            return true;
        }
        let request = self.request(hook, versions);
        self.effects.called.push(hook);
        match self.hooks.call(hook, self.namespace, &request) {
            Ok(HookOutcome::Proceed) => true,
            Ok(HookOutcome::Retry {
                after_seconds,
                message,
            }) if hook.blocking() && after_seconds > 0 => {
                self.effects.held.push(HeldBy {
                    hook,
                    message,
                    retry_after_seconds: after_seconds,
                });
                false
            }
            Ok(HookOutcome::Retry { .. }) => true,
            Err(error) => {
                self.effects.failed = Some((hook, error));
                false
            }
        }
    }

    /// An After* hook (or BeforeWorkersUpgrade) owed by the pending-hooks annotation: called when
    /// pending, marked done once it lets the upgrade go on. True when nothing holds.
    pub fn call_pending(&mut self, hook: LifecycleHook, versions: Versions<'_>) -> bool {
        if !self.is_pending(hook) {
            return true;
        }
        let done = self.call(hook, versions);
        if done {
            self.mark_done(hook);
        }
        done
    }

    /// BeforeClusterUpgrade, called once per upgrade (until AfterClusterUpgrade is pending); a
    /// `before-upgrade.hook.cluster.cluster.x-k8s.io/` annotation on the Cluster holds it without
    /// a call. Marks AfterClusterUpgrade pending once it lets the upgrade start.
    pub fn before_cluster_upgrade(&mut self, from: &str, to: &str) -> bool {
        let hook = LifecycleHook::BeforeClusterUpgrade;
        if self.is_pending(LifecycleHook::AfterClusterUpgrade) {
            return true;
        }
        let prefix = format!("{BEFORE_CLUSTER_UPGRADE_HOOK_ANNOTATION_PREFIX}/");
        let holding: Vec<&str> = self
            .annotations
            .keys()
            .filter(|key| key.starts_with(&prefix))
            .map(String::as_str)
            .collect();
        if !holding.is_empty() {
            let message = match holding.as_slice() {
                [one] => format!("annotation {one} is set"),
                many => format!("annotations {} are set", many.join(", ")),
            };
            self.effects.held.push(HeldBy {
                hook,
                message,
                retry_after_seconds: ANNOTATION_HOLD_SECONDS,
            });
            return false;
        }
        let go = self.call(hook, Versions::FromTo(from, to));
        if go {
            self.mark_pending(&[LifecycleHook::AfterClusterUpgrade]);
        }
        go
    }

    /// BeforeControlPlaneUpgrade for one step; once it lets the step start, the step's After*
    /// hooks become pending (and the workers' hooks when `workers_move` at this step).
    pub fn before_control_plane_upgrade(&mut self, from: &str, to: &str, workers_move: bool) -> bool {
        let go = self.call(
            LifecycleHook::BeforeControlPlaneUpgrade,
            Versions::FromTo(from, to),
        );
        if go {
            self.mark_pending(&[LifecycleHook::AfterControlPlaneUpgrade]);
            if workers_move {
                self.mark_pending(&[
                    LifecycleHook::BeforeWorkersUpgrade,
                    LifecycleHook::AfterWorkersUpgrade,
                ]);
            }
        }
        go
    }
}

/// The versions a hook request carries.
#[derive(Debug, Clone, Copy)]
pub enum Versions<'v> {
    /// From one version to another (the Before* hooks).
    FromTo(&'v str, &'v str),
    /// The version reached (the After* hooks).
    Reached(&'v str),
}

#[cfg(test)]
#[path = "upgrade_hooks_tests.rs"]
mod tests;
