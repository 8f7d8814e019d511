//! An in-memory API server for offline checks: applies an object as `kubectl apply` would,
//! converted to the stored version (v1beta2) and then through the mutating then the validating
//! webhook of that version, and keeps what the server would keep.

use std::fmt;

use kube::core::admission::{AdmissionResponse, Operation};
use serde::Serialize;
use serde_json::{json, Value};

use super::edge::{check_served, to_stored, UnknownVersion};
use super::refusals;
use crate::admission::{self, Kind, Webhook};
use crate::api::class_rollout::{ROLLOUT_GROUP, ROLLOUT_KIND};
use crate::api::convert::from_hub;
use crate::api::ClusterClass;
use crate::contract::ref_versions::{ref_versions_condition, template_refs};
use crate::controller::cluster_class_status::class_status_patch;
use crate::decode::decode_value;
use crate::store::{MemoryStore, ObjectKey, ObjectSource, StoreError};

/// Why an object could not be applied at all.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The store cannot hold it (no name, undecodable).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// It is of one of our groups in a version no CRD serves.
    #[error(transparent)]
    UnknownVersion(#[from] Box<UnknownVersion>),
}
use crate::topology::class_status::{class_status, listed_discoveries};

/// What applying one object came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// A new object was stored.
    Created,
    /// An existing object was changed.
    Configured,
    /// An existing object was applied again with no change.
    Unchanged,
    /// A webhook refused the object.
    Denied,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Created => "created",
            Self::Configured => "configured",
            Self::Unchanged => "unchanged",
            Self::Denied => "denied",
        })
    }
}

/// The answer for one applied object.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// kubectl's name for the object: `cluster.cluster.x-k8s.io/c1`, `configmap/settings`.
    pub resource: String,
    /// The object's namespace; empty for a cluster-scoped kind.
    pub namespace: String,
    /// What happened.
    pub verdict: Verdict,
    /// For a denial, the message kubectl prints; empty otherwise.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Warnings the webhooks returned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Applies `object` (read from `source`, named in messages) to `store`. `now` stamps condition
/// transition times. Errors only when the object cannot be stored at all (no name, undecodable,
/// an unknown version of our groups).
pub fn apply(store: &mut MemoryStore, object: Value, source: &str, now: &str) -> Result<Applied, ApplyError> {
    check_served(&object, source)?;
    let ObjectKey {
        group,
        kind,
        namespace,
        name,
    } = ObjectKey::of(&object);
    let old = store
        .get(&group, &kind, &namespace, &name)
        .map(|old| (*old).clone());
    let admitted_kind = admitted_kind(&group, &kind);
    let mut applied = created(&object);
    let mut object = object;
    if let Err(message) = refusals::check(&mut object) {
        applied.verdict = Verdict::Denied;
        applied.message = message;
        return Ok(applied);
    }
    if let Some(kind) = admitted_kind {
        let verb = if old.is_some() { "patching" } else { "creating" };
        // The API server checks the object in the version it was written in; our webhooks
        // see it in the hub (see `schema_refusal`).
        let spoke = object["apiVersion"]
            .as_str()
            .is_some_and(|v| v.rsplit('/').next() != Some(crate::api::HUB_VERSION));
        let written = spoke.then(|| object.clone());
        object = match to_stored(object, source, verb) {
            Ok(stored) => stored,
            Err(message) => {
                applied.verdict = Verdict::Denied;
                applied.message = message;
                return Ok(applied);
            }
        };
        object = carry_server_fields(object, old.as_ref());
        match admit_through_webhooks(store, kind, object, old.as_ref(), source, written) {
            Ok((admitted, warnings)) => {
                applied.warnings = warnings;
                object = admitted;
            }
            Err((message, warnings)) => {
                applied.warnings = warnings;
                applied.verdict = Verdict::Denied;
                applied.message = message;
                return Ok(applied);
            }
        }
        object = stamp_generation(object, old.as_ref());
        if kind == Kind::ClusterClass {
            object = reconcile_class_status(object, store, now);
        }
    }
    applied.verdict = match &old {
        None => Verdict::Created,
        Some(old) if *old == object => Verdict::Unchanged,
        Some(_) => Verdict::Configured,
    };
    store.insert(object)?;
    Ok(applied)
}

/// The kind our webhooks admit, for one of our kinds.
fn admitted_kind(group: &str, kind: &str) -> Option<Kind> {
    match (group, kind) {
        ("cluster.x-k8s.io", "Cluster") => Some(Kind::Cluster),
        ("cluster.x-k8s.io", "ClusterClass") => Some(Kind::ClusterClass),
        ("addons.cluster.x-k8s.io", "ClusterResourceSet") => Some(Kind::ClusterResourceSet),
        ("addons.cluster.x-k8s.io", "ClusterResourceSetBinding") => Some(Kind::ClusterResourceSetBinding),
        ("runtime.cluster.x-k8s.io", "ExtensionConfig") => Some(Kind::ExtensionConfig),
        (ROLLOUT_GROUP, ROLLOUT_KIND) => Some(Kind::ClusterClassRollout),
        _ => None,
    }
}

/// The answer for `object` before anything is known of it: kubectl's name for it
/// (`cluster.cluster.x-k8s.io/c1`, `configmap/settings`), its namespace, `created`.
pub(super) fn created(object: &Value) -> Applied {
    let ObjectKey {
        group,
        kind,
        namespace,
        name,
    } = ObjectKey::of(object);
    let resource = if group.is_empty() {
        format!("{}/{name}", kind.to_lowercase())
    } else {
        format!("{}.{group}/{name}", kind.to_lowercase())
    };
    // The store files a cluster-scoped object under `default` too; the report says it has none.
    let cluster_scoped = admitted_kind(&group, &kind).is_some_and(|kind| !kind.namespaced());
    Applied {
        resource,
        namespace: if cluster_scoped { String::new() } else { namespace },
        verdict: Verdict::Created,
        message: String::new(),
        warnings: Vec::new(),
    }
}

/// Runs the kind's mutating then validating webhook; the admitted (defaulted) object, or kubectl's
/// message for a denial. Warnings either way. The API server's schema check runs between them,
/// on the mutated object in the version it was written in (`written`: as written in a spoke
/// version).
fn admit_through_webhooks(
    store: &MemoryStore,
    kind: Kind,
    object: Value,
    old: Option<&Value>,
    source: &str,
    written: Option<Value>,
) -> Result<(Value, Vec<String>), (String, Vec<String>)> {
    let operation = if old.is_some() {
        Operation::Update
    } else {
        Operation::Create
    };
    let verb = if old.is_some() { "patching" } else { "creating" };
    let mut warnings = Vec::new();
    let mut object = object;
    let mut schema_checked = false;
    let mut patched = false;
    for webhook in Webhook::of_kind(kind) {
        if !webhook.mutating && !std::mem::replace(&mut schema_checked, true) {
            let written = written.as_ref().map(|written| (written, patched));
            if let Some(message) = schema_refusal(store, &object, old, written) {
                return Err((message, warnings));
            }
        }
        let response = admission::admit_value(webhook, &operation, Some(&object), old, store);
        warnings.extend(response.warnings.clone().unwrap_or_default());
        if !response.allowed {
            let message = format!(
                "Error from server ({reason}): error when {verb} {source:?}: admission webhook {name:?} denied the request: {detail}",
                reason = reason_of(&response),
                name = webhook.configuration_name(),
                detail = response.result.message,
            );
            return Err((message, warnings));
        }
        if let Some(patch) = &response.patch {
            let applied = serde_json::from_slice::<json_patch::Patch>(patch)
                .map_err(|err| err.to_string())
                .and_then(|patch| {
                    patched |= !patch.0.is_empty();
                    json_patch::patch(&mut object, &patch).map_err(|err| err.to_string())
                });
            if let Err(err) = applied {
                return Err((
                    format!("error: the mutating webhook returned a patch that does not apply: {err}"),
                    warnings,
                ));
            }
        }
    }
    if !schema_checked {
        let written = written.as_ref().map(|written| (written, patched));
        if let Some(message) = schema_refusal(store, &object, old, written) {
            return Err((message, warnings));
        }
    }
    Ok((object, warnings))
}

/// The API server's schema check of the hub `object` after the mutating webhooks, in the version
/// it was written in, against the stored `old` in that version (for ratcheting). `written` is
/// the object as written in a spoke version, and whether a mutating webhook patched it: the API
/// server converts a patched object back from the webhook's version (the hub), as
/// [`from_hub`] does, and checks an unpatched one as written.
fn schema_refusal(
    versions: &MemoryStore,
    object: &Value,
    old: Option<&Value>,
    written: Option<(&Value, bool)>,
) -> Option<String> {
    let Some((written, patched)) = written else {
        return refusals::schema_refusal(object, old);
    };
    let version = written["apiVersion"].as_str().unwrap_or_default();
    let in_written = |hub: &Value| from_hub(hub.clone(), version, versions).ok();
    let checked = patched.then(|| in_written(object)).flatten();
    let old = old.and_then(in_written);
    refusals::schema_refusal(checked.as_ref().unwrap_or(written), old.as_ref())
}

fn reason_of(response: &AdmissionResponse) -> &str {
    if response.result.reason.is_empty() {
        "Forbidden"
    } else {
        &response.result.reason
    }
}

/// Keeps what the API server owns across an apply: uid, creation time, generation and status.
fn carry_server_fields(mut object: Value, old: Option<&Value>) -> Value {
    let Some(old) = old else { return object };
    for field in ["uid", "creationTimestamp", "generation", "resourceVersion"] {
        if let (Some(value), Some(metadata)) = (
            old.pointer(&format!("/metadata/{field}")),
            object.get_mut("metadata").and_then(Value::as_object_mut),
        ) {
            metadata.insert(field.to_owned(), value.clone());
        }
    }
    if let (Some(status), Some(map)) = (old.get("status"), object.as_object_mut()) {
        map.insert("status".to_owned(), status.clone());
    }
    object
}

/// `metadata.generation`: 1 on create, bumped when the spec changes.
fn stamp_generation(mut object: Value, old: Option<&Value>) -> Value {
    let old_generation = old
        .and_then(|o| o.pointer("/metadata/generation"))
        .and_then(Value::as_i64);
    let generation = match (old, old_generation) {
        (Some(old), Some(generation)) if old.get("spec") == object.get("spec") => generation,
        (_, Some(generation)) => generation + 1,
        (_, None) => 1,
    };
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.insert("generation".to_owned(), json!(generation));
    }
    object
}

/// The status the ClusterClass controller writes (variables, observedGeneration, VariablesReady
/// and RefVersionsUpToDate from the contract labels of the CRDs in the store), merged into the
/// status the class carries.
fn reconcile_class_status(mut object: Value, store: &MemoryStore, now: &str) -> Value {
    let Ok(class) = decode_value::<ClusterClass>(object.clone()) else {
        return object;
    };
    let generation = object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let engine = class_status(&class, generation, &listed_discoveries(&class), now);
    let refs = template_refs(&object);
    let ref_versions = ref_versions_condition(&refs, |crd| store.crd_labels(crd));
    let patch = class_status_patch(object.get("status"), &engine, ref_versions, generation, now);
    if let (Some(Value::Object(patch)), Some(map)) = (patch, object.as_object_mut()) {
        let status = map.entry("status").or_insert_with(|| json!({}));
        if !status.is_object() {
            *status = json!({});
        }
        if let Some(status) = status.as_object_mut() {
            status.extend(patch);
        }
    }
    object
}
