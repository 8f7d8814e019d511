//! What a [`Reconciliation`] does to a running Cluster, as an operator asks it: which objects are
//! created, changed (the fields the controller's server-side apply sets to other values or
//! removes, see [`server_side_apply`](super::server_side_apply)) or deleted, and per control
//! plane and worker pool whether its Machines roll (version, template rotation, `rollout.after`)
//! and what holds them. Pure.

use serde_json::Value;

use super::diff::{Change, FieldChange};
use super::reconcile::Reconciliation;
use super::server_side_apply::{apply_effect, ApplyEffect};
use super::upgrade::UpgradePlan;
use crate::api::describe;
use crate::api::labels::{
    CLUSTER_NAME_LABEL, TOPOLOGY_DEPLOYMENT_NAME_LABEL, TOPOLOGY_OWNED_LABEL, TOPOLOGY_POOL_NAME_LABEL,
};

/// The changes the controller would write: objects created, objects whose apply changes fields
/// (each field the desired object sets to another value, then each field the apply removes; the
/// controller decides whether to write by the same [`apply_effect`]), the Cluster's references
/// and topology labels where they differ from the current `cluster`'s, and objects deleted.
pub fn changes(work: &Reconciliation, cluster: &Value) -> Vec<Change> {
    let mut changes = Vec::new();
    for (desired, current) in &work.objects {
        let Some(current) = current else {
            changes.push(Change::Created(describe(desired)));
            continue;
        };
        let effect = apply_effect(current, desired);
        if !effect.is_noop() {
            let mut fields = effect.changed;
            fields.extend(effect.removed);
            changes.push(Change::Changed(describe(desired), fields));
        }
    }
    if let Some(refs) = &work.cluster_refs {
        let reference = |key: &&str| FieldChange {
            path: format!("spec.{key}"),
            from: cluster["spec"].get(*key).cloned().unwrap_or(Value::Null),
            to: refs["spec"][*key].clone(),
        };
        let labels = |key: &str| FieldChange {
            path: format!("metadata.labels.{key}"),
            from: cluster["metadata"]["labels"]
                .get(key)
                .cloned()
                .unwrap_or(Value::Null),
            to: refs["metadata"]["labels"][key].clone(),
        };
        let mut fields: Vec<FieldChange> = ["infrastructureRef", "controlPlaneRef"]
            .iter()
            .map(reference)
            .chain([CLUSTER_NAME_LABEL, TOPOLOGY_OWNED_LABEL].map(labels))
            .collect();
        fields.retain(|f| !f.to.is_null() && f.from != f.to);
        if !fields.is_empty() {
            changes.push(Change::Changed(describe(refs), fields));
        }
    }
    changes.extend(work.deletions.iter().map(|o| Change::Deleted(describe(o))));
    changes
}

/// Whether one control plane or worker pool's Machines roll, and what holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollout {
    /// The object: `KubeadmControlPlane ns/dev-x7k2p`, `MachineDeployment ns/dev-md-0-abcde (md-0)`.
    pub what: String,
    /// Why its Machines roll (empty: they do not).
    pub because: Vec<String>,
    /// Other changed fields the provider may roll Machines for (control planes only).
    pub provider_decides: Vec<String>,
    /// What the topology holds back, and why.
    pub held: Option<String>,
    /// True when the object is created by this plan (its Machines are new).
    pub created: bool,
    /// True when the version is the only reason its Machines roll: a step of the upgrade the
    /// Cluster declares, which either topology controller carries out.
    pub upgrade_step: bool,
}

/// Whether `because` names the version move alone.
fn only_the_version(because: &[String]) -> bool {
    matches!(because, [reason] if reason.starts_with("version "))
}

/// The rollout of the control plane (`control_plane_kind` is its kind) and of every
/// MachineDeployment and MachinePool of `work`, in that order.
pub fn rollouts(work: &Reconciliation, control_plane_kind: &str) -> Vec<Rollout> {
    let plan = &work.upgrade;
    let mut out = Vec::new();
    for (desired, current) in &work.objects {
        let kind = desired["kind"].as_str().unwrap_or_default();
        let labels = &desired["metadata"]["labels"];
        // Compared with the object as the apply leaves it: a removed field moves too.
        let applied = current
            .as_ref()
            .map(|current| (current, apply_effect(current, desired)));
        let applied = applied.as_ref().map(|(current, effect)| (*current, effect));
        let rollout = if kind == control_plane_kind && !kind.is_empty() {
            control_plane(desired, applied, plan)
        } else if kind == "MachineDeployment" {
            let topology = labels[TOPOLOGY_DEPLOYMENT_NAME_LABEL]
                .as_str()
                .unwrap_or_default();
            worker(
                desired,
                applied,
                topology,
                plan,
                &plan.machine_deployments_pending,
            )
        } else if kind == "MachinePool" {
            let topology = labels[TOPOLOGY_POOL_NAME_LABEL].as_str().unwrap_or_default();
            worker(desired, applied, topology, plan, &plan.machine_pools_pending)
        } else {
            continue;
        };
        out.push(rollout);
    }
    out
}

/// A stored object and what the controller's apply does to it.
type Applied<'a> = Option<(&'a Value, &'a ApplyEffect)>;

/// `spec.X` of `object` as text, at the first of `pointers` that is set.
fn field<'a>(object: &'a Value, pointers: &[&str]) -> Option<&'a str> {
    pointers
        .iter()
        .find_map(|p| object.pointer(p).and_then(Value::as_str))
}

/// "`what` a -> b" when the field differs between the stored object and the object as the
/// apply leaves it (`rollout.after` only when set: its removal rolls nothing).
fn moved(what: &str, (current, effect): (&Value, &ApplyEffect), pointers: &[&str]) -> Option<String> {
    let (from, to) = (field(current, pointers), field(&effect.after, pointers));
    let rolls = from != to && (to.is_some() || what != "rollout.after");
    rolls.then(|| format!("{what} {} -> {}", from.unwrap_or("none"), to.unwrap_or("none")))
}

fn control_plane(desired: &Value, applied: Applied<'_>, plan: &UpgradePlan) -> Rollout {
    const VERSION: &[&str] = &["/spec/version"];
    const TEMPLATE: &[&str] = &[
        "/spec/machineTemplate/spec/infrastructureRef/name",
        "/spec/machineTemplate/infrastructureRef/name",
    ];
    const AFTER: &[&str] = &["/spec/rollout/after", "/spec/rolloutAfter"];
    let mut because = Vec::new();
    let mut provider_decides = Vec::new();
    if let Some(applied) = applied {
        because.extend(moved("version", applied, VERSION));
        because.extend(moved("machine template", applied, TEMPLATE));
        because.extend(moved("rollout.after", applied, AFTER));
        let effect = applied.1;
        let fields = effect.changed.iter().chain(&effect.removed);
        let named = |path: &str| {
            [VERSION, TEMPLATE, AFTER]
                .iter()
                .flat_map(|p| p.iter())
                .any(|p| p.trim_start_matches('/').replace('/', ".") == path)
        };
        provider_decides = fields
            .map(|f| f.path.clone())
            .filter(|p| p.starts_with("spec.") && !named(p))
            .collect();
    }
    let held = plan.control_plane_pending.then(|| {
        format!(
            "the upgrade to {} waits: {}",
            plan.target,
            super::upgrade_report::waits_for(plan).unwrap_or_else(|| {
                format!(
                    "the MachineDeployments and MachinePools take {} first",
                    plan.control_plane_version
                )
            })
        )
    });
    Rollout {
        what: describe(desired),
        upgrade_step: only_the_version(&because),
        because,
        provider_decides,
        held,
        created: applied.is_none(),
    }
}

fn worker(
    desired: &Value,
    applied: Applied<'_>,
    topology: &str,
    plan: &UpgradePlan,
    pending: &super::upgrade::WorkersPending,
) -> Rollout {
    let template = |part: &str| format!("/spec/template/spec/{part}");
    let mut because = Vec::new();
    if let Some(applied) = applied {
        for (what, pointer) in [
            ("version", template("version")),
            ("infrastructure template", template("infrastructureRef/name")),
            ("bootstrap template", template("bootstrap/configRef/name")),
            ("failure domain", template("failureDomain")),
            ("rollout.after", "/spec/rollout/after".to_owned()),
        ] {
            because.extend(moved(what, applied, &[pointer.as_str()]));
        }
    }
    let name = desired["metadata"]["name"].as_str().unwrap_or_default();
    let waits = || {
        if plan.control_plane_starting {
            format!("the control plane upgrades to {} first", plan.target)
        } else {
            plan.control_plane
                .describe()
                .unwrap_or_else(|| "other workers roll out first (upgrade concurrency)".to_owned())
        }
    };
    let held = if pending.upgrade.iter().any(|n| n == name) {
        Some(format!("the upgrade to {} waits: {}", plan.target, waits()))
    } else if pending.deferred.iter().any(|n| n == name) {
        Some(format!(
            "the upgrade to {} is deferred by the defer-upgrade or hold-upgrade-sequence annotation",
            plan.target
        ))
    } else {
        None
    };
    Rollout {
        what: format!("{} ({topology})", describe(desired)),
        upgrade_step: only_the_version(&because),
        because,
        provider_decides: Vec::new(),
        held,
        created: applied.is_none(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::topology::upgrade::{ControlPlanePhase, WorkersPending};
    use crate::topology::upgrade_hooks::HookEffects;
    use crate::topology::upgrade_steps::UpgradeSteps;

    fn plan() -> UpgradePlan {
        UpgradePlan {
            target: "v1.32.0".to_owned(),
            control_plane_version: "v1.32.0".to_owned(),
            control_plane: ControlPlanePhase::Stable,
            control_plane_pending: false,
            control_plane_starting: true,
            machine_deployments: Vec::new(),
            machine_deployments_pending: WorkersPending {
                upgrade: vec!["dev-md-0-x7k2p".to_owned()],
                ..WorkersPending::default()
            },
            machine_pools: Vec::new(),
            machine_pools_pending: WorkersPending::default(),
            steps: UpgradeSteps::default(),
            upgrade_step: None,
            outline: None,
        }
    }

    /// A reconciliation of `objects` (desired, stored) under [`plan`].
    fn work(objects: Vec<(Value, Option<Value>)>) -> Reconciliation {
        Reconciliation {
            objects,
            cluster_refs: None,
            deletions: Vec::new(),
            upgrade: plan(),
            hooks: HookEffects::default(),
            requeue_after_seconds: None,
        }
    }

    #[test]
    fn the_control_plane_rolls_and_the_workers_wait_for_it() {
        let cp = |version: &str, template: &str| {
            json!({"kind": "KubeadmControlPlane", "metadata": {"name": "dev-abcde", "namespace": "ns"},
                "spec": {"version": version, "replicas": 1,
                    "machineTemplate": {"spec": {"infrastructureRef": {"name": template}}}}})
        };
        let md = json!({"kind": "MachineDeployment",
            "metadata": {"name": "dev-md-0-x7k2p", "namespace": "ns",
                "labels": {TOPOLOGY_DEPLOYMENT_NAME_LABEL: "md-0"}},
            "spec": {"template": {"spec": {"version": "v1.31.2"}}}});
        let work = work(vec![
            (cp("v1.32.0", "dev-new"), Some(cp("v1.31.2", "dev-old"))),
            (md.clone(), Some(md)),
        ]);
        let rollouts = rollouts(&work, "KubeadmControlPlane");
        assert_eq!(
            rollouts[0].because,
            [
                "version v1.31.2 -> v1.32.0",
                "machine template dev-old -> dev-new"
            ]
        );
        assert!(rollouts[0].provider_decides.is_empty(), "{:?}", rollouts[0]);
        assert_eq!(rollouts[1].what, "MachineDeployment ns/dev-md-0-x7k2p (md-0)");
        assert!(rollouts[1].because.is_empty());
        assert_eq!(
            rollouts[1].held.as_deref(),
            Some("the upgrade to v1.32.0 waits: the control plane upgrades to v1.32.0 first")
        );
        let changes = changes(&work, &Value::Null);
        assert_eq!(
            changes.len(),
            1,
            "the unchanged MachineDeployment is left out: {changes:?}"
        );
        let Change::Changed(what, fields) = &changes[0] else {
            panic!("{changes:?}")
        };
        assert_eq!(what, "KubeadmControlPlane ns/dev-abcde");
        let paths: Vec<&str> = fields.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["spec.version", "spec.machineTemplate.spec.infrastructureRef.name"]
        );
    }

    #[test]
    fn a_version_move_alone_is_an_upgrade_step() {
        let md = |version: &str, bootstrap: &str| {
            json!({"kind": "MachineDeployment",
                "metadata": {"name": "dev-md-0-x7k2p", "namespace": "ns",
                    "labels": {TOPOLOGY_DEPLOYMENT_NAME_LABEL: "md-0"}},
                "spec": {"template": {"spec": {"version": version,
                    "bootstrap": {"configRef": {"name": bootstrap}}}}}})
        };
        let rollouts_of = |desired: Value, current: Value| {
            let work = work(vec![(desired, Some(current))]);
            rollouts(&work, "KubeadmControlPlane")
        };
        let upgrade = rollouts_of(md("v1.32.0", "b"), md("v1.31.2", "b"));
        assert_eq!(upgrade[0].because, ["version v1.31.2 -> v1.32.0"]);
        assert!(upgrade[0].upgrade_step, "{upgrade:?}");
        let rotation = rollouts_of(md("v1.32.0", "new"), md("v1.31.2", "old"));
        assert_eq!(rotation[0].because.len(), 2, "{rotation:?}");
        assert!(
            !rotation[0].upgrade_step,
            "a template rotation is no upgrade step"
        );
        let unchanged = rollouts_of(md("v1.31.2", "b"), md("v1.31.2", "b"));
        assert!(!unchanged[0].upgrade_step);
    }

    #[test]
    fn fields_others_added_are_no_change() {
        let desired = json!({"kind": "X", "metadata": {"name": "x"}, "spec": {"a": 1}});
        let current = json!({"kind": "X", "metadata": {"name": "x", "uid": "u"}, "spec": {"a": 1.0, "b": 2}});
        let work = work(vec![(desired, Some(current))]);
        assert!(changes(&work, &Value::Null).is_empty());
    }

    #[test]
    fn the_cluster_shows_only_the_references_and_labels_that_change() {
        let reference = json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": "dev-abcde"});
        let refs = json!({"kind": "Cluster", "metadata": {"name": "dev", "namespace": "ns",
                "labels": {CLUSTER_NAME_LABEL: "dev", TOPOLOGY_OWNED_LABEL: ""}},
            "spec": {"infrastructureRef": reference, "controlPlaneRef": null}});
        let cluster = json!({"kind": "Cluster", "metadata": {"name": "dev", "namespace": "ns",
                "labels": {CLUSTER_NAME_LABEL: "dev"}},
            "spec": {"infrastructureRef": reference}});
        let work = Reconciliation {
            cluster_refs: Some(refs),
            ..work(Vec::new())
        };
        let changes = changes(&work, &cluster);
        let [Change::Changed(what, fields)] = changes.as_slice() else {
            panic!("{changes:?}")
        };
        assert_eq!(what, "Cluster ns/dev");
        let lines: Vec<String> = fields
            .iter()
            .map(|f| format!("{}: {} -> {}", f.path, f.from, f.to))
            .collect();
        assert_eq!(
            lines,
            [format!("metadata.labels.{TOPOLOGY_OWNED_LABEL}: null -> \"\"")]
        );
    }
}
