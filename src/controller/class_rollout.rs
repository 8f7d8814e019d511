//! The class rollout controller: for each ClusterClassRollout, keeps a ClusterClassRevision of
//! the class as it is now, takes the rollout's next step ([`crate::rollout::step`]) from the
//! Clusters' health, writes the status (which is where each Cluster's revision lives), publishes
//! the step's events, wakes the topology controller for the Clusters it moved, and deletes the
//! revisions no Cluster runs any more. Idle when `rollout.capi-topology.io` is not served.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::ApiResource;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{watcher, Controller};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::class_rollout_facts::{
    cluster_facts, ensure_revision, remove_unused_revisions, Context, RolloutError,
};
use super::revisions::Revisions;
use super::shared::Shared;
use crate::api::class_rollout::{ClusterClassRollout, ClusterClassRolloutSpec, ClusterClassRolloutStatus};
use crate::api::namespace_and_name;
use crate::decode::decode_value;
use crate::metrics_rollout::{ClassLabels, RolloutState};
use crate::rollout::pin::{policies_of, Pins};
use crate::rollout::step::{step, Inputs, RolloutEvent, Step};
use crate::store::object_value;

/// How often a running rollout looks at its Clusters' health again.
const RUNNING_POLL: Duration = Duration::from_secs(5);
/// How often a settled rollout looks at its class again (class changes also wake it at once).
const SETTLED_POLL: Duration = Duration::from_secs(30);

/// The class rollout controller, until `stop`: reconciles a ClusterClassRollout when it
/// changes, when its class changes, and every few seconds while it runs.
pub fn run(shared: &Shared, stop: CancellationToken) -> impl Future<Output = ()> + use<> {
    let resource = ApiResource::erase::<ClusterClassRollout>(&());
    let enabled = shared.revisions.enabled();
    let ctx = Arc::new(Context {
        cache: shared.cache.clone(),
        client: shared.client.clone(),
        resource: resource.clone(),
        recorder: shared.recorder(),
        revisions: Arc::clone(&shared.revisions),
        scope: shared.options.scope.clone(),
        metrics: shared.options.metrics.clone(),
    });
    let classes = shared.classes.clone();
    async move {
        if !enabled {
            stop.cancelled().await;
            return;
        }
        let controller = Controller::new_with(
            Api::<DynamicObject>::all_with(ctx.client.clone(), &resource),
            watcher::Config::default().any_semantic(),
            resource.clone(),
        );
        let policies = controller.store();
        controller
            .watches_with(
                Api::<DynamicObject>::all_with(ctx.client.clone(), &classes),
                classes.clone(),
                watcher::Config::default().any_semantic(),
                move |class| policies_naming(&policies, &class),
            )
            .graceful_shutdown_on(stop.cancelled_owned())
            .run(reconcile_rollout, on_error, ctx)
            .for_each(|result| async move {
                if let Err(err) = result {
                    tracing::debug!(error = %err, "class rollout controller");
                }
            })
            .await;
    }
}

/// The rollouts of `policies` naming the ClusterClass `class`.
fn policies_naming(policies: &Store<DynamicObject>, class: &DynamicObject) -> Vec<ObjectRef<DynamicObject>> {
    let (namespace, name) = (
        class.metadata.namespace.as_deref(),
        class.metadata.name.as_deref(),
    );
    policies
        .state()
        .iter()
        .filter(|p| p.metadata.namespace.as_deref() == namespace)
        .filter(|p| p.data.pointer("/spec/classRef/name").and_then(Value::as_str) == name)
        .map(|p| ObjectRef::from_obj_with(p.as_ref(), ApiResource::erase::<ClusterClassRollout>(&())))
        .collect()
}

/// Reconciles one ClusterClassRollout.
pub async fn reconcile_rollout(
    policy: Arc<DynamicObject>,
    ctx: Arc<Context>,
) -> Result<Action, RolloutError> {
    if !ctx.scope.admits(&policy.metadata) || policy.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let object = object_value(&policy, &ctx.resource);
    let namespace = policy.metadata.namespace.clone().unwrap_or_default();
    let spec: ClusterClassRolloutSpec = match decode_value(object["spec"].clone()) {
        Ok(spec) => spec,
        Err(reason) => {
            tracing::warn!(%reason, "ClusterClassRollout does not decode; not reconciled");
            return Ok(Action::await_change());
        }
    };
    let class = spec.class_ref.name.clone();
    if !is_oldest(&ctx, &policy, &object, (&namespace, &class)).await {
        return Ok(Action::requeue(SETTLED_POLL));
    }
    let status: Option<ClusterClassRolloutStatus> =
        object.get("status").and_then(|s| decode_value(s.clone()).ok());
    let live = ensure_revision(&ctx, &object, &namespace, &class).await?;
    let clusters = cluster_facts(&ctx, status.as_ref(), &namespace, &class);
    let inputs = Inputs {
        spec: &spec,
        generation: policy.metadata.generation,
        status: status.as_ref(),
        live_revision: live.as_deref(),
        clusters: &clusters,
        now: jiff::Timestamp::now(),
    };
    let next = match step(&inputs) {
        Ok(next) => next,
        Err(invalid) => {
            ctx.recorder
                .reconciled(
                    (&policy, &ctx.resource),
                    EventType::Warning,
                    "InvalidPolicy",
                    &invalid.problem,
                )
                .await;
            if status.as_ref() != Some(&*invalid.status) {
                write_status(&ctx, &object, &invalid.status).await?;
            }
            return Ok(Action::requeue(SETTLED_POLL));
        }
    };
    if status.as_ref() != Some(&next.status) {
        write_status(&ctx, &object, &next.status).await?;
    }
    publish(&ctx, &policy, &next.events).await;
    record_metrics(&ctx, &namespace, &class, &next);
    wake_moved(&ctx.revisions, status.as_ref(), &next.status);
    remove_unused_revisions(&ctx, &object, (&namespace, &class), &next.status, live.as_deref()).await?;
    Ok(Action::requeue(if next.status.wave.is_some() {
        RUNNING_POLL
    } else {
        SETTLED_POLL
    }))
}

/// Whether `policy` is the oldest ClusterClassRollout of its class, the one that steers it; a
/// younger one is ignored, with a warning event saying so.
async fn is_oldest(
    ctx: &Context,
    policy: &DynamicObject,
    object: &Value,
    (namespace, class): (&str, &str),
) -> bool {
    let oldest = policies_of(&ctx.cache, namespace, class).into_iter().next();
    let ours = oldest.is_none_or(|p| p.pointer("/metadata/uid") == object.pointer("/metadata/uid"));
    if !ours {
        let note =
            format!("ClusterClass {class} already has an older ClusterClassRollout; this one is ignored");
        ctx.recorder
            .reconciled(
                (policy, &ctx.resource),
                EventType::Warning,
                "DuplicatePolicy",
                &note,
            )
            .await;
    }
    ours
}

/// Records the step's events on the rollout.
async fn publish(ctx: &Context, policy: &DynamicObject, events: &[RolloutEvent]) {
    for event in events {
        let type_ = if event.warning {
            EventType::Warning
        } else {
            EventType::Normal
        };
        ctx.recorder
            .reconciled((policy, &ctx.resource), type_, event.reason, &event.message)
            .await;
    }
}

/// Replaces the rollout's status, only if the rollout is still at the resourceVersion read (a
/// step taken on an older copy fails with 409 Conflict and is taken again): two steps never
/// both start Clusters.
async fn write_status(
    ctx: &Context,
    object: &Value,
    status: &ClusterClassRolloutStatus,
) -> Result<(), RolloutError> {
    let mut written = object.clone();
    written["status"] = serde_json::to_value(status).map_err(|e| RolloutError::Encode(e.to_string()))?;
    let (namespace, name) = namespace_and_name(object);
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), namespace, &ctx.resource);
    let body: DynamicObject =
        serde_json::from_value(written).map_err(|e| RolloutError::Encode(e.to_string()))?;
    api.replace_status(name, &PostParams::default(), &body)
        .await
        .map_err(|source| RolloutError::Api {
            what: format!("write the status of ClusterClassRollout {namespace}/{name}"),
            source,
        })?;
    Ok(())
}

/// Counts the step's events and records where the rollout stands.
fn record_metrics(ctx: &Context, namespace: &str, class: &str, step: &Step) {
    let Some(metrics) = &ctx.metrics else {
        return;
    };
    let labels = ClassLabels {
        namespace: namespace.to_owned(),
        class: class.to_owned(),
    };
    for event in &step.events {
        metrics.rollouts().record_event(&labels, event.reason);
    }
    let status = &step.status;
    let state = RolloutState {
        phase: status.phase.as_deref().unwrap_or_default(),
        wave: status.wave.as_ref().map_or(-1, |w| i64::from(w.index)),
        updated: i64::from(status.updated_clusters),
        total: i64::from(status.total_clusters),
    };
    metrics.rollouts().record_state(&labels, state);
}

/// Wakes the topology controller for every Cluster whose revision the step changed.
fn wake_moved(
    revisions: &Revisions,
    before: Option<&ClusterClassRolloutStatus>,
    after: &ClusterClassRolloutStatus,
) {
    let previous = Pins::of(before);
    for entry in &after.clusters {
        if previous.revision(&entry.namespace, &entry.name) != Some(entry.revision.as_str()) {
            revisions.moved(&entry.namespace, &entry.name);
        }
    }
}

/// Requeue after a failed reconcile.
pub fn on_error(_policy: Arc<DynamicObject>, error: &RolloutError, _ctx: Arc<Context>) -> Action {
    tracing::info!(%error, "ClusterClassRollout not reconciled; retrying");
    Action::requeue(RUNNING_POLL)
}
