//! The Cluster's side of the provider contract (v1beta2, and the deprecated v1beta1 one), for
//! every Cluster, topology-managed or not: resolves the `ContractVersionedObjectReference`s
//! `spec.infrastructureRef` and `spec.controlPlaneRef` (the version from the CRD's contract label),
//! owns and labels the objects they name, takes their initialization, endpoint, failure domains
//! and conditions into the Cluster (decided by
//! [`contract::cluster_status`](crate::contract::cluster_status)), and deletes a Cluster's
//! objects in order behind its finalizer ([`contract::deletion`](crate::contract::deletion)).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use kube::api::DynamicObject;
use kube::core::ApiResource;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::Controller;
use serde_json::{json, Value};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::backoff::Backoff;
use super::cluster_turns::ClusterTurns;
use super::contracts::Contracts;
use super::shared::Shared;
use super::shared_clusters::Subscription;
use super::sync::{Outcome, Syncer};
use super::ControllerKind;
use crate::api::describe;
use crate::api::labels::PAUSED_ANNOTATION;
use crate::api::ContractVersionedObjectReference;
use crate::clock::now_rfc3339;
use crate::contract::cluster_status::{reconcile_cluster_status, ClusterUpdate, Observed};
use crate::contract::deletion::CLUSTER_FINALIZER;
use crate::contract::external::Referenced;
use crate::contract::versions::CONTRACT;
use crate::metrics::Metrics;
use crate::store::{group_of, owned, Changed, ObjectSource, WatchCache};

mod deletion;

/// The field manager of the owner references and labels this controller sets.
pub const FIELD_MANAGER: &str = "capi-topology-cluster";

const CAPI_GROUP: &str = "cluster.x-k8s.io";
/// How soon a Cluster whose referenced kind is not served is looked at again (no watch can tell).
const UNSERVED_RETRY: Duration = Duration::from_secs(60);
/// Periodic resync of a settled Cluster.
const RESYNC: Duration = Duration::from_secs(600);
/// The first retry after a failed reconcile (doubling per further failure).
pub const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest wait between retries of a failing Cluster.
pub const MAX_RETRY: Duration = Duration::from_secs(300);

/// What every reconcile shares.
pub struct Context {
    /// The objects, from the shared watch caches (referenced kinds are watched once read).
    pub cache: WatchCache,
    /// Writes.
    pub syncer: Syncer,
    /// Events on the Cluster.
    pub recorder: super::events::EventRecorder,
    /// The Cluster resource.
    pub resource: ApiResource,
    /// Consecutive failed reconciles per Cluster, for the retry backoff.
    pub failures: Backoff,
    /// The contract and version of the referenced provider kinds.
    pub contracts: Contracts,
    /// Whether a Cluster with a managed topology waits for its BeforeClusterDelete hook (the
    /// ok-to-delete annotation the topology controller sets) before its objects are deleted:
    /// only when the topology controller runs.
    pub waits_for_delete_hook: bool,
    /// Turns on each Cluster shared with the topology controller.
    pub cluster_turns: ClusterTurns,
    /// Where reconciles are counted.
    pub metrics: Option<Metrics>,
}

/// Why a reconcile failed (an API call); the Cluster is retried with backoff.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct ReconcileError {
    what: String,
    source: kube::Error,
}

fn failed(what: impl Into<String>) -> impl FnOnce(kube::Error) -> ReconcileError {
    let what = what.into();
    move |source| ReconcileError { what, source }
}

/// The Cluster infrastructure controller over the Clusters of `subscription`, until `stop`.
pub fn run(shared: &Shared, subscription: Subscription, stop: CancellationToken) -> impl Future<Output = ()> {
    let ctx = Arc::new(Context {
        cache: shared.cache.clone(),
        syncer: Syncer::new(shared.client.clone()),
        recorder: shared.recorder(),
        resource: shared.clusters.clone(),
        failures: Backoff::new(FIRST_RETRY, MAX_RETRY),
        contracts: Contracts::new(shared.client.clone(), shared.cache.clone()),
        waits_for_delete_hook: shared.options.controllers.contains(&ControllerKind::Topology),
        cluster_turns: shared.cluster_turns.clone(),
        metrics: shared.options.metrics.clone(),
    });
    Controller::for_stream_with(
        Subscription::triggers(subscription.changes),
        subscription.store,
        shared.clusters.clone(),
    )
    .reconcile_on(triggers(shared.cache.clone(), shared.clusters.clone()))
    .graceful_shutdown_on(stop.cancelled_owned())
    .run(reconcile, on_error, ctx)
    .for_each(|result| async move {
        if let Err(err) = result {
            tracing::debug!(error = %err, "Cluster infrastructure controller");
        }
    })
}

/// Reconciles one Cluster.
pub async fn reconcile(cluster: Arc<DynamicObject>, ctx: Arc<Context>) -> Result<Action, ReconcileError> {
    let (namespace, name) = (
        cluster.metadata.namespace.clone().unwrap_or_default(),
        cluster.metadata.name.clone().unwrap_or_default(),
    );
    // Taken before the Cluster is read, so the copy read is the newest this replica knows.
    let _turn = ctx.cluster_turns.take(&namespace, &name).await;
    if let Some(metrics) = &ctx.metrics {
        metrics.record_reconcile("cluster-infrastructure");
    }
    // The shared Cluster watch put the Cluster in the cache before it asked for this reconcile.
    let Some(object) = ctx.cache.get(CAPI_GROUP, "Cluster", &namespace, &name) else {
        return Ok(Action::await_change());
    };
    let object = owned(object);
    let paused = object.pointer("/spec/paused") == Some(&Value::Bool(true))
        || object
            .pointer("/metadata/annotations")
            .is_some_and(|a| a.get(PAUSED_ANNOTATION).is_some());
    if paused {
        return Ok(Action::await_change());
    }
    let deleting = object.pointer("/metadata/deletionTimestamp").is_some();
    if !deleting && !has_finalizer(&object) {
        let patch = json!({"metadata": {"finalizers": with_finalizer(&object)}});
        let written = ctx
            .syncer
            .patch_guarded(&object, &patch)
            .await
            .map_err(failed(format!("add the finalizer to Cluster {namespace}/{name}")))?;
        ctx.cache.observe(written);
        return Ok(Action::requeue(Duration::ZERO));
    }
    if deleting && !has_finalizer(&object) {
        return Ok(Action::await_change());
    }

    let (infrastructure, infrastructure_contract) = resolve(&ctx, &object, "infrastructureRef").await;
    let (control_plane, control_plane_contract) = resolve(&ctx, &object, "controlPlaneRef").await;
    let now = now_rfc3339();
    let update = reconcile_cluster_status(&Observed {
        cluster: &object,
        infrastructure: infrastructure.as_ref().map(Resolved::as_referenced),
        infrastructure_contract,
        control_plane: control_plane.as_ref().map(Resolved::as_referenced),
        control_plane_contract,
        now: &now,
    });
    carry_out(&ctx, &cluster, &object, &update).await?;
    let unserved = [&infrastructure, &control_plane]
        .iter()
        .any(|r| matches!(r, Some(Resolved::Unserved(_))));

    let next = if deleting {
        deletion::delete_in_order(&ctx, &cluster, &infrastructure, &control_plane, &now).await?
    } else if unserved {
        Action::requeue(UNSERVED_RETRY)
    } else {
        Action::requeue(RESYNC)
    };
    ctx.failures.succeeded(&format!("{namespace}/{name}"));
    Ok(next)
}

/// Requeue after a failed reconcile, backing off exponentially per Cluster.
pub fn on_error(cluster: Arc<DynamicObject>, error: &ReconcileError, ctx: Arc<Context>) -> Action {
    let key = format!(
        "{}/{}",
        cluster.metadata.namespace.as_deref().unwrap_or_default(),
        cluster.metadata.name.as_deref().unwrap_or_default()
    );
    let (failures, delay) = ctx.failures.failed(&key);
    tracing::warn!(cluster = %key, error = %error, failures, retry_in = ?delay, "Cluster infrastructure reconcile failed");
    Action::requeue(delay)
}

/// Reconcile requests for the Clusters a change concerns: objects labelled with a Cluster's
/// name, and objects a Cluster's references name (before they carry the label, or while they
/// are missing).
pub fn triggers(
    cache: WatchCache,
    resource: ApiResource,
) -> impl Stream<Item = ObjectRef<DynamicObject>> + Send {
    let changes = cache.changes();
    futures::stream::unfold(
        (changes, cache, resource),
        |(mut changes, cache, resource)| async move {
            loop {
                match changes.recv().await {
                    Ok(change) => {
                        let clusters = clusters_concerned(&cache, &change);
                        if clusters.is_empty() {
                            continue;
                        }
                        let refs: Vec<ObjectRef<DynamicObject>> = clusters
                            .into_iter()
                            .map(|name| {
                                ObjectRef::new_with(&name, resource.clone()).within(&change.namespace)
                            })
                            .collect();
                        return Some((futures::stream::iter(refs), (changes, cache, resource)));
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(
                            missed,
                            "Cluster infrastructure controller missed changes; the resync catches up"
                        );
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        },
    )
    .flatten()
}

fn clusters_concerned(cache: &WatchCache, change: &Changed) -> Vec<String> {
    if change.group == CAPI_GROUP && change.kind == "Cluster" {
        return Vec::new();
    }
    // A labelled object is its Cluster's; only an object not labelled yet (an InfraCluster
    // before adoption, or one referenced while missing) needs the namespace's Clusters scanned.
    if let Some(name) = &change.cluster_name {
        return vec![name.clone()];
    }
    let refers = |reference: &ContractVersionedObjectReference| {
        reference.kind == change.kind && reference.name == change.name && reference.api_group == change.group
    };
    let mut names: Vec<String> = Vec::new();
    for cluster in cache.clusters_in(&change.namespace) {
        let spec = &cluster.spec;
        let name = cluster.metadata.name.as_deref().unwrap_or_default();
        if (refers(&spec.infrastructure_ref) || refers(&spec.control_plane_ref))
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_owned());
        }
    }
    names
}

/// What a reference resolved to, owned.
enum Resolved {
    Found(Value),
    Missing(String),
    Unserved(String),
}

impl Resolved {
    fn as_referenced(&self) -> Referenced<'_> {
        match self {
            Self::Found(object) => Referenced::Found(object),
            Self::Missing(why) | Self::Unserved(why) => Referenced::Missing(why),
        }
    }
}

/// The object `spec.<key>` names (a `ContractVersionedObjectReference`: apiGroup, kind and
/// name, in the Cluster's namespace), read through the cache (which then watches its kind at the
/// version of the contract), with the contract its CRD implements (`v1beta2` when unknown).
async fn resolve(ctx: &Context, cluster: &Value, key: &str) -> (Option<Resolved>, &'static str) {
    let Some(reference) = cluster.pointer(&format!("/spec/{key}")).filter(|r| !r.is_null()) else {
        return (None, CONTRACT);
    };
    let text = |field: &str| reference.get(field).and_then(Value::as_str).unwrap_or_default();
    let (group, kind, name) = (text("apiGroup"), text("kind"), text("name"));
    if kind.is_empty() || name.is_empty() {
        return (None, CONTRACT);
    }
    let namespace = cluster
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let contract = match ctx.contracts.of(group, kind).await {
        Ok(found) => found,
        Err(why) => return (Some(Resolved::Unserved(why)), CONTRACT),
    };
    if let Some(object) = ctx.cache.get(group, kind, namespace, name) {
        return (Some(Resolved::Found(owned(object))), contract.contract);
    }
    if !ctx.syncer.serves(&contract.api_version, kind).await {
        return (
            Some(Resolved::Unserved(format!(
                "the API server does not serve {kind} ({}): is the provider's CRD installed?",
                contract.api_version
            ))),
            contract.contract,
        );
    }
    (
        Some(Resolved::Missing(format!("{kind} does not exist"))),
        contract.contract,
    )
}

async fn carry_out(
    ctx: &Context,
    cluster: &DynamicObject,
    object: &Value,
    update: &ClusterUpdate,
) -> Result<(), ReconcileError> {
    for body in &update.adopt {
        let current = current_of(ctx, body);
        let outcome = ctx
            .syncer
            .apply_as(FIELD_MANAGER, body, &current)
            .await
            .map_err(failed(format!("set the owner of {}", describe(body))))?;
        if let Outcome::Applied(written) = outcome {
            ctx.cache.observe(written);
        }
    }
    let mut latest = object.clone();
    if let Some(spec) = &update.spec {
        latest = ctx
            .syncer
            .patch_guarded(&latest, &json!({ "spec": spec }))
            .await
            .map_err(failed(format!(
                "set the control plane endpoint of {}",
                describe(object)
            )))?;
        ctx.cache.observe(latest.clone());
    }
    if let Some(status) = &update.status {
        let written = ctx
            .syncer
            .patch_status(&latest, status)
            .await
            .map_err(failed(format!("write the status of {}", describe(object))))?;
        ctx.cache.observe(written);
    }
    for event in &update.events {
        let type_ = if event.warning {
            EventType::Warning
        } else {
            EventType::Normal
        };
        publish(ctx, cluster, type_, &event.reason, &event.message).await;
    }
    Ok(())
}

/// The object an adoption body is about, as cached (an empty object when not cached).
fn current_of(ctx: &Context, body: &Value) -> Value {
    let text = |pointer: &str| body.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
    ctx.cache
        .get(
            group_of(text("/apiVersion")),
            text("/kind"),
            text("/metadata/namespace"),
            text("/metadata/name"),
        )
        .map(owned)
        .unwrap_or_else(|| json!({}))
}

fn has_finalizer(object: &Value) -> bool {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().any(|f| f == CLUSTER_FINALIZER))
}

fn with_finalizer(object: &Value) -> Vec<Value> {
    let mut list: Vec<Value> = object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.push(json!(CLUSTER_FINALIZER));
    list
}

async fn publish(ctx: &Context, cluster: &DynamicObject, type_: EventType, reason: &str, note: &str) {
    ctx.recorder
        .reconciled((cluster, &ctx.resource), type_, reason, note)
        .await;
}
