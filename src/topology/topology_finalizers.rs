//! The finalizers Cluster API's topology controllers put on the MachineDeployments and
//! MachineSets they made (`machinedeployment.topology.cluster.x-k8s.io`,
//! `machineset.topology.cluster.x-k8s.io`). After a take-over nobody else removes them, so the
//! topology controller honours them as Cluster API v1.14 does: once such an object is being
//! deleted, the bootstrap and infrastructure templates it references are deleted unless still in
//! use, then the finalizer goes. This module only decides; it never adds the finalizers.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::api::labels::{MACHINE_DEPLOYMENT_NAME_LABEL, PAUSED_ANNOTATION, TOPOLOGY_OWNED_LABEL};

/// Cluster API's finalizer on the MachineSets of a topology's MachineDeployments.
pub const MACHINE_SET_FINALIZER: &str = "machineset.topology.cluster.x-k8s.io";
/// Cluster API's finalizer on a topology's MachineDeployments.
pub const MACHINE_DEPLOYMENT_FINALIZER: &str = "machinedeployment.topology.cluster.x-k8s.io";

const CAPI_GROUP: &str = "cluster.x-k8s.io";

/// A template a MachineDeployment or MachineSet references, in its namespace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TemplateRef {
    /// Its API group.
    pub group: String,
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
}

/// What to do for one MachineSet or MachineDeployment being deleted that carries a finalizer.
#[derive(Debug, Clone, PartialEq)]
pub struct FinalizerCleanup {
    /// The object (as read), which the finalizer patch is based on.
    pub object: Value,
    /// The templates it references that nothing else still uses: delete them first.
    pub unused_templates: Vec<TemplateRef>,
    /// The merge patch that removes the finalizer (the rest of the list kept).
    pub patch: Value,
}

/// The cleanups owed for a Cluster's `machine_deployments` and `machine_sets` (both of its
/// namespace and labelled with its name). None while the Cluster or the object is paused.
pub fn finalizer_cleanups(
    cluster: &Value,
    machine_deployments: &[Arc<Value>],
    machine_sets: &[Arc<Value>],
) -> Vec<FinalizerCleanup> {
    if is_paused(cluster) || cluster.pointer("/spec/paused") == Some(&Value::Bool(true)) {
        return Vec::new();
    }
    let mut cleanups = Vec::new();
    for ms in machine_sets {
        if !owes(ms, MACHINE_SET_FINALIZER) {
            continue;
        }
        let deployment = deployment_of(ms);
        let siblings = machine_sets
            .iter()
            .filter(|other| deployment.is_some() && deployment_of(other) == deployment);
        let md = machine_deployments
            .iter()
            .find(|md| deployment.is_some() && name(md) == deployment.as_deref())
            .filter(|md| !is_deleting(md));
        let in_use = in_use(siblings.chain(md));
        cleanups.push(cleanup(ms, MACHINE_SET_FINALIZER, &in_use));
    }
    for md in machine_deployments {
        if !owes(md, MACHINE_DEPLOYMENT_FINALIZER) {
            continue;
        }
        let children = machine_sets
            .iter()
            .filter(|ms| deployment_of(ms).as_deref() == name(md));
        cleanups.push(cleanup(md, MACHINE_DEPLOYMENT_FINALIZER, &in_use(children)));
    }
    cleanups
}

fn cleanup(object: &Value, finalizer: &str, in_use: &BTreeSet<TemplateRef>) -> FinalizerCleanup {
    let mut unused: Vec<TemplateRef> = templates(object)
        .into_iter()
        .filter(|template| !in_use.contains(template))
        .collect();
    unused.dedup();
    let remaining: Vec<&Value> = finalizers(object)
        .iter()
        .filter(|f| f.as_str() != Some(finalizer))
        .collect();
    FinalizerCleanup {
        object: object.clone(),
        unused_templates: unused,
        patch: json!({ "metadata": { "finalizers": remaining } }),
    }
}

/// The templates the objects not being deleted reference.
fn in_use<'a>(objects: impl Iterator<Item = &'a Arc<Value>>) -> BTreeSet<TemplateRef> {
    objects
        .filter(|object| !is_deleting(object))
        .flat_map(|object| templates(object))
        .collect()
}

/// A topology-owned object being deleted, not paused, that carries `finalizer`.
fn owes(object: &Value, finalizer: &str) -> bool {
    is_deleting(object)
        && !is_paused(object)
        && object
            .pointer("/metadata/labels")
            .and_then(|labels| labels.get(TOPOLOGY_OWNED_LABEL))
            .is_some()
        && finalizers(object).iter().any(|f| f.as_str() == Some(finalizer))
}

fn finalizers(object: &Value) -> &[Value] {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn is_deleting(object: &Value) -> bool {
    object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

fn is_paused(object: &Value) -> bool {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(PAUSED_ANNOTATION))
        .is_some()
}

fn name(object: &Value) -> Option<&str> {
    object.pointer("/metadata/name").and_then(Value::as_str)
}

/// The MachineDeployment a MachineSet belongs to: its Cluster API owner reference, else its
/// deployment-name label.
fn deployment_of(ms: &Value) -> Option<String> {
    let owner = ms
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|owner| {
            owner["kind"] == "MachineDeployment"
                && owner["apiVersion"]
                    .as_str()
                    .is_some_and(|v| v.split('/').next() == Some(CAPI_GROUP))
        })
        .and_then(|owner| owner["name"].as_str());
    let label = ms
        .pointer("/metadata/labels")
        .and_then(|labels| labels.get(MACHINE_DEPLOYMENT_NAME_LABEL))
        .and_then(Value::as_str);
    owner.or(label).map(str::to_owned)
}

/// The bootstrap config template and infrastructure machine template `object` references
/// (read from the v1beta2 hub, as the watch cache holds them).
fn templates(object: &Value) -> Vec<TemplateRef> {
    [
        "/spec/template/spec/bootstrap/configRef",
        "/spec/template/spec/infrastructureRef",
    ]
    .iter()
    .filter_map(|pointer| object.pointer(pointer))
    .filter_map(template_ref)
    .collect()
}

fn template_ref(reference: &Value) -> Option<TemplateRef> {
    let text = |key: &str| Some(reference.get(key)?.as_str()?.to_owned());
    Some(TemplateRef {
        group: text("apiGroup")?,
        kind: text("kind")?,
        name: text("name")?,
    })
}

#[cfg(test)]
#[path = "topology_finalizers_tests.rs"]
mod tests;
