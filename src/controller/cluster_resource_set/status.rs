//! Writing a set's `ResourcesApplied` conditions (metav1 in `status.conditions`, v1beta1 in
//! `status.deprecated.v1beta1.conditions`) from the ledger, when their meaning changed. The
//! per-Cluster reconciles of one set report concurrently, so the writes of a set are serialized
//! and each computes the condition afresh inside its turn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::json;

use super::ledger::SetKey;
use super::{Context, ReconcileError, SET_KIND};
use crate::addons::condition::{meta_resources_applied, resources_applied};
use crate::api::conditions::{set_condition, V1BETA1_CONDITIONS};
use crate::api::ADDONS_GROUP;
use crate::clock::now_rfc3339;
use crate::store::{object_value, ObjectSource};

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
    let now = now_rfc3339();
    let condition = resources_applied(&problems, &now);
    let generation = current.pointer("/metadata/generation").cloned();
    let observed = current.pointer("/status/observedGeneration").cloned();
    let mut meta = meta_resources_applied(&condition);
    meta["observedGeneration"] = generation.clone().unwrap_or(serde_json::Value::Null);
    let conditions = set_condition(current.pointer("/status/conditions"), meta, &now);
    let old = set_condition(
        current.pointer(&format!("/status{V1BETA1_CONDITIONS}")),
        condition,
        &now,
    );
    if conditions.is_none() && old.is_none() && observed == generation {
        return Ok(());
    }
    let mut status = json!({"observedGeneration": generation});
    if let Some(conditions) = conditions {
        status["conditions"] = json!(conditions);
    }
    if let Some(old) = old {
        status["deprecated"] = json!({"v1beta1": {"conditions": old}});
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
