//! The ClusterClass controller: writes each class's `status.variables`, `observedGeneration` and
//! `VariablesReconciled`, which the Cluster webhooks and the topology controller read.

use std::sync::Arc;
use std::time::Duration;

use kube::api::DynamicObject;
use kube::core::ApiResource;
use kube::runtime::controller::Action;

use super::sync::Syncer;
use crate::api::ClusterClass;
use crate::clock::now_rfc3339;
use crate::decode::decode_value;
use crate::store::object_value;
use crate::store::WatchCache;
use crate::topology::blueprint::Blueprint;
use crate::topology::class_status::{class_status, status_is_current};

/// How soon a class whose templates are missing is looked at again.
const MISSING_TEMPLATE_RETRY: Duration = Duration::from_secs(30);

/// What every reconcile shares.
pub struct Context {
    /// The templates the classes reference, from the watch caches.
    pub cache: WatchCache,
    /// Writes.
    pub syncer: Syncer,
    /// The ClusterClass resource.
    pub resource: ApiResource,
}

/// Why a reconcile failed; the class is retried.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the status of ClusterClass {name}: {source}")]
pub struct ReconcileError {
    name: String,
    source: kube::Error,
}

/// Reconciles one ClusterClass.
pub async fn reconcile_class(class: Arc<DynamicObject>, ctx: Arc<Context>) -> Result<Action, ReconcileError> {
    let object = object_value(&class, &ctx.resource);
    let typed = match decode_value::<ClusterClass>(object.clone()) {
        Ok(typed) => typed,
        Err(reason) => {
            tracing::warn!(%reason, "ClusterClass does not decode; not reconciled");
            return Ok(Action::await_change());
        }
    };
    let generation = class.metadata.generation.unwrap_or(1);
    let desired = class_status(&typed, generation, &now_rfc3339());
    if !status_is_current(object.get("status"), &desired) {
        let written = ctx
            .syncer
            .patch_status(&object, &desired)
            .await
            .map_err(|source| ReconcileError {
                name: class.metadata.name.clone().unwrap_or_default(),
                source,
            })?;
        // Clusters of the class wait for this status: let them see it without waiting for the watch.
        ctx.cache.observe(written);
    }
    // The templates must exist for Clusters of the class to be reconciled; say so while not.
    if let Err(missing) = Blueprint::new(typed, &ctx.cache) {
        tracing::warn!(class = %class.metadata.name.clone().unwrap_or_default(), error = %missing, "ClusterClass not usable yet");
        return Ok(Action::requeue(MISSING_TEMPLATE_RETRY));
    }
    Ok(Action::await_change())
}

/// Requeue after a failed reconcile.
pub fn on_error(_class: Arc<DynamicObject>, error: &ReconcileError, _ctx: Arc<Context>) -> Action {
    tracing::warn!(error = %error, "ClusterClass reconcile failed; retrying");
    Action::requeue(Duration::from_secs(5))
}
