//! Deleting a Cluster in order (Cluster API v1.10): its worker pools and machines first, then
//! its control plane, then its InfraCluster, each gone before the next is deleted; only then is
//! the Cluster's finalizer released.

use serde_json::Value;

use super::external::Referenced;
use crate::api::runtime::OK_TO_DELETE_ANNOTATION;

/// The finalizer that holds a Cluster until its objects are gone.
pub const CLUSTER_FINALIZER: &str = "cluster.cluster.x-k8s.io";

/// The label Cluster API puts on control plane Machines.
const CONTROL_PLANE_MACHINE_LABEL: &str = "cluster.x-k8s.io/control-plane";

/// The step deletion is at.
#[derive(Debug, Clone, PartialEq)]
pub struct DeletionStep {
    /// Objects to delete now (not already being deleted).
    pub delete: Vec<Value>,
    /// What the Cluster waits for (reason, message naming the objects); `None` when nothing is
    /// left and the finalizer can go.
    pub waiting: Option<(&'static str, String)>,
}

/// The Deleting reason of a Cluster with a managed topology whose BeforeClusterDelete hook has not
/// let it go yet (Cluster API v1.14's).
pub const WAITING_FOR_BEFORE_DELETE_HOOK: &str = "WaitingForBeforeDeleteHook";

/// The step of a Cluster with a managed topology that is not yet ok to delete (its
/// BeforeClusterDelete hook holds it, as v1.14's Cluster controller waits): nothing is deleted.
/// `None` when deletion may go on.
pub fn held_by_delete_hook(cluster: &Value) -> Option<DeletionStep> {
    let managed = cluster.pointer("/spec/topology").is_some_and(|t| !t.is_null());
    let ok = cluster
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(OK_TO_DELETE_ANNOTATION))
        .is_some();
    (managed && !ok).then(|| DeletionStep {
        delete: Vec::new(),
        waiting: Some((
            WAITING_FOR_BEFORE_DELETE_HOOK,
            "Waiting for BeforeClusterDelete hook".to_owned(),
        )),
    })
}

/// The next step of deleting `cluster`, given the worker objects labelled with its name
/// (MachineDeployments, MachineSets, MachinePools, Machines) and its referenced objects.
pub fn next_deletion_step(
    cluster: &Value,
    workers: &[&Value],
    control_plane: Option<Referenced<'_>>,
    infrastructure: Option<Referenced<'_>>,
) -> DeletionStep {
    let uid = cluster
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let has_control_plane_ref = cluster
        .pointer("/spec/controlPlaneRef")
        .is_some_and(|r| !r.is_null());
    let pending: Vec<&Value> = workers
        .iter()
        .copied()
        // Without a control plane object, control plane Machines are the Cluster's to delete.
        .filter(|o| !is_control_plane_machine(o) || !has_control_plane_ref)
        .collect();
    if !pending.is_empty() {
        let delete = pending
            .iter()
            .filter(|o| owned_by(o, uid) && !is_deleting(o))
            .map(|o| (*o).clone())
            .collect();
        return DeletionStep {
            delete,
            waiting: Some(("WaitingForWorkersDeletion", describe(&pending))),
        };
    }
    for (referenced, reason) in [
        (control_plane, "WaitingForControlPlaneDeletion"),
        (infrastructure, "WaitingForInfrastructureDeletion"),
    ] {
        if let Some(Referenced::Found(object)) = referenced {
            let kind = object["kind"].as_str().unwrap_or_default();
            return DeletionStep {
                delete: if is_deleting(object) {
                    Vec::new()
                } else {
                    vec![object.clone()]
                },
                waiting: Some((
                    reason,
                    format!("Waiting for {kind} {} to be deleted", name(object)),
                )),
            };
        }
    }
    DeletionStep {
        delete: Vec::new(),
        waiting: None,
    }
}

fn name(object: &Value) -> &str {
    object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn is_deleting(object: &Value) -> bool {
    object.pointer("/metadata/deletionTimestamp").is_some()
}

fn is_control_plane_machine(object: &Value) -> bool {
    object["kind"] == "Machine"
        && object
            .pointer("/metadata/labels")
            .is_some_and(|labels| labels.get(CONTROL_PLANE_MACHINE_LABEL).is_some())
}

fn owned_by(object: &Value, uid: &str) -> bool {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|owners| owners.iter().any(|o| o["uid"] == uid && o["kind"] == "Cluster"))
}

/// `* MachineDeployments: a, b` per kind, in a stable order, at most ten names per kind.
fn describe(objects: &[&Value]) -> String {
    const ORDER: [&str; 4] = ["MachineDeployment", "MachinePool", "MachineSet", "Machine"];
    let mut lines = Vec::new();
    for kind in ORDER {
        let mut names: Vec<&str> = objects
            .iter()
            .filter(|o| o["kind"] == kind)
            .map(|o| name(o))
            .collect();
        if names.is_empty() {
            continue;
        }
        names.sort_unstable();
        let more = names.len().saturating_sub(10);
        names.truncate(10);
        let mut line = format!("* {kind}s: {}", names.join(", "));
        if more > 0 {
            line.push_str(&format!(", ... ({more} more)"));
        }
        lines.push(line);
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cluster() -> Value {
        json!({"metadata": {"name": "dev", "uid": "u1", "deletionTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"controlPlaneRef": {"kind": "KubeadmControlPlane", "name": "dev-cp"}}})
    }

    fn object(kind: &str, name: &str, owner: &str) -> Value {
        json!({"kind": kind, "metadata": {"name": name, "ownerReferences": [{"kind": "Cluster", "uid": owner}]}})
    }

    #[test]
    fn a_managed_topology_waits_for_its_delete_hook() {
        let mut managed = cluster();
        managed["spec"]["topology"] = json!({"version": "v1.33.0"});
        let step = held_by_delete_hook(&managed).unwrap();
        assert!(step.delete.is_empty());
        assert_eq!(step.waiting.unwrap().0, WAITING_FOR_BEFORE_DELETE_HOOK);
        managed["metadata"]["annotations"] = json!({OK_TO_DELETE_ANNOTATION: ""});
        assert_eq!(held_by_delete_hook(&managed), None);
        assert_eq!(held_by_delete_hook(&cluster()), None, "no topology: no hook");
    }

    #[test]
    fn workers_go_first_and_only_owned_ones_are_deleted() {
        let md = object("MachineDeployment", "dev-md", "u1");
        let ms = object("MachineSet", "dev-md-abc", "md-uid");
        let cp = object("KubeadmControlPlane", "dev-cp", "u1");
        let step = next_deletion_step(&cluster(), &[&md, &ms], Some(Referenced::Found(&cp)), None);
        assert_eq!(step.delete, std::slice::from_ref(&md));
        assert_eq!(
            step.waiting,
            Some((
                "WaitingForWorkersDeletion",
                "* MachineDeployments: dev-md\n* MachineSets: dev-md-abc".to_owned()
            ))
        );
    }

    #[test]
    fn then_the_control_plane_then_the_infrastructure_then_nothing() {
        let cp = object("KubeadmControlPlane", "dev-cp", "u1");
        let infra = object("DockerCluster", "dev-x", "u1");
        let control_plane_machine = json!({"kind": "Machine", "metadata": {"name": "dev-cp-1",
            "labels": {CONTROL_PLANE_MACHINE_LABEL: ""}}});
        let step = next_deletion_step(
            &cluster(),
            &[&control_plane_machine],
            Some(Referenced::Found(&cp)),
            Some(Referenced::Found(&infra)),
        );
        assert_eq!(step.delete, [cp]);
        assert_eq!(
            step.waiting.map(|w| w.1),
            Some("Waiting for KubeadmControlPlane dev-cp to be deleted".to_owned())
        );
        let step = next_deletion_step(
            &cluster(),
            &[],
            Some(Referenced::Missing("gone")),
            Some(Referenced::Found(&infra)),
        );
        assert_eq!(step.delete, std::slice::from_ref(&infra));
        let mut deleting = infra;
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        let step = next_deletion_step(&cluster(), &[], None, Some(Referenced::Found(&deleting)));
        assert!(step.delete.is_empty());
        assert_eq!(
            step.waiting.map(|w| w.0),
            Some("WaitingForInfrastructureDeletion")
        );
        let done = next_deletion_step(&cluster(), &[], None, Some(Referenced::Missing("gone")));
        assert_eq!(
            done,
            DeletionStep {
                delete: vec![],
                waiting: None
            }
        );
    }
}
