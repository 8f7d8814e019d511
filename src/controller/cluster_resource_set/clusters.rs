//! Reconciling one Cluster: once its control plane is initialized, the resources of every set
//! selecting it that [`pending_work`] says are due are written into its workload cluster, and
//! the outcome is recorded in its ClusterResourceSetBinding and in the sets' conditions.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, PostParams};
use kube::runtime::controller::Action;
use serde_json::Value;

use super::ledger::SetKey;
use super::workload::{Workload, WorkloadError};
use super::{dynamic, set_key, status, Context, ReconcileError, BINDING_KIND, CAPI_GROUP};
use crate::addons::binding::{prepare_binding, record_outcome, set_entry};
use crate::addons::condition::{reasons, Problem};
use crate::addons::matching::{control_plane_initialized, sets_selecting};
use crate::addons::work::{pending_work, ResourceWork};
use crate::addons::Resource;
use crate::api::labels::PAUSED_ANNOTATION;
use crate::api::{Cluster, ClusterResourceSet, ClusterResourceSetBinding, ResourceRef, ADDONS_GROUP};
use crate::clock::now_rfc3339;
use crate::decode::{decode_ref, decode_value};
use crate::store::{object_value, ObjectSource};

/// Periodic look at a settled Cluster (reads from the caches only, writes nothing).
const RESYNC: Duration = Duration::from_secs(600);
/// The first retry after a failed reconcile (an API call to the management cluster).
const ERROR_RETRY: Duration = Duration::from_secs(2);
/// After losing a write race on a binding.
const CONFLICT_RETRY: Duration = Duration::from_millis(100);

/// Reconciles one Cluster.
pub async fn reconcile_cluster(
    cluster: Arc<DynamicObject>,
    ctx: Arc<Context>,
) -> Result<Action, ReconcileError> {
    if cluster.metadata.deletion_timestamp.is_some() {
        // Its binding goes with it (see the binding controller).
        return Ok(Action::await_change());
    }
    let namespace = cluster.metadata.namespace.clone().unwrap_or_default();
    let name = cluster.metadata.name.clone().unwrap_or_default();
    // The shared Cluster watch put the Cluster in the cache before it asked for this reconcile.
    let Some(object) = ctx.cache.get(CAPI_GROUP, "Cluster", &namespace, &name) else {
        return Ok(Action::await_change());
    };
    let Ok(typed) = decode_ref::<Cluster>(&object) else {
        return Ok(Action::await_change());
    };
    let paused = typed.spec.is_paused()
        || cluster
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(PAUSED_ANNOTATION));
    if paused || !control_plane_initialized(&typed) {
        return Ok(Action::await_change());
    }
    let sets = unpaused_sets(&ctx, &namespace);
    let selecting = sets_selecting(&typed, &sets);
    let keys: Vec<SetKey> = selecting.iter().map(|set| set_key(set)).collect();
    let released = ctx
        .ledger
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .forget_cluster(&namespace, &name, &keys);
    for set in &released {
        status::report(&ctx, set).await?;
    }
    if selecting.is_empty() {
        return Ok(Action::await_change());
    }

    let mut readable = Vec::with_capacity(selecting.len());
    for set in &selecting {
        readable.push(read_resources(&ctx, set).await?);
    }
    let current = ctx
        .cache
        .get(ADDONS_GROUP, BINDING_KIND, &namespace, &name)
        .and_then(|b| decode_value::<ClusterResourceSetBinding>((*b).clone()).ok());
    let prepared = prepare_binding(current.as_ref(), &namespace, &name, &selecting);
    let now = Instant::now();
    let work: Vec<(&ClusterResourceSet, Vec<ResourceWork<'_>>)> = {
        let ledger = ctx.ledger.lock().unwrap_or_else(PoisonError::into_inner);
        selecting
            .iter()
            .zip(&readable)
            .map(|(set, resources)| {
                let entry = set_entry(Some(&prepared), set.name());
                let due = pending_work(set, entry, resources)
                    .into_iter()
                    .filter(|w| !ledger.is_waiting(&set_key(set), &name, w.resource, now))
                    .collect();
                (*set, due)
            })
            .collect()
    };

    let mut binding = prepared;
    if work.iter().any(|(_, due)| !due.is_empty()) {
        if current.is_none() {
            // Recorded before the workload cluster is touched, so the Cluster's cleanup finds it.
            binding = create_binding(&ctx, &binding).await?;
        }
        apply(&ctx, &namespace, &name, &work, &mut binding).await;
    }
    if current.as_ref() != Some(&binding) {
        write_binding(&ctx, &binding).await?;
    }
    for key in &keys {
        status::report(&ctx, key).await?;
    }
    Ok(next_look(&ctx, &namespace, &name))
}

/// The sets of `namespace` not paused by annotation.
fn unpaused_sets(ctx: &Context, namespace: &str) -> Vec<ClusterResourceSet> {
    ctx.sets_in(namespace)
        .into_iter()
        .filter(|set| {
            !set.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(PAUSED_ANNOTATION))
        })
        .collect()
}

/// When to look at the Cluster `namespace/name` again: when the ledger's next retry for it is
/// due, else at the resync.
fn next_look(ctx: &Context, namespace: &str, name: &str) -> Action {
    let next = ctx
        .ledger
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .next_due(namespace, name);
    Action::requeue(next.map_or(RESYNC, |due| {
        due.saturating_duration_since(Instant::now())
            .max(Duration::from_millis(10))
    }))
}

/// Requeue after a failed reconcile: at once after a lost write race, else after a pause.
pub fn on_error(cluster: Arc<DynamicObject>, error: &ReconcileError, _ctx: Arc<Context>) -> Action {
    if error.is_conflict() {
        return Action::requeue(CONFLICT_RETRY);
    }
    tracing::warn!(cluster = ?cluster.metadata.name, error = %error, "ClusterResourceSet reconcile failed");
    Action::requeue(ERROR_RETRY)
}

/// The resources of `set` that could be read; the others are recorded in the ledger.
async fn read_resources(
    ctx: &Context,
    set: &ClusterResourceSet,
) -> Result<Vec<(ResourceRef, Resource)>, ReconcileError> {
    let mut readable = Vec::new();
    let mut unreadable = BTreeMap::new();
    for resource in &set.spec.resources {
        let fetched = ctx
            .resources
            .read(&resource.kind, set.namespace(), &resource.name)
            .await
            .map_err(|e| {
                ReconcileError::new(format!("cannot read {} {}", resource.kind, resource.name), e)
            })?;
        match fetched.as_deref().map(|f| &f.content) {
            Some(Ok(content)) => readable.push((resource.clone(), content.clone())),
            Some(Err(error)) => {
                unreadable.insert(resource.clone(), Problem::from(error));
            }
            None => {
                let problem = Problem::new(reasons::RETRIEVING_RESOURCE_FAILED, "not found");
                unreadable.insert(resource.clone(), problem);
            }
        }
    }
    ctx.ledger
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .set_unreadable(&set_key(set), unreadable);
    Ok(readable)
}

/// Connects to the workload cluster and writes every due resource, recording each outcome in
/// `binding` and the ledger.
async fn apply(
    ctx: &Context,
    namespace: &str,
    cluster: &str,
    work: &[(&ClusterResourceSet, Vec<ResourceWork<'_>>)],
    binding: &mut ClusterResourceSetBinding,
) {
    let workload = ctx.workloads.get(namespace, cluster).await;
    let now = now_rfc3339();
    for (set, due) in work.iter().filter(|(_, due)| !due.is_empty()) {
        let key = set_key(set);
        let workload = match &workload {
            Ok(workload) => workload,
            Err(error) => {
                unreachable(ctx, &key, cluster, error);
                continue;
            }
        };
        ctx.ledger
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .succeeded(&key, cluster, None);
        for item in due {
            let outcome = write_objects(workload, item).await;
            record_outcome(
                binding,
                set.name(),
                item.resource,
                item.hash,
                outcome.is_ok(),
                &now,
            );
            let mut ledger = ctx.ledger.lock().unwrap_or_else(PoisonError::into_inner);
            match outcome {
                Ok(()) => ledger.succeeded(&key, cluster, Some(item.resource)),
                Err(WorkloadError::Refused(message)) => {
                    let problem = Problem::new(reasons::APPLY_FAILED, message);
                    ledger.failed(&key, cluster, Some(item.resource), problem, Instant::now());
                }
                Err(error @ WorkloadError::Unreachable(_)) => {
                    drop(ledger);
                    unreachable(ctx, &key, cluster, &error);
                    // The rest would only time out the same way.
                    break;
                }
            }
        }
    }
}

fn unreachable(ctx: &Context, set: &SetKey, cluster: &str, error: &WorkloadError) {
    let problem = Problem::new(reasons::REMOTE_CLUSTER_CLIENT_FAILED, error.to_string());
    ctx.ledger.lock().unwrap_or_else(PoisonError::into_inner).failed(
        set,
        cluster,
        None,
        problem,
        Instant::now(),
    );
}

/// Writes the objects of one resource in order; every object is tried, and the first refusal
/// (with how many more there were) is the resource's error.
async fn write_objects(workload: &Workload, item: &ResourceWork<'_>) -> Result<(), WorkloadError> {
    let mut refusals = Vec::new();
    for object in item.objects {
        match workload.write(object, item.mode).await {
            Ok(()) => {}
            Err(WorkloadError::Refused(message)) => refusals.push(message),
            Err(unreachable) => return Err(unreachable),
        }
    }
    match refusals.as_slice() {
        [] => Ok(()),
        [only] => Err(WorkloadError::Refused(only.clone())),
        [first, rest @ ..] => Err(WorkloadError::Refused(format!(
            "{first} (and {} more objects refused)",
            rest.len()
        ))),
    }
}

async fn create_binding(
    ctx: &Context,
    binding: &ClusterResourceSetBinding,
) -> Result<ClusterResourceSetBinding, ReconcileError> {
    let namespace = binding.metadata.namespace.clone().unwrap_or_default();
    let what = || {
        format!(
            "cannot create ClusterResourceSetBinding {namespace}/{}",
            binding.spec.cluster_name
        )
    };
    let value =
        serde_json::to_value(binding).map_err(|e| ReconcileError::new(what(), kube::Error::SerdeError(e)))?;
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &namespace, &ctx.bindings);
    let body = dynamic(&value).map_err(|e| ReconcileError::new(what(), e))?;
    let written = api
        .create(&PostParams::default(), &body)
        .await
        .map_err(|e| ReconcileError::new(what(), e))?;
    observed(ctx, &written).map_err(|e| ReconcileError::new(what(), e))
}

/// Replaces the binding (optimistically: a binding changed meanwhile is a conflict, retried).
async fn write_binding(ctx: &Context, binding: &ClusterResourceSetBinding) -> Result<(), ReconcileError> {
    let namespace = binding.metadata.namespace.clone().unwrap_or_default();
    let name = binding.metadata.name.clone().unwrap_or_default();
    let what = || format!("cannot write ClusterResourceSetBinding {namespace}/{name}");
    let value: Value =
        serde_json::to_value(binding).map_err(|e| ReconcileError::new(what(), kube::Error::SerdeError(e)))?;
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &namespace, &ctx.bindings);
    let body = dynamic(&value).map_err(|e| ReconcileError::new(what(), e))?;
    let written = if binding.metadata.resource_version.is_some() {
        api.replace(&name, &PostParams::default(), &body).await
    } else {
        api.create(&PostParams::default(), &body).await
    }
    .map_err(|e| ReconcileError::new(what(), e))?;
    observed(ctx, &written).map_err(|e| ReconcileError::new(what(), e))?;
    Ok(())
}

/// Caches a binding just written (read-your-writes) and decodes it.
fn observed(ctx: &Context, written: &DynamicObject) -> Result<ClusterResourceSetBinding, kube::Error> {
    let value = object_value(written, &ctx.bindings);
    ctx.cache.observe(value.clone());
    decode_value(value)
        .map_err(|e| kube::Error::SerdeError(<serde_json::Error as serde::de::Error>::custom(e)))
}
