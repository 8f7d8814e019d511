//! Deleting a Cluster's objects in order behind its finalizer, one step per reconcile: its
//! workers, then its control plane, then its infrastructure (what
//! [`contract::deletion`](crate::contract::deletion) decides), its `Deleting` condition saying
//! what it waits for; the finalizer goes when nothing is left.

use std::sync::Arc;
use std::time::Duration;

use kube::api::DynamicObject;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use serde_json::{json, Value};

use super::{failed, publish, Context, ReconcileError, Resolved, CAPI_GROUP};
use crate::api::conditions::{meta_condition, set_condition};
use crate::api::describe;
use crate::contract::deletion::{held_by_delete_hook, next_deletion_step, DeletionStep, CLUSTER_FINALIZER};
use crate::store::ObjectSource;

/// The kinds whose objects labelled with a Cluster's name hold its deletion.
const WORKER_KINDS: [&str; 4] = ["MachineDeployment", "MachinePool", "MachineSet", "Machine"];
/// How soon a Cluster waiting for its objects' deletion is looked at again (their watch events
/// usually come first).
const DELETION_POLL: Duration = Duration::from_secs(10);

/// One step of deleting the Cluster's objects in order; the finalizer goes when none is left.
pub(super) async fn delete_in_order(
    ctx: &Context,
    cluster: &DynamicObject,
    infrastructure: &Option<Resolved>,
    control_plane: &Option<Resolved>,
    now: &str,
) -> Result<Action, ReconcileError> {
    let namespace = cluster.metadata.namespace.clone().unwrap_or_default();
    let name = cluster.metadata.name.clone().unwrap_or_default();
    let Some(object) = ctx.cache.get(CAPI_GROUP, "Cluster", &namespace, &name) else {
        return Ok(Action::await_change());
    };
    let DeletionStep { delete, waiting } =
        deletion_step(ctx, (&namespace, &name), &object, infrastructure, control_plane);
    tracing::info!(
        cluster = %format!("{namespace}/{name}"),
        deleting = ?delete.iter().map(describe).collect::<Vec<_>>(),
        waiting = ?waiting.as_ref().map(|w| w.0),
        "deleting the Cluster's objects in order"
    );
    for doomed in &delete {
        ctx.syncer
            .delete(doomed)
            .await
            .map_err(failed(format!("delete {}", describe(doomed))))?;
        publish(
            ctx,
            cluster,
            EventType::Normal,
            "Deleting",
            &format!("Deleting {}", describe(doomed)),
        )
        .await;
    }
    let latest = report_deleting(ctx, &object, &waiting, now).await?;
    if waiting.is_some() {
        return Ok(Action::requeue(DELETION_POLL));
    }
    remove_finalizer(ctx, &latest, &object).await?;
    publish(
        ctx,
        cluster,
        EventType::Normal,
        "Deleted",
        &format!("Cluster {name} has been deleted"),
    )
    .await;
    Ok(Action::await_change())
}

/// What to delete next and what the deletion waits for: the BeforeClusterDelete hook's hold
/// when it applies, else the Cluster's workers, control plane, then infrastructure, in order.
fn deletion_step(
    ctx: &Context,
    (namespace, name): (&str, &str),
    object: &Value,
    infrastructure: &Option<Resolved>,
    control_plane: &Option<Resolved>,
) -> DeletionStep {
    let workers: Vec<Arc<Value>> = WORKER_KINDS
        .iter()
        .flat_map(|kind| ctx.cache.list_of_cluster(CAPI_GROUP, kind, namespace, name))
        .collect();
    let worker_refs: Vec<&Value> = workers.iter().map(|o| o.as_ref()).collect();
    let held = ctx
        .waits_for_delete_hook
        .then(|| held_by_delete_hook(object))
        .flatten();
    held.unwrap_or_else(|| {
        next_deletion_step(
            object,
            &worker_refs,
            control_plane.as_ref().map(Resolved::as_referenced),
            infrastructure.as_ref().map(Resolved::as_referenced),
        )
    })
}

/// Sets the Cluster's `Deleting` condition to what the deletion waits for (or its completion);
/// returns the Cluster as last written.
async fn report_deleting(
    ctx: &Context,
    object: &Value,
    waiting: &Option<(&'static str, String)>,
    now: &str,
) -> Result<Value, ReconcileError> {
    let (reason, message) = match waiting {
        Some((reason, message)) => (*reason, message.clone()),
        None => ("DeletionCompleted", "Deletion completed".to_owned()),
    };
    let mut condition = meta_condition("Deleting", "True", reason, &message);
    condition["observedGeneration"] = object
        .pointer("/metadata/generation")
        .cloned()
        .unwrap_or(Value::Null);
    let mut latest = object.clone();
    if let Some(conditions) = set_condition(object.pointer("/status/conditions"), condition, now) {
        latest = ctx
            .syncer
            .patch_status(object, &json!({"conditions": conditions}))
            .await
            .map_err(failed(format!("write the status of {}", describe(object))))?;
        ctx.cache.observe(latest.clone());
    }
    Ok(latest)
}

/// Removes the Cluster's finalizer from `latest`, guarded by its resourceVersion: the last step
/// of its deletion.
async fn remove_finalizer(ctx: &Context, latest: &Value, object: &Value) -> Result<(), ReconcileError> {
    let finalizers: Vec<Value> = latest
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|f| *f != CLUSTER_FINALIZER)
        .cloned()
        .collect();
    ctx.syncer
        .patch_guarded(latest, &json!({"metadata": {"finalizers": finalizers}}))
        .await
        .map_err(failed(format!("remove the finalizer of {}", describe(object))))?;
    Ok(())
}
