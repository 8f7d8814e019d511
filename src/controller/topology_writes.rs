//! What the topology controller's reconciles share, and how they write what they decided: the
//! context, the error of a failed API call, the Cluster's `TopologyReconciled` conditions and its
//! events. Used by the topology controller, its lifecycle hooks and its finalizer clean-up.

use std::sync::Arc;

use kube::api::DynamicObject;
use kube::core::ApiResource;
use kube::runtime::events::EventType;
use serde_json::Value;

use super::backoff::Backoff;
use super::cluster_turns::ClusterTurns;
use super::events::EventRecorder;
use super::revisions::Revisions;
use super::sync::Syncer;
use super::topology_status::status_patch;
use crate::api::describe;
use crate::clock::now_rfc3339;
use crate::metrics::Metrics;
use crate::runtime::RuntimeExtensions;
use crate::store::{owned, ObjectSource, WatchCache};
use crate::topology::reconcile::{topology_condition, Blocked, Reconciliation};

/// The group of the Cluster kind.
pub(super) const CAPI_GROUP: &str = "cluster.x-k8s.io";

/// What every reconcile shares.
pub struct Context {
    /// The objects, from the watch caches the webhooks also read.
    pub cache: WatchCache,
    /// Writes.
    pub syncer: Syncer,
    /// Events on the Cluster.
    pub recorder: EventRecorder,
    /// The Cluster resource.
    pub resource: ApiResource,
    /// Consecutive failed reconciles per Cluster (`namespace/name`), for the retry backoff.
    pub failures: Backoff,
    /// The Runtime Extensions the classes' external patches call, shared by every reconcile.
    pub extensions: Arc<RuntimeExtensions>,
    /// The revision each Cluster runs under a ClusterClassRollout.
    pub revisions: Arc<Revisions>,
    /// Turns on each Cluster shared with the Cluster infrastructure controller.
    pub cluster_turns: ClusterTurns,
    /// Where reconciles are counted.
    pub metrics: Option<Metrics>,
}

/// Why a reconcile failed (an API call); the Cluster is retried.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct ReconcileError {
    what: String,
    source: kube::Error,
}

/// Writes the `TopologyReconciled` condition when its meaning changed.
pub(super) async fn report(
    ctx: &Context,
    cluster: &DynamicObject,
    object: &Value,
    decided: Result<&Reconciliation, &Blocked>,
) -> Result<(), ReconcileError> {
    let verdict = topology_condition(&decided, &now_rfc3339());
    if write_condition(ctx, object, &verdict).await? {
        if let Err(blocked) = decided {
            event_typed(ctx, cluster, EventType::Warning, blocked.reason, &blocked.message).await;
        }
    }
    Ok(())
}

/// Writes the `TopologyReconciled` conditions for the engine's `verdict` when their meaning
/// changed; whether it wrote.
pub(super) async fn write_condition(
    ctx: &Context,
    object: &Value,
    verdict: &Value,
) -> Result<bool, ReconcileError> {
    // The newest copy: this reconcile may have written the Cluster (its references), and the
    // write below is refused if it is not based on the newest.
    let latest = cluster_in_cache(ctx, object).unwrap_or_else(|| object.clone());
    let object = &latest;
    let Some(patch) = status_patch(object, verdict, &now_rfc3339()) else {
        return Ok(false);
    };
    let written = ctx
        .syncer
        .patch_status(object, &patch)
        .await
        .map_err(|source| failed("write the status of", object, source))?;
    ctx.cache.observe(written);
    Ok(true)
}

/// The newest copy of the Cluster `object` in the watch cache.
pub(super) fn cluster_in_cache(ctx: &Context, object: &Value) -> Option<Value> {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    ctx.cache
        .get(
            CAPI_GROUP,
            "Cluster",
            text("/metadata/namespace"),
            text("/metadata/name"),
        )
        .map(owned)
}

/// Records a Normal event on the Cluster.
pub(super) async fn event(ctx: &Context, cluster: &DynamicObject, reason: &str, note: &str) {
    event_typed(ctx, cluster, EventType::Normal, reason, note).await;
}

/// Records an event on the Cluster; a failure to record is only logged.
pub(super) async fn event_typed(
    ctx: &Context,
    cluster: &DynamicObject,
    type_: EventType,
    reason: &str,
    note: &str,
) {
    ctx.recorder
        .reconciled((cluster, &ctx.resource), type_, reason, note)
        .await;
}

/// The error of an API call about `object` that failed.
pub(super) fn failed(what: &str, object: &Value, source: kube::Error) -> ReconcileError {
    ReconcileError {
        what: format!("cannot {what} {}", describe(object)),
        source,
    }
}
