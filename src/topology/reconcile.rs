//! What the topology controller must do for one Cluster, decided from an [`ObjectSource`]: the
//! objects to apply (with owner references to the Cluster), the Cluster's references, the owned
//! objects to delete, and the `TopologyReconciled` condition. Pure: the controller only carries it
//! out.

use serde_json::{json, Map, Value};

use super::blueprint::Blueprint;
use super::current::Current;
use super::desired::CAPI_API_VERSION;
use super::error::TopologyError;
use super::hooks::LifecycleHooks;
use super::plan::plan_with_hooks;
use super::reconcile_class::usable_class;
use super::upgrade::UpgradePlan;
use super::upgrade_hooks::HookEffects;
use super::upgrade_report::{pending, Pending};
use crate::api::labels::{CLUSTER_NAME_LABEL, TOPOLOGY_OWNED_LABEL, TOPOLOGY_UPGRADE_STEP_ANNOTATION};
use crate::api::Cluster;
use crate::patches::external::ExternalPatches;
use crate::store::{self, ObjectSource};

mod owned;

/// The condition type the controller writes on the Cluster.
pub const TOPOLOGY_RECONCILED_CONDITION: &str = "TopologyReconciled";
/// The reason of a Cluster blocked by a Runtime Extension (a failed call, a Failure answer, a
/// patch that does not apply): unlike the class's own patches, it may pass on a retry.
pub const EXTERNAL_PATCH_FAILED: &str = "ExternalPatchFailed";
/// The reason of a Cluster whose lifecycle hook call failed (it may pass on a retry).
pub const LIFECYCLE_HOOK_FAILED: &str = "LifecycleHookFailed";
const CAPI_GROUP: &str = "cluster.x-k8s.io";

/// The work for one Cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Reconciliation {
    /// Each desired object with the current object of the same kind and name, if any.
    pub objects: Vec<(Value, Option<Value>)>,
    /// The Cluster's fields the topology sets, to apply when they differ from the Cluster's:
    /// `spec.infrastructureRef`, `spec.controlPlaneRef` and the labels `cluster.x-k8s.io/cluster-name`
    /// and `topology.cluster.x-k8s.io/owned` (Cluster API v1.14's `reconcileCluster`).
    pub cluster_refs: Option<Value>,
    /// Owned objects no longer desired: removed worker pools, their health checks, rotated
    /// template clones no MachineSet uses any more.
    pub deletions: Vec<Value>,
    /// How versions and rollouts are sequenced, and what still waits.
    pub upgrade: UpgradePlan,
    /// What the upgrade's lifecycle hook calls left: hooks called, held, to mark pending or done.
    pub hooks: HookEffects,
    /// The lowest `retryAfterSeconds` of a holding hook: look again then at the latest.
    pub requeue_after_seconds: Option<u32>,
}

/// Why a Cluster's topology cannot be reconciled now, as its condition says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// The condition reason (`ClusterClassNotFound`, `TemplateNotFound`, `PatchFailed`,
    /// [`EXTERNAL_PATCH_FAILED`]...).
    pub reason: &'static str,
    /// What an operator reads in `kubectl describe cluster`.
    pub message: String,
}

/// Decides the work for the (defaulted) Cluster `object`, reading the class, its templates and the
/// current objects from `source`, calling the class's external patches through `external` and the
/// upgrade's lifecycle hooks through `hooks`.
pub fn reconcile(
    object: &Value,
    cluster: &Cluster,
    source: &dyn ObjectSource,
    external: &dyn ExternalPatches,
    hooks: &dyn LifecycleHooks,
) -> Result<Reconciliation, Blocked> {
    let name = cluster.metadata.name.clone().unwrap_or_default();
    let namespace = cluster
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".to_owned());
    let Some(topology) = cluster.spec.managed_topology() else {
        return Err(blocked(
            "NoTopology",
            format!("Cluster {name:?} has no spec.topology"),
        ));
    };
    let class_namespace = match topology.class_ref.namespace.as_str() {
        "" => namespace.clone(),
        ns => ns.to_owned(),
    };
    let entry = usable_class(&class_namespace, &topology.class_ref.name, source)
        .map_err(|unusable| blocked(unusable.reason, unusable.message))?;
    let class = &entry.class;
    let blueprint = Blueprint::new(class.clone(), source).map_err(engine_blocked)?;
    let owned = owned::owned_kinds(cluster, &blueprint);
    // Only this Cluster's objects (its name label, indexed by the store) are copied: reading
    // every Cluster's objects of each kind made each reconcile cost the size of the namespace.
    let current = Current::owned_by(
        &name,
        &namespace,
        owned
            .iter()
            .flat_map(|(group, kind)| source.list_of_cluster(group, kind, &namespace, &name))
            .map(store::owned),
    );
    let planned = plan_with_hooks(&blueprint, cluster, &current, external, hooks).map_err(engine_blocked)?;

    let objects = with_owners(planned.objects, &planned.cluster, object, &current);
    let deletions = owned::stale_objects(&current, &objects, source, &namespace);
    Ok(Reconciliation {
        cluster_refs: cluster_refs(object, &planned.cluster),
        objects,
        deletions,
        requeue_after_seconds: planned.hooks.requeue_after_seconds(),
        hooks: planned.hooks,
        upgrade: planned.upgrade,
    })
}

/// The planned objects, each owned by the Cluster (`cluster_object`) and paired with the current
/// object it replaces.
fn with_owners(
    planned: Vec<Value>,
    planned_cluster: &Value,
    cluster_object: &Value,
    current: &Current,
) -> Vec<(Value, Option<Value>)> {
    let owner = owner_reference(cluster_object);
    planned
        .into_iter()
        .map(|mut desired| {
            let kind = desired["kind"].as_str().unwrap_or_default();
            let name = desired["metadata"]["name"].as_str().unwrap_or_default();
            let mut owner = owner.clone();
            if is_referenced(planned_cluster, kind, name) {
                // The Cluster controls the objects it references (the contract's adoption, a
                // controller reference as Cluster API's cluster controller sets it): set with
                // the topology's own apply instead of a second apply per object.
                owner["controller"] = Value::Bool(true);
                owner["blockOwnerDeletion"] = Value::Bool(true);
            }
            desired["metadata"]["ownerReferences"] = json!([owner]);
            let kind = desired["kind"].as_str().unwrap_or_default();
            let name = desired["metadata"]["name"].as_str().unwrap_or_default();
            let existing = current.find(kind, name).cloned();
            (desired, existing)
        })
        .collect()
}

fn blocked(reason: &'static str, message: String) -> Blocked {
    Blocked { reason, message }
}

fn engine_blocked(error: TopologyError) -> Blocked {
    let reason = match &error {
        TopologyError::MissingTemplate { .. } => "TemplateNotFound",
        TopologyError::Patch(_) => "PatchFailed",
        TopologyError::External { .. } => EXTERNAL_PATCH_FAILED,
        TopologyError::LifecycleHook { .. } => LIFECYCLE_HOOK_FAILED,
        TopologyError::UpgradePlan { .. } => "UpgradePlanInvalid",
        _ => "TopologyInvalid",
    };
    blocked(reason, error.to_string())
}

/// The owner reference every object of the topology carries: the Cluster, exactly as Cluster
/// API's MachineDeployment and MachineHealthCheck controllers ensure it (no `controller`, no
/// `blockOwnerDeletion`): they replace any other reference to the Cluster with theirs, so a
/// different one here would be written back and forth for ever.
fn owner_reference(cluster: &Value) -> Value {
    json!({
        "apiVersion": CAPI_API_VERSION,
        "kind": "Cluster",
        "name": cluster["metadata"]["name"],
        "uid": cluster["metadata"]["uid"],
    })
}

/// Whether the `kind` object `name` is what the Cluster's `spec.infrastructureRef` or
/// `spec.controlPlaneRef` names.
fn is_referenced(cluster: &Value, kind: &str, name: &str) -> bool {
    ["infrastructureRef", "controlPlaneRef"].iter().any(|key| {
        let reference = &cluster["spec"][key];
        reference["kind"] == kind && reference["name"] == name
    })
}

/// The Cluster's references and topology labels to apply when the planned ones differ from the
/// current ones.
fn cluster_refs(current: &Value, planned: &Value) -> Option<Value> {
    let spec = |object: &Value, key: &str| object["spec"].get(key).cloned().unwrap_or(Value::Null);
    let label = |object: &Value, key: &str| {
        object["metadata"]["labels"]
            .get(key)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let step = |object: &Value| {
        object["metadata"]["annotations"]
            .get(TOPOLOGY_UPGRADE_STEP_ANNOTATION)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let labels = [CLUSTER_NAME_LABEL, TOPOLOGY_OWNED_LABEL];
    let unchanged = ["infrastructureRef", "controlPlaneRef"]
        .iter()
        .all(|key| spec(current, key) == spec(planned, key))
        && labels
            .iter()
            .all(|key| label(current, key) == label(planned, key))
        && step(current) == step(planned);
    (!unchanged).then(|| {
        let metadata = &current["metadata"];
        let mut refs = json!({
            "apiVersion": CAPI_API_VERSION,
            "kind": "Cluster",
            "metadata": {"name": metadata["name"], "namespace": metadata["namespace"],
                "labels": labels.map(|key| (key.to_owned(), label(planned, key))).into_iter().collect::<Map<_, _>>()},
            "spec": {
                "infrastructureRef": spec(planned, "infrastructureRef"),
                "controlPlaneRef": spec(planned, "controlPlaneRef"),
            },
        });
        // Applied (server-side) without it, the annotation this field manager set is removed.
        if let Value::String(step) = step(planned) {
            refs["metadata"]["annotations"] = json!({ TOPOLOGY_UPGRADE_STEP_ANNOTATION: step });
        }
        refs
    })
}

/// The `TopologyReconciled` condition for an outcome, stamped `now` (RFC 3339). A reconciled
/// outcome also carries `upgradePlans`: the versions of `status.controlPlane.upgradePlan` and
/// `status.workers.upgradePlan` (a blocked one leaves them as they are, as v1.14 does).
pub fn topology_condition(outcome: &Result<&Reconciliation, &Blocked>, now: &str) -> Value {
    let mut condition = condition_of(outcome, now);
    if let Ok(work) = outcome {
        let versions = |steps: &[String]| steps.iter().map(|v| json!({"version": v})).collect::<Vec<_>>();
        condition["upgradePlans"] = json!({
            "controlPlane": versions(&work.upgrade.steps.control_plane),
            "workers": versions(&work.upgrade.steps.workers),
        });
    }
    condition
}

fn condition_of(outcome: &Result<&Reconciliation, &Blocked>, now: &str) -> Value {
    match outcome {
        Err(blocked) => json!({
            "type": TOPOLOGY_RECONCILED_CONDITION, "status": "False", "severity": "Warning",
            "reason": blocked.reason, "message": blocked.message, "lastTransitionTime": now,
        }),
        Ok(work) => match pending(&work.upgrade, &work.hooks) {
            Some(Pending { reason, mut message }) => {
                // The whole upgrade ahead, as `capi-topology plan` shows it.
                if let Some(outline) = &work.upgrade.outline {
                    message.push('\n');
                    message.push_str(outline.text("  ").trim_end());
                }
                json!({
                "type": TOPOLOGY_RECONCILED_CONDITION, "status": "False", "severity": "Info",
                "reason": reason, "message": message, "lastTransitionTime": now,
                })
            }
            None => {
                json!({"type": TOPOLOGY_RECONCILED_CONDITION, "status": "True", "lastTransitionTime": now})
            }
        },
    }
}

/// True when `current` holds every value `desired` sets: maps may carry more entries (added by
/// others or defaulted by the API server), lists must have the same items in order (a list the
/// template sets is owned by it), scalars must be equal.
pub fn contains(current: &Value, desired: &Value) -> bool {
    match (current, desired) {
        (Value::Object(current), Value::Object(desired)) => desired
            .iter()
            .all(|(key, value)| current.get(key).is_some_and(|c| contains(c, value))),
        (Value::Array(current), Value::Array(desired)) => {
            current.len() == desired.len() && current.iter().zip(desired).all(|(c, d)| contains(c, d))
        }
        (Value::Number(current), Value::Number(desired)) => current.as_f64() == desired.as_f64(),
        (current, desired) => current == desired,
    }
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
