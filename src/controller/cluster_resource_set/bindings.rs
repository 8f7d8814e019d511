//! Reconciling one ClusterResourceSetBinding: deleted once its Cluster is gone or being deleted,
//! with the Cluster's workload client and failures (the objects applied stay in the workload
//! cluster).

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject};
use kube::runtime::controller::Action;

use super::{status, Context, ReconcileError};
use crate::store::object_value;

/// The first retry after a failed reconcile.
const ERROR_RETRY: Duration = Duration::from_secs(2);

/// Reconciles one binding.
pub async fn reconcile_binding(
    binding: Arc<DynamicObject>,
    ctx: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let namespace = binding.metadata.namespace.clone().unwrap_or_default();
    let name = binding.metadata.name.clone().unwrap_or_default();
    let value = object_value(&binding, &ctx.bindings);
    let cluster = value["spec"]["clusterName"].as_str().unwrap_or(&name).to_owned();
    // Asked of the API server, not a cache: a cache may still hold a Cluster just deleted.
    let clusters: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &namespace, &ctx.clusters);
    let found = clusters
        .get_opt(&cluster)
        .await
        .map_err(|e| ReconcileError::new(format!("cannot read Cluster {namespace}/{cluster}"), e))?;
    if found.is_some_and(|c| c.metadata.deletion_timestamp.is_none()) {
        return Ok(Action::await_change());
    }
    if binding.metadata.deletion_timestamp.is_none() {
        let bindings: Api<DynamicObject> =
            Api::namespaced_with(ctx.client.clone(), &namespace, &ctx.bindings);
        match bindings.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {
                tracing::info!(binding = %format!("{namespace}/{name}"), "Cluster gone: ClusterResourceSetBinding deleted")
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(e) => {
                return Err(ReconcileError::new(
                    format!("cannot delete ClusterResourceSetBinding {namespace}/{name}"),
                    e,
                ))
            }
        }
    }
    ctx.workloads.forget(&namespace, &cluster);
    let affected = ctx
        .ledger
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .forget_cluster(&namespace, &cluster, &[]);
    for set in &affected {
        status::report(&ctx, set).await?;
    }
    Ok(Action::await_change())
}

/// Requeue after a failed reconcile.
pub fn on_error(binding: Arc<DynamicObject>, error: &ReconcileError, _ctx: Arc<Context>) -> Action {
    tracing::warn!(binding = ?binding.metadata.name, error = %error, "ClusterResourceSetBinding reconcile failed");
    Action::requeue(ERROR_RETRY)
}
