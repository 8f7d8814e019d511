//! Carries out what [`topology::topology_finalizers`](crate::topology::topology_finalizers)
//! decides for a Cluster: deletes the unused templates of its MachineSets and
//! MachineDeployments being deleted, then removes the finalizer Cluster API's topology
//! controllers left on them. Triggered by any change of a Cluster's MachineSets and
//! MachineDeployments (deletions included).

use futures::Stream;
use kube::api::DynamicObject;
use kube::core::ApiResource;
use kube::runtime::reflector::ObjectRef;
use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::topology_writes::{failed, Context, ReconcileError};
use crate::store::{ObjectSource, WatchCache};
use crate::topology::topology_finalizers::{finalizer_cleanups, FinalizerCleanup};

const CAPI_GROUP: &str = "cluster.x-k8s.io";
/// Writes of the finalizer list refused as conflicting before the reconcile gives up (retried).
const FINALIZER_ATTEMPTS: usize = 3;

/// Honours the finalizers on the MachineSets and MachineDeployments of the Cluster `cluster`.
pub async fn clean_up(ctx: &Context, cluster: &Value) -> Result<(), ReconcileError> {
    let text = |pointer: &str| {
        cluster
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (namespace, name) = (text("/metadata/namespace"), text("/metadata/name"));
    let deployments = ctx
        .cache
        .list_of_cluster(CAPI_GROUP, "MachineDeployment", namespace, name);
    let sets = ctx
        .cache
        .list_of_cluster(CAPI_GROUP, "MachineSet", namespace, name);
    for cleanup in finalizer_cleanups(cluster, &deployments, &sets) {
        carry_out(ctx, namespace, &cleanup).await?;
    }
    Ok(())
}

async fn carry_out(ctx: &Context, namespace: &str, cleanup: &FinalizerCleanup) -> Result<(), ReconcileError> {
    for template in &cleanup.unused_templates {
        // The cache knows the template's version; one it does not hold is gone already.
        if let Some(object) = ctx
            .cache
            .get(&template.group, &template.kind, namespace, &template.name)
        {
            ctx.syncer
                .delete(&object)
                .await
                .map_err(|source| failed("delete", &object, source))?;
            tracing::info!(template = %template.name, kind = %template.kind, "deleted a template no longer in use");
        }
    }
    remove_finalizer(ctx, cleanup).await
}

/// Writes the finalizer list without the finalizer, guarded by the resourceVersion; on a
/// conflict, again on the API server's newest copy.
async fn remove_finalizer(ctx: &Context, cleanup: &FinalizerCleanup) -> Result<(), ReconcileError> {
    let (mut object, mut patch) = (cleanup.object.clone(), cleanup.patch.clone());
    let removed: Vec<Value> = finalizers(&object)
        .into_iter()
        .filter(|f| {
            !patch["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|kept| kept.contains(f))
        })
        .collect();
    for attempt in 1..=FINALIZER_ATTEMPTS {
        match ctx.syncer.patch_guarded(&object, &patch).await {
            Ok(written) => {
                ctx.cache.observe(written);
                return Ok(());
            }
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
            Err(kube::Error::Api(status)) if status.code == 409 && attempt < FINALIZER_ATTEMPTS => {
                object = match ctx.syncer.get(&object).await {
                    Ok(fresh) => fresh,
                    Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
                    Err(source) => return Err(failed("read", &object, source)),
                };
                let kept: Vec<Value> = finalizers(&object)
                    .into_iter()
                    .filter(|f| !removed.contains(f))
                    .collect();
                patch = json!({ "metadata": { "finalizers": kept } });
            }
            Err(source) => return Err(failed("remove the topology finalizer of", &object, source)),
        }
    }
    Ok(())
}

fn finalizers(object: &Value) -> Vec<Value> {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Reconcile requests for the Cluster of each MachineSet or MachineDeployment that changed.
pub fn triggers(
    cache: &WatchCache,
    resource: ApiResource,
) -> impl Stream<Item = ObjectRef<DynamicObject>> + Send {
    futures::stream::unfold(
        (cache.changes(), resource),
        |(mut changes, resource)| async move {
            loop {
                match changes.recv().await {
                    Ok(change) => {
                        let machines = change.kind == "MachineSet" || change.kind == "MachineDeployment";
                        let Some(cluster) = change
                            .cluster_name
                            .filter(|_| change.group == CAPI_GROUP && machines)
                        else {
                            continue;
                        };
                        let reference =
                            ObjectRef::new_with(&cluster, resource.clone()).within(&change.namespace);
                        return Some((reference, (changes, resource)));
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(
                            missed,
                            "topology controller missed MachineSet changes; the resync catches up"
                        );
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        },
    )
}
