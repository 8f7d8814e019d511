//! Reconciling one ClusterResourceSet: its finalizer, its ownership of the Secrets and ConfigMaps
//! it lists, the resources that cannot be read; and once deleted, its removal from every binding
//! (the objects it applied stay in the workload clusters).

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use serde_json::json;

use super::{dynamic, set_key, status, Context, ReconcileError, BINDING_KIND};
use crate::addons::binding::{remove_set, AfterSetRemoved};
use crate::addons::condition::{reasons, Problem};
use crate::api::{
    ClusterResourceSet, ClusterResourceSetBinding, ResourceRef, ADDONS_GROUP, RESOURCE_SET_FINALIZER,
};
use crate::decode::decode_value;
use crate::store::{object_value, ObjectSource};

/// How soon a set is looked at again while a resource it lists is missing or unreadable.
const UNREADABLE_RETRY: Duration = Duration::from_secs(15);
/// The first retry after a failed reconcile.
const ERROR_RETRY: Duration = Duration::from_secs(2);

/// Reconciles one set.
pub async fn reconcile_set(set: Arc<DynamicObject>, ctx: Arc<Context>) -> Result<Action, ReconcileError> {
    if !ctx.scope.admits(&set.metadata) {
        return Ok(Action::await_change());
    }
    let value = object_value(&set, &ctx.sets);
    let Ok(typed) = decode_value::<ClusterResourceSet>(value.clone()) else {
        return Ok(Action::await_change());
    };
    let finalizers = set.metadata.finalizers.clone().unwrap_or_default();
    let finalized = finalizers.iter().any(|f| f == RESOURCE_SET_FINALIZER);
    if set.metadata.deletion_timestamp.is_none() || finalized {
        // Cluster reconciles must see this version: a deleting set applies nothing more.
        ctx.cache.observe(value);
    }
    if set.metadata.deletion_timestamp.is_some() {
        if finalized {
            release_bindings(&ctx, &typed).await?;
            let remaining: Vec<&String> = finalizers
                .iter()
                .filter(|f| *f != RESOURCE_SET_FINALIZER)
                .collect();
            patch_metadata(&ctx, &set, json!({"finalizers": remaining})).await?;
        }
        let key = set_key(&typed);
        ctx.ledger
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .forget_set(&key);
        ctx.status_locks.forget(&key);
        return Ok(Action::await_change());
    }
    if !finalized {
        let mut with_ours = finalizers.clone();
        with_ours.push(RESOURCE_SET_FINALIZER.to_owned());
        patch_metadata(&ctx, &set, json!({ "finalizers": with_ours })).await?;
        // The update brings this set back with its finalizer.
        return Ok(Action::await_change());
    }

    let unreadable = own_resources(&ctx, &typed).await?;
    let retry = !unreadable.is_empty();
    let key = set_key(&typed);
    ctx.ledger
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .set_unreadable(&key, unreadable);
    status::report(&ctx, &key).await?;
    Ok(if retry {
        Action::requeue(UNREADABLE_RETRY)
    } else {
        Action::await_change()
    })
}

/// Takes ownership of each Secret and ConfigMap the set lists; returns those that cannot be
/// read, and why.
async fn own_resources(
    ctx: &Context,
    typed: &ClusterResourceSet,
) -> Result<BTreeMap<ResourceRef, Problem>, ReconcileError> {
    let mut unreadable = BTreeMap::new();
    for resource in &typed.spec.resources {
        let what = || format!("cannot read {} {}", resource.kind, resource.name);
        let fetched = ctx
            .resources
            .read(&resource.kind, typed.namespace(), &resource.name)
            .await
            .map_err(|e| ReconcileError::new(what(), e))?;
        let Some(fetched) = fetched else {
            unreadable.insert(
                resource.clone(),
                Problem::new(reasons::RETRIEVING_RESOURCE_FAILED, "not found"),
            );
            continue;
        };
        if let Err(error) = &fetched.content {
            unreadable.insert(resource.clone(), Problem::from(error));
        }
        ctx.resources
            .ensure_owner(&resource.kind, typed.namespace(), &resource.name, &fetched, typed)
            .await
            .map_err(|e| ReconcileError::new(format!("cannot own {} {}", resource.kind, resource.name), e))?;
    }
    Ok(unreadable)
}

/// Requeue after a failed reconcile.
pub fn on_error(set: Arc<DynamicObject>, error: &ReconcileError, _ctx: Arc<Context>) -> Action {
    if !error.is_conflict() {
        tracing::warn!(set = ?set.metadata.name, error = %error, "ClusterResourceSet reconcile failed");
    }
    Action::requeue(ERROR_RETRY)
}

/// Removes a deleted set from every binding of its namespace; a binding left with no set goes.
async fn release_bindings(ctx: &Context, set: &ClusterResourceSet) -> Result<(), ReconcileError> {
    let namespace = set.namespace();
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), namespace, &ctx.bindings);
    for cached in ctx.cache.list(ADDONS_GROUP, BINDING_KIND, namespace) {
        let Ok(binding) = decode_value::<ClusterResourceSetBinding>((*cached).clone()) else {
            continue;
        };
        let name = binding.metadata.name.clone().unwrap_or_default();
        let what = || format!("cannot release ClusterResourceSetBinding {namespace}/{name}");
        match remove_set(&binding, set.name()) {
            AfterSetRemoved::Unchanged => {}
            AfterSetRemoved::Deleted => match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => return Err(ReconcileError::new(what(), e)),
            },
            AfterSetRemoved::Updated(next) => {
                let value = serde_json::to_value(&*next)
                    .map_err(|e| ReconcileError::new(what(), kube::Error::SerdeError(e)))?;
                let body = dynamic(&value).map_err(|e| ReconcileError::new(what(), e))?;
                let written = api
                    .replace(&name, &PostParams::default(), &body)
                    .await
                    .map_err(|e| ReconcileError::new(what(), e))?;
                ctx.cache.observe(object_value(&written, &ctx.bindings));
            }
        }
    }
    Ok(())
}

/// Merge-patches the set's metadata, guarded by its resourceVersion.
async fn patch_metadata(
    ctx: &Context,
    set: &DynamicObject,
    metadata: serde_json::Value,
) -> Result<(), ReconcileError> {
    let namespace = set.metadata.namespace.clone().unwrap_or_default();
    let name = set.metadata.name.clone().unwrap_or_default();
    let mut metadata = metadata;
    metadata["resourceVersion"] = json!(set.metadata.resource_version);
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &namespace, &ctx.sets);
    let written = api
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": metadata })),
        )
        .await
        .map_err(|e| {
            ReconcileError::new(
                format!("cannot update the finalizers of ClusterResourceSet {namespace}/{name}"),
                e,
            )
        })?;
    if written.metadata.deletion_timestamp.is_none() {
        ctx.cache.observe(object_value(&written, &ctx.sets));
    }
    Ok(())
}
