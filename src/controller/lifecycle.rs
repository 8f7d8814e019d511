//! The topology controller's lifecycle hooks, as Cluster API v1.14 calls them around a Cluster's
//! creation and deletion: BeforeClusterCreate holds the creation of the topology's objects,
//! AfterControlPlaneInitialized is called once (its intent kept in the pending-hooks annotation,
//! so a restart does not lose it), BeforeClusterDelete holds deletion until it lets go (then the
//! Cluster gets the ok-to-delete annotation the deletion waits for). The upgrade hooks are the
//! engine's; the marks it asks for are written here too, in one patch before any object is.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kube::api::DynamicObject;
use kube::runtime::controller::Action;
use serde_json::{json, Value};

use super::topology_writes::{cluster_in_cache, failed, report, Context, ReconcileError};
use crate::api::runtime::{LifecycleRequest, OK_TO_DELETE_ANNOTATION};
use crate::api::Cluster;
use crate::contract::cluster_status::CONTROL_PLANE_INITIALIZED;
use crate::topology::hooks::{HookOutcome, LifecycleHook, LifecycleHooks};
use crate::topology::hooks_pending::{is_pending, updated, PENDING_HOOKS_ANNOTATION};
use crate::topology::reconcile::Blocked;

/// The reason of a Cluster whose creation a hook holds.
const CLUSTER_CREATING: &str = "ClusterCreating";
/// The reason of a Cluster being deleted.
const DELETING: &str = "Deleting";
/// The reason of a Cluster whose lifecycle hook call failed (read as a failure).
pub const HOOK_FAILED: &str = "LifecycleHookFailed";

/// The marks the pending-hooks annotation takes in this reconcile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    /// Hooks whose call is now owed.
    pub pending: Vec<LifecycleHook>,
    /// Hooks called (or no longer owed).
    pub done: Vec<LifecycleHook>,
}

/// Why a reconcile stops at a hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// A hook holds: the condition to write, and when to look again.
    Retry(Blocked, Duration),
    /// A hook call failed (retried with backoff).
    Failed(Blocked),
}

/// The hooks due before the engine decides, for the (not deleted) Cluster `object`:
/// BeforeClusterCreate while its topology is not created (holding it), and
/// AfterControlPlaneInitialized once its control plane is, if owed. The marks to persist, or why
/// the reconcile stops here.
pub async fn before_reconcile(ctx: &Arc<Context>, object: &Value, cluster: &Cluster) -> Result<Marks, Hold> {
    let namespace = namespace_of(object);
    let creating = creating(cluster);
    let mut marks = Marks::default();
    if creating {
        let hook = LifecycleHook::BeforeClusterCreate;
        if let HookOutcome::Retry {
            after_seconds,
            message,
        } = call(ctx, hook, object).await?
        {
            let blocked = Blocked {
                reason: CLUSTER_CREATING,
                message: blocking("Cluster topology creation", hook, &message),
            };
            return Err(Hold::Retry(blocked, seconds(after_seconds)));
        }
    }
    let initialized = LifecycleHook::AfterControlPlaneInitialized;
    let annotations = annotations_of(object);
    if is_pending(Some(&annotations), initialized) {
        if control_plane_initialized(object) {
            call(ctx, initialized, object).await?;
            marks.done.push(initialized);
        }
    } else if creating && ctx.extensions.registered(initialized, &namespace) {
        // Beyond v1.14, which marks every new Cluster: only when a handler serves it, so a
        // Cluster without one gets no write for it.
        marks.pending.push(initialized);
    }
    Ok(marks)
}

/// How many times the marks are written over a conflicting write (the Cluster's status is
/// written by other controllers all the time) before the reconcile fails.
const MARK_ATTEMPTS: usize = 3;

/// Marks the hooks `pending` and then `done` on the Cluster's pending-hooks annotation: one
/// guarded merge patch, and only when its value changes (a settled Cluster is not written). The
/// hooks these marks follow were already called: a conflict re-reads the Cluster and marks again
/// rather than fail the reconcile, which would call them again from the old marks.
pub async fn persist(
    ctx: &Context,
    object: &Value,
    pending: &[LifecycleHook],
    done: &[LifecycleHook],
) -> Result<(), ReconcileError> {
    let what = "mark the lifecycle hooks of";
    let mut latest = cluster_in_cache(ctx, object).unwrap_or_else(|| object.clone());
    let mut attempt = 1;
    loop {
        let Some(patch) = marks_patch(&latest, pending, done) else {
            return Ok(());
        };
        match ctx.syncer.patch_guarded(&latest, &patch).await {
            Ok(written) => {
                ctx.cache.observe(written);
                return Ok(());
            }
            Err(kube::Error::Api(status)) if status.code == 409 && attempt < MARK_ATTEMPTS => {
                attempt += 1;
                latest = ctx
                    .syncer
                    .get(&latest)
                    .await
                    .map_err(|source| failed(what, &latest, source))?;
            }
            Err(source) => return Err(failed(what, &latest, source)),
        }
    }
}

/// The merge patch that marks `pending` then `done` on the Cluster `latest`, from the value its
/// pending-hooks annotation has there; none when that value would not change.
fn marks_patch(latest: &Value, pending: &[LifecycleHook], done: &[LifecycleHook]) -> Option<Value> {
    let current = annotations_of(latest).remove(PENDING_HOOKS_ANNOTATION);
    let next = updated(current.as_deref(), pending, done);
    (next != current).then(|| json!({"metadata": {"annotations": {PENDING_HOOKS_ANNOTATION: next}}}))
}

/// Writes what a hook holding or failing means for the Cluster, and when to look again.
pub async fn held(
    ctx: &Context,
    cluster: &DynamicObject,
    object: &Value,
    key: &str,
    hold: &Hold,
) -> Result<Action, ReconcileError> {
    let (blocked, next) = match hold {
        Hold::Retry(blocked, after) => {
            tracing::info!(cluster = %key, message = %blocked.message, retry_in = ?after, "held by a lifecycle hook");
            ctx.failures.succeeded(key);
            (blocked, *after)
        }
        Hold::Failed(blocked) => {
            let (failures, delay) = ctx.failures.failed(key);
            tracing::info!(cluster = %key, message = %blocked.message, failures, retry_in = ?delay, "a lifecycle hook call failed");
            (blocked, delay)
        }
    };
    report(ctx, cluster, object, Err(blocked)).await?;
    Ok(Action::requeue(next))
}

/// Reconciles a deleted Cluster with a managed topology: until it has the ok-to-delete
/// annotation, its BeforeClusterDelete hook is called (holding it while it answers
/// `retryAfterSeconds`), then the annotation is set. Without a handler the annotation is set at
/// once and nothing else is written.
pub async fn reconcile_delete(
    ctx: &Arc<Context>,
    cluster: &DynamicObject,
    object: &Value,
    key: &str,
) -> Result<Action, ReconcileError> {
    if annotations_of(object).contains_key(OK_TO_DELETE_ANNOTATION) {
        return Ok(Action::await_change());
    }
    let hook = LifecycleHook::BeforeClusterDelete;
    if !ctx.extensions.registered(hook, &namespace_of(object)) {
        ok_to_delete(ctx, object).await?;
        return Ok(Action::await_change());
    }
    let deleting = |message: String| Blocked {
        reason: DELETING,
        message,
    };
    match call(ctx, hook, object).await {
        Ok(HookOutcome::Retry {
            after_seconds,
            message,
        }) => {
            let message = format!("Cluster is deleting. {}", blocking("delete", hook, &message));
            let hold = Hold::Retry(deleting(message), seconds(after_seconds));
            held(ctx, cluster, object, key, &hold).await
        }
        Ok(HookOutcome::Proceed) => {
            ctx.failures.succeeded(key);
            report(
                ctx,
                cluster,
                object,
                Err(&deleting("Cluster is deleting".to_owned())),
            )
            .await?;
            ok_to_delete(ctx, object).await?;
            Ok(Action::await_change())
        }
        Err(hold) => held(ctx, cluster, object, key, &hold).await,
    }
}

/// Sets the ok-to-delete annotation on the Cluster (its deletion may go on).
async fn ok_to_delete(ctx: &Context, object: &Value) -> Result<(), ReconcileError> {
    let latest = cluster_in_cache(ctx, object).unwrap_or_else(|| object.clone());
    let patch = json!({"metadata": {"annotations": {OK_TO_DELETE_ANNOTATION: ""}}});
    patch_cluster(ctx, &latest, &patch, "mark as ok to delete").await
}

/// Merge-patches the Cluster `latest` (guarded by its resourceVersion) and keeps what was written.
async fn patch_cluster(
    ctx: &Context,
    latest: &Value,
    patch: &Value,
    what: &str,
) -> Result<(), ReconcileError> {
    let written = ctx
        .syncer
        .patch_guarded(latest, patch)
        .await
        .map_err(|source| failed(what, latest, source))?;
    ctx.cache.observe(written);
    Ok(())
}

/// Calls `hook` for the Cluster `object` on a blocking thread (the client waits for the
/// answers); a failure is a [`Hold::Failed`] naming the hook.
async fn call(ctx: &Arc<Context>, hook: LifecycleHook, object: &Value) -> Result<HookOutcome, Hold> {
    let (ctx, namespace) = (Arc::clone(ctx), namespace_of(object));
    let request = LifecycleRequest::for_cluster(object);
    let called = tokio::task::spawn_blocking(move || ctx.extensions.call(hook, &namespace, &request)).await;
    let failed = |message: String| {
        Hold::Failed(Blocked {
            reason: HOOK_FAILED,
            message,
        })
    };
    match called {
        Ok(answer) => answer.map_err(failed),
        Err(error) => Err(failed(format!("the {} hook call stopped: {error}", hook.name()))),
    }
}

/// Whether the Cluster's topology is still to be created: neither its infrastructure nor its
/// control plane is referenced yet.
pub fn creating(cluster: &Cluster) -> bool {
    cluster.spec.infrastructure_ref.is_unset() && cluster.spec.control_plane_ref.is_unset()
}

/// Whether the Cluster's `ControlPlaneInitialized` condition is True.
pub fn control_plane_initialized(object: &Value) -> bool {
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == CONTROL_PLANE_INITIALIZED && c["status"] == "True")
}

/// Cluster API v1.14's condition message for hooks holding `action`.
pub fn blocking(action: &str, hook: LifecycleHook, message: &str) -> String {
    if message.is_empty() {
        format!("Following hooks are blocking {action}: {}", hook.name())
    } else {
        format!(
            "Following hooks are blocking {action}: {}: {message}",
            hook.name()
        )
    }
}

fn seconds(after_seconds: u32) -> Duration {
    Duration::from_secs(after_seconds.max(1).into())
}

fn namespace_of(object: &Value) -> String {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_owned()
}

fn annotations_of(object: &Value) -> BTreeMap<String, String> {
    object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_owned())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_is_creating_until_a_reference_is_set() {
        let cluster = |spec: Value| -> Cluster {
            serde_json::from_value(
                json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                "metadata": {"name": "dev"}, "spec": spec}),
            )
            .unwrap()
        };
        assert!(creating(&cluster(json!({"topology": {"version": "v1.33.0"}}))));
        let reference =
            json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": "dev"});
        assert!(!creating(&cluster(json!({"infrastructureRef": reference}))));
    }

    #[test]
    fn the_control_plane_is_initialized_by_the_clusters_condition() {
        let with = |status: &str| json!({"status": {"conditions": [{"type": "ControlPlaneInitialized", "status": status}]}});
        assert!(control_plane_initialized(&with("True")));
        assert!(!control_plane_initialized(&with("False")));
        assert!(!control_plane_initialized(&json!({})));
    }

    #[test]
    fn the_marks_are_computed_from_the_copy_written_over() {
        let cluster = |pending: Option<&str>| {
            let mut cluster = json!({"metadata": {"name": "dev", "resourceVersion": "7"}});
            if let Some(pending) = pending {
                cluster["metadata"]["annotations"] = json!({PENDING_HOOKS_ANNOTATION: pending});
            }
            cluster
        };
        let (after_cp, after_cluster) = (
            LifecycleHook::AfterControlPlaneUpgrade,
            LifecycleHook::AfterClusterUpgrade,
        );
        // The last control plane step starts, the workers moving with it: over the fresh copy
        // (AfterControlPlaneUpgrade owed again, AfterClusterUpgrade still owed).
        let patch = marks_patch(
            &cluster(Some("AfterClusterUpgrade,AfterControlPlaneUpgrade")),
            &[
                after_cp,
                LifecycleHook::BeforeWorkersUpgrade,
                LifecycleHook::AfterWorkersUpgrade,
            ],
            &[],
        );
        let all = "AfterClusterUpgrade,AfterControlPlaneUpgrade,AfterWorkersUpgrade,BeforeWorkersUpgrade";
        assert_eq!(
            patch,
            Some(json!({"metadata": {"annotations": {PENDING_HOOKS_ANNOTATION: all}}}))
        );
        assert_eq!(marks_patch(&cluster(Some(all)), &[after_cp], &[]), None);
        let patch = marks_patch(
            &cluster(Some("AfterClusterUpgrade,AfterControlPlaneUpgrade")),
            &[],
            &[after_cp],
        );
        assert_eq!(
            patch,
            Some(json!({"metadata": {"annotations": {PENDING_HOOKS_ANNOTATION: "AfterClusterUpgrade"}}}))
        );
        let patch = marks_patch(&cluster(None), &[after_cluster, after_cp], &[]);
        assert_eq!(
            patch,
            Some(
                json!({"metadata": {"annotations": {PENDING_HOOKS_ANNOTATION: "AfterClusterUpgrade,AfterControlPlaneUpgrade"}}})
            )
        );
        // The last one done: the annotation goes.
        let patch = marks_patch(&cluster(Some("AfterClusterUpgrade")), &[], &[after_cluster]);
        assert_eq!(
            patch,
            Some(json!({"metadata": {"annotations": {PENDING_HOOKS_ANNOTATION: null}}}))
        );
        assert_eq!(marks_patch(&cluster(None), &[], &[after_cluster]), None);
    }

    #[test]
    fn the_message_names_the_hook_and_the_extensions_words() {
        let hook = LifecycleHook::BeforeClusterCreate;
        assert_eq!(
            blocking("Cluster topology creation", hook, "quota"),
            "Following hooks are blocking Cluster topology creation: BeforeClusterCreate: quota"
        );
        assert_eq!(
            blocking("delete", LifecycleHook::BeforeClusterDelete, ""),
            "Following hooks are blocking delete: BeforeClusterDelete"
        );
    }
}
