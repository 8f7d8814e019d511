//! `plan --current`/`--kubeconfig`: one Cluster planned as the topology controller would plan it
//! against the current state (its objects found by the Cluster's references and the topology
//! labels, their names kept), and what that does to the running Cluster: the changes the
//! controller would write and, per control plane and worker pool, whether Machines roll and what
//! holds them.

use anyhow::{Context, Result};
use serde_json::Value;

use super::extensions::OfflineHooks;
use super::plan_output::Planned;
use crate::api::Cluster;
use crate::decode::decode_value;
use crate::rollout::pin::pin_of;
use crate::rollout::source::PreparedRevision;
use crate::runtime::RuntimeExtensions;
use crate::store::{MemoryStore, ObjectSource};
use crate::topology::diff::Change;
use crate::topology::hooks::ProceedingHooks;
use crate::topology::reconcile::reconcile;
use crate::topology::upgrade_report::pending;
use crate::topology::what_changes::{changes, rollouts, Rollout};

/// Which class content a Cluster is planned at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// The revision it runs under its class's ClusterClassRollout, as the controller computes it
    /// (the class itself when no rollout policy governs it).
    Pinned,
    /// The class as it is in the files: what the Cluster gets when its wave comes.
    Class,
}

/// The plan of Cluster `namespace/name` of `store` as the controller would carry it out.
pub fn plan_against_current(
    store: &MemoryStore,
    namespace: &str,
    name: &str,
    extensions: &RuntimeExtensions,
    at: At,
) -> Result<Planned> {
    let object = store
        .get("cluster.x-k8s.io", "Cluster", namespace, name)
        .context("Cluster not stored")?;
    let cluster: Cluster =
        decode_value((*object).clone()).map_err(|err| anyhow::anyhow!("decoding the Cluster: {err}"))?;
    let pinned = if at == At::Pinned {
        pinned_revision(store, &cluster)?
    } else {
        None
    };
    let hooks = OfflineHooks {
        hooks: ProceedingHooks::ALL,
        extensions,
    };
    let work = match &pinned {
        Some(revision) => reconcile(&object, &cluster, &revision.over(store), extensions, &hooks),
        None => reconcile(&object, &cluster, store, extensions, &hooks),
    }
    .map_err(|blocked| {
        anyhow::anyhow!(
            "the topology is blocked ({}): {}",
            blocked.reason,
            blocked.message
        )
    })?;
    let control_plane_kind = work
        .cluster_refs
        .as_ref()
        .unwrap_or(&object)
        .pointer("/spec/controlPlaneRef/kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let held = pending(&work.upgrade, &work.hooks).map(|p| format!("{}: {}", p.reason, p.message));
    let mut report = String::new();
    for change in changes(&work, &object) {
        report.push_str(&line(&change));
    }
    let (mut machine_rolls, mut upgrade_rolls) = (Vec::new(), Vec::new());
    for rollout in rollouts(&work, &control_plane_kind) {
        report.push_str(&rollout_line(&rollout));
        if rollout.created {
            machine_rolls.push(format!("{}: created, with new Machines", rollout.what));
        } else if rollout.upgrade_step {
            upgrade_rolls.push(format!("{}: {}", rollout.what, rollout.because.join("; ")));
        } else if !rollout.because.is_empty() {
            machine_rolls.push(format!("{}: {}", rollout.what, rollout.because.join("; ")));
        }
    }
    let mut cluster_object = (*object).clone();
    if let Some(metadata) = cluster_object["metadata"].as_object_mut() {
        metadata.remove("managedFields");
    }
    if let Some(refs) = &work.cluster_refs {
        for key in ["infrastructureRef", "controlPlaneRef"] {
            cluster_object["spec"][key] = refs["spec"][key].clone();
        }
    }
    let mut desired = vec![cluster_object];
    desired.extend(work.objects.into_iter().map(|(object, _)| object));
    Ok(Planned {
        current: Vec::new(),
        desired,
        held,
        upgrade: work.upgrade.outline.clone(),
        report: Some(report),
        machine_rolls,
        upgrade_rolls,
    })
}

/// The revision `cluster` runs under its class's ClusterClassRollout in `store`, prepared;
/// `None` when it follows its class.
fn pinned_revision(store: &MemoryStore, cluster: &Cluster) -> Result<Option<PreparedRevision>> {
    let Some(pin) = pin_of(store, cluster) else {
        return Ok(None);
    };
    let revision = pin.revision(store).with_context(|| {
        format!(
            "ClusterClassRevision {}/{} is not in the current state",
            pin.namespace, pin.name
        )
    })?;
    Ok(Some(
        PreparedRevision::from_object(&revision).map_err(anyhow::Error::msg)?,
    ))
}

fn line(change: &Change) -> String {
    match change {
        Change::Created(what) => format!("  + created {what}\n"),
        Change::Deleted(what) => format!("  - deleted {what}\n"),
        Change::Changed(what, fields) => {
            let mut text = format!("  ~ changed {what}\n");
            for field in fields {
                // The controller's apply removes the field (it sets no field to null).
                let to = match &field.to {
                    Value::Null => "(removed)".to_owned(),
                    to => to.to_string(),
                };
                text.push_str(&format!("      {}: {} -> {to}\n", field.path, field.from));
            }
            text
        }
    }
}

fn rollout_line(rollout: &Rollout) -> String {
    let mut text = if rollout.created {
        format!("  * {}: created, with new Machines", rollout.what)
    } else if rollout.because.is_empty() {
        format!("  * {}: no Machine rolls", rollout.what)
    } else {
        format!(
            "  * {}: Machines roll ({})",
            rollout.what,
            rollout.because.join("; ")
        )
    };
    if !rollout.provider_decides.is_empty() {
        text.push_str(&format!(
            "; the provider decides whether {} roll them",
            rollout.provider_decides.join(", ")
        ));
    }
    if let Some(held) = &rollout.held {
        text.push_str(&format!("; held: {held}"));
    }
    text + "\n"
}
