//! Writing a set's `ResourcesApplied` condition from the ledger, when its meaning changed. The
//! per-Cluster reconciles of one set report concurrently, so the writes of a set are serialized
//! and each computes the condition afresh inside its turn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::json;

use super::ledger::SetKey;
use super::{Context, ReconcileError, SET_KIND};
use crate::addons::condition::resources_applied;
use crate::api::ADDONS_GROUP;
use crate::clock::now_rfc3339;
use crate::store::{object_value, ObjectSource};
use crate::topology::reconcile::with_condition;

/// One lock per set.
#[derive(Default)]
pub struct Locks(Mutex<HashMap<SetKey, Arc<tokio::sync::Mutex<()>>>>);

impl Locks {
    fn of(&self, set: &SetKey) -> Arc<tokio::sync::Mutex<()>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(set.clone())
            .or_default()
            .clone()
    }

    /// Forgets the lock of a deleted set.
    pub fn forget(&self, set: &SetKey) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(set);
    }
}

/// Writes the condition of `set` (and its observed generation) if either changed.
pub async fn report(ctx: &Context, set: &SetKey) -> Result<(), ReconcileError> {
    let lock = ctx.status_locks.of(set);
    let _turn = lock.lock().await;
    let Some(current) = ctx.cache.get(ADDONS_GROUP, SET_KIND, &set.0, &set.1) else {
        return Ok(());
    };
    if current.pointer("/metadata/deletionTimestamp").is_some() {
        return Ok(());
    }
    let problems = ctx
        .ledger
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .problems(set);
    let condition = resources_applied(&problems, &now_rfc3339());
    let generation = current.pointer("/metadata/generation").cloned();
    let observed = current.pointer("/status/observedGeneration").cloned();
    let conditions = with_condition(current.pointer("/status/conditions"), condition);
    if conditions.is_none() && observed == generation {
        return Ok(());
    }
    let mut status = json!({"observedGeneration": generation});
    if let Some(conditions) = conditions {
        status["conditions"] = json!(conditions);
    }
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &set.0, &ctx.sets);
    let written = api
        .patch_status(
            &set.1,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .map_err(|e| {
            ReconcileError::new(
                format!(
                    "cannot write the status of ClusterResourceSet {}/{}",
                    set.0, set.1
                ),
                e,
            )
        })?;
    ctx.cache.observe(object_value(&written, &ctx.sets));
    Ok(())
}
