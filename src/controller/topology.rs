//! The topology controller: for each (v1beta2) Cluster with a managed topology, carries out what
//! [`topology::reconcile`](crate::topology::reconcile) decides and reports it in the Cluster's
//! `TopologyReconciled` conditions (metav1, and v1beta1 under `status.deprecated`; see
//! [`topology_status`](super::topology_status)) and in events.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::core::ApiResource;
use kube::runtime::controller::{Action, Config as ControllerConfig};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{watcher, Controller};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::backoff::Backoff;
use super::lifecycle;
use super::shared::Shared;
use super::shared_clusters::Subscription;
use super::sync::{Outcome, Syncer};
use super::topology_finalizers;
use super::topology_status::paused;
use super::topology_writes::{event, failed, report, write_condition, Context, ReconcileError, CAPI_GROUP};
use crate::api::describe;
use crate::api::labels::{CLUSTER_NAME_LABEL, PAUSED_ANNOTATION};
use crate::api::Cluster;
use crate::decode::decode_ref;
use crate::store::{object_value, owned, ObjectSource, WatchCache};
use crate::topology::reconcile::{reconcile, Blocked, Reconciliation, EXTERNAL_PATCH_FAILED};

/// How soon a Cluster is looked at again while an upgrade waits for the control plane.
const UPGRADE_POLL: Duration = Duration::from_secs(10);
/// How soon a blocked Cluster (class or template missing, patch failing) is retried.
const BLOCKED_RETRY: Duration = Duration::from_secs(30);
/// Periodic resync of a settled Cluster.
const RESYNC: Duration = Duration::from_secs(600);

/// The first retry after a failed reconcile; each further failure doubles it, up to [`MAX_RETRY`].
pub const FIRST_RETRY: Duration = Duration::from_secs(2);
/// The longest wait between retries of a failing Cluster.
pub const MAX_RETRY: Duration = Duration::from_secs(300);

/// Clusters reconciled at once. A ClusterClass change queues every Cluster of the class at once:
/// unbounded, 2,000 reconciles each held their blueprint, desired and current objects in memory
/// together (controller RSS grew by ~0.4 MiB per Cluster during the change). Cluster API's
/// default `--cluster-topology-concurrency` is 10; each reconcile mostly waits on the API
/// server, so more run at once here.
const CONCURRENCY: u16 = 32;

/// The topology controller over the Clusters of `subscription`, until `stop`: reconciles a
/// Cluster when it changes, when its class changes, when one of its MachineDeployments changes,
/// and when Cluster API's topology finalizers hold a MachineSet or MachineDeployment of it.
pub fn run(shared: &Shared, subscription: Subscription, stop: CancellationToken) -> impl Future<Output = ()> {
    let ctx = Arc::new(Context {
        cache: shared.cache.clone(),
        syncer: Syncer::new(shared.client.clone()),
        recorder: shared.recorder(),
        resource: shared.clusters.clone(),
        failures: Backoff::new(FIRST_RETRY, MAX_RETRY),
        extensions: Arc::clone(&shared.extensions),
        revisions: Arc::clone(&shared.revisions),
        cluster_turns: shared.cluster_turns.clone(),
        metrics: shared.options.metrics.clone(),
    });
    let (clusters, classes, machine_deployments) =
        (&shared.clusters, &shared.classes, &shared.machine_deployments);
    let config = || watcher::Config::default().any_semantic();
    Controller::for_stream_with(
        Subscription::triggers(subscription.changes),
        subscription.store,
        clusters.clone(),
    )
    // Cluster API's topology finalizers on MachineSets and MachineDeployments being deleted.
    .reconcile_on(topology_finalizers::triggers(&shared.cache, clusters.clone()))
    // Clusters a ClusterClassRollout has just moved to another revision.
    .reconcile_on(shared.revisions.moved_triggers(clusters.clone()))
    .watches_with(
        Api::all_with(shared.client.clone(), classes),
        classes.clone(),
        config(),
        users_of_class(shared.cache.clone(), classes.clone(), clusters.clone()),
    )
    .watches_with(
        Api::all_with(shared.client.clone(), machine_deployments),
        machine_deployments.clone(),
        config(),
        owner_of_machine_deployment(
            shared.cache.clone(),
            machine_deployments.clone(),
            clusters.clone(),
        ),
    )
    .with_config(ControllerConfig::default().concurrency(CONCURRENCY))
    .graceful_shutdown_on(stop.cancelled_owned())
    .run(reconcile_cluster, on_error, ctx)
    .for_each(|result| async move {
        if let Err(err) = result {
            tracing::debug!(error = %err, "topology controller");
        }
    })
}

/// Maps a changed ClusterClass to the Clusters using it (the cache sees the change first).
fn users_of_class(
    cache: WatchCache,
    class_resource: ApiResource,
    cluster_resource: ApiResource,
) -> impl Fn(DynamicObject) -> Vec<ObjectRef<DynamicObject>> {
    move |class: DynamicObject| {
        cache.observe(object_value(&class, &class_resource));
        let namespace = class.metadata.namespace.clone().unwrap_or_default();
        let name = class.metadata.name.clone().unwrap_or_default();
        cache
            .clusters_using_class(&namespace, &name)
            .iter()
            .filter_map(|cluster| {
                let name = cluster.metadata.name.clone()?;
                let namespace = cluster.metadata.namespace.clone()?;
                Some(ObjectRef::new_with(&name, cluster_resource.clone()).within(&namespace))
            })
            .collect()
    }
}

/// Maps a changed MachineDeployment to its Cluster (the cache sees the change first: the
/// reconcile this triggers must see this version, not an older cached one).
fn owner_of_machine_deployment(
    cache: WatchCache,
    md_resource: ApiResource,
    cluster_resource: ApiResource,
) -> impl Fn(DynamicObject) -> Option<ObjectRef<DynamicObject>> {
    move |md: DynamicObject| {
        cache.observe(object_value(&md, &md_resource));
        let cluster = md.metadata.labels.as_ref()?.get(CLUSTER_NAME_LABEL)?.clone();
        let namespace = md.metadata.namespace.clone()?;
        Some(ObjectRef::new_with(&cluster, cluster_resource.clone()).within(&namespace))
    }
}

/// Reconciles one Cluster.
pub async fn reconcile_cluster(
    cluster: Arc<DynamicObject>,
    ctx: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let (namespace, name) = (
        cluster.metadata.namespace.as_deref().unwrap_or_default(),
        cluster.metadata.name.as_deref().unwrap_or_default(),
    );
    // Taken before the Cluster is read, so the copy read is the newest this replica knows.
    let _turn = ctx.cluster_turns.take(namespace, name).await;
    if let Some(metrics) = &ctx.metrics {
        metrics.record_reconcile("topology");
    }
    let Some((object, typed)) = newest_copy(&ctx, namespace, name) else {
        return Ok(Action::await_change());
    };
    let paused_annotation = object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(PAUSED_ANNOTATION))
        .is_some();
    if typed.spec.managed_topology().is_none() {
        return Ok(Action::await_change());
    }
    // Honours pauses itself, as Cluster API's MachineSet and MachineDeployment topology
    // controllers do.
    super::topology_finalizers::clean_up(&ctx, &object).await?;
    if typed.spec.is_paused() || paused_annotation {
        let verdict = paused(typed.spec.is_paused(), paused_annotation);
        write_condition(&ctx, &object, &verdict).await?;
        return Ok(Action::await_change());
    }
    let key = cluster_key(&cluster);
    if cluster.metadata.deletion_timestamp.is_some() {
        // Owner references hand the topology's objects to the garbage collector, once the
        // BeforeClusterDelete hook lets the Cluster go.
        return lifecycle::reconcile_delete(&ctx, &cluster, &object, &key).await;
    }
    let marks = match lifecycle::before_reconcile(&ctx, &object, &typed).await {
        Ok(marks) => marks,
        Err(hold) => return lifecycle::held(&ctx, &cluster, &object, &key, &hold).await,
    };
    let (decided, revision) = decide(&ctx, &object, typed).await;
    persist_marks(&ctx, &object, marks, &decided).await?;
    let next = match &decided {
        Ok(work) => {
            if let Err(error) = carry_out(&ctx, &cluster, work).await {
                // The operator reads in the condition what the log says.
                let blocked = Blocked {
                    reason: "ApplyFailed",
                    message: error.to_string(),
                };
                report(&ctx, &cluster, &object, Err(&blocked)).await?;
                return Err(error);
            }
            ctx.revisions.record_applied(namespace, name, &revision);
            requeue_after_applied(work)
        }
        Err(blocked) if blocked.reason == EXTERNAL_PATCH_FAILED => {
            // An extension may answer again soon: retried sooner than a blocked class, backing
            // off while it keeps failing.
            let (failures, delay) = ctx.failures.failed(&key);
            tracing::info!(cluster = %key, message = %blocked.message, failures, retry_in = ?delay, "topology blocked by a Runtime Extension");
            report(&ctx, &cluster, &object, decided.as_ref()).await?;
            return Ok(Action::requeue(delay));
        }
        Err(blocked) => {
            tracing::info!(cluster = %name_of(&object), reason = blocked.reason, message = %blocked.message, "topology blocked");
            Action::requeue(BLOCKED_RETRY)
        }
    };
    report(&ctx, &cluster, &object, decided.as_ref()).await?;
    ctx.failures.succeeded(&key);
    Ok(next)
}

/// The newest copy known of the Cluster (the shared Cluster watch put it in the cache before it
/// asked for this reconcile), raw and typed; `None` when it is gone or does not decode.
fn newest_copy(ctx: &Context, namespace: &str, name: &str) -> Option<(Value, Cluster)> {
    let object = owned(ctx.cache.get(CAPI_GROUP, "Cluster", namespace, name)?);
    let typed = decode_ref::<Cluster>(&object).ok()?;
    Some((object, typed))
}

/// Persists the lifecycle hooks' marks: the marks the engine's upgrade hooks ask for join the
/// controller's own, in one patch, before any object is applied: a restart never loses an owed
/// After* call.
async fn persist_marks(
    ctx: &Arc<Context>,
    object: &Value,
    marks: lifecycle::Marks,
    decided: &Result<Reconciliation, Blocked>,
) -> Result<(), ReconcileError> {
    let (mut pending, mut done) = (marks.pending, marks.done);
    if let Ok(work) = decided {
        pending.extend_from_slice(&work.hooks.mark_pending);
        done.extend_from_slice(&work.hooks.mark_done);
    }
    lifecycle::persist(ctx, object, &pending, &done).await
}

/// When to look again at a Cluster whose topology was applied: soon while an upgrade waits on a
/// rollout, else at the resync; sooner when a holding lifecycle hook asks to be called again
/// once its retryAfterSeconds pass.
fn requeue_after_applied(work: &Reconciliation) -> Action {
    let poll = if work.upgrade.waits_on_rollout() {
        UPGRADE_POLL
    } else {
        RESYNC
    };
    let retry = work
        .requeue_after_seconds
        .map(|seconds| Duration::from_secs(u64::from(seconds)));
    Action::requeue(retry.map_or(poll, |retry| retry.min(poll)))
}

/// The engine's decision for the Cluster `object`, made on a blocking thread (external patches
/// call their extensions and wait for the answers), and the ClusterClassRevision it was computed
/// from (empty: the class itself).
async fn decide(
    ctx: &Arc<Context>,
    object: &Value,
    cluster: Cluster,
) -> (Result<Reconciliation, Blocked>, String) {
    // The revision the Cluster runs under its class's ClusterClassRollout, if any.
    let pinned = match ctx.revisions.pinned(&ctx.cache, &cluster) {
        Ok(pinned) => pinned,
        Err(blocked) => return (Err(blocked), String::new()),
    };
    let (ctx, object_copy) = (Arc::clone(ctx), object.clone());
    let revision = pinned.as_ref().map(|p| p.name.clone()).unwrap_or_default();
    let decided = tokio::task::spawn_blocking(move || {
        let (extensions, hooks) = (ctx.extensions.as_ref(), ctx.extensions.as_ref());
        match &pinned {
            Some(pinned) => reconcile(
                &object_copy,
                &cluster,
                &pinned.revision.over(&ctx.cache),
                extensions,
                hooks,
            ),
            None => reconcile(&object_copy, &cluster, &ctx.cache, extensions, hooks),
        }
    })
    .await;
    let decided = decided.unwrap_or_else(|error| {
        // A bug in the engine: this Cluster is reported blocked, the controller lives on.
        tracing::error!(cluster = %name_of(object), error = %error, "the topology engine failed");
        Err(Blocked {
            reason: "TopologyInvalid",
            message: "the topology engine failed on this Cluster; see the controller's log".to_owned(),
        })
    });
    (decided, revision)
}

/// Requeue after a failed reconcile, backing off exponentially while the Cluster keeps failing.
pub fn on_error(cluster: Arc<DynamicObject>, error: &ReconcileError, ctx: Arc<Context>) -> Action {
    let key = cluster_key(&cluster);
    let (failures, delay) = ctx.failures.failed(&key);
    tracing::warn!(cluster = %key, error = %error, failures, retry_in = ?delay, "topology reconcile failed");
    Action::requeue(delay)
}

fn cluster_key(cluster: &DynamicObject) -> String {
    format!(
        "{}/{}",
        cluster.metadata.namespace.as_deref().unwrap_or_default(),
        cluster.metadata.name.as_deref().unwrap_or_default()
    )
}

async fn carry_out(
    ctx: &Context,
    cluster: &DynamicObject,
    work: &Reconciliation,
) -> Result<(), ReconcileError> {
    for (desired, current) in &work.objects {
        let outcome = ctx
            .syncer
            .apply(desired, current.as_ref())
            .await
            .map_err(|source| failed("apply", desired, source))?;
        if let Outcome::Applied(written) = outcome {
            // Read-your-writes: the next reconcile compares against what was just written, even
            // before the watch delivers it.
            ctx.cache.observe(written);
            let reason = if current.is_some() {
                "TopologyUpdate"
            } else {
                "TopologyCreate"
            };
            event(
                ctx,
                cluster,
                reason,
                &format!("{} {}", verb(current.is_some()), describe(desired)),
            )
            .await;
        }
    }
    if let Some(refs) = &work.cluster_refs {
        let outcome = ctx
            .syncer
            .apply(refs, None)
            .await
            .map_err(|source| failed("set the references of", refs, source))?;
        if let Outcome::Applied(written) = outcome {
            ctx.cache.observe(written);
        }
    }
    for stale in &work.deletions {
        ctx.syncer
            .delete(stale)
            .await
            .map_err(|source| failed("delete", stale, source))?;
        event(
            ctx,
            cluster,
            "TopologyDelete",
            &format!("Deleted {}", describe(stale)),
        )
        .await;
    }
    Ok(())
}

fn verb(exists: bool) -> &'static str {
    if exists {
        "Updated"
    } else {
        "Created"
    }
}

fn name_of(object: &Value) -> String {
    format!(
        "{}/{}",
        object["metadata"]["namespace"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    )
}
