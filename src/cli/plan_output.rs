//! One Cluster's plan as `plan` prints it, and its `-o diff` rendering: shared by the plan from
//! files, the plan against the current state and the fleet plan.

use serde_json::Value;

use crate::topology::diff::{diff, Change};
use crate::topology::upgrade_outline::Outline;

/// One Cluster's plan as printed.
pub(super) struct Planned {
    /// The current objects owned by the Cluster.
    pub(super) current: Vec<Value>,
    /// The desired objects, the Cluster first.
    pub(super) desired: Vec<Value>,
    /// What of the upgrade still waits, and for what (reason: message).
    pub(super) held: Option<String>,
    /// The whole upgrade ahead, step by step, when the version changes.
    pub(super) upgrade: Option<Outline>,
    /// The `-o diff` lines, when made against the current state (else from `current`).
    pub(super) report: Option<String>,
    /// Against the current state: each control plane or worker pool whose Machines would roll
    /// or be created, and why (the upgrade's own steps apart).
    pub(super) machine_rolls: Vec<String>,
    /// Against the current state: each control plane or worker pool whose Machines would roll
    /// for the version alone, a step of the upgrade the Cluster declares.
    pub(super) upgrade_rolls: Vec<String>,
}

/// Appends one Cluster's `-o diff` to `out`: its upgrade plan, then each change, rollout and hold.
pub(super) fn render_diff(out: &mut String, namespace: &str, name: &str, planned: &Planned) {
    out.push_str(&format!("Cluster {namespace}/{name}:\n"));
    if let Some(upgrade) = &planned.upgrade {
        out.push_str(&upgrade.text("  "));
    }
    if let Some(report) = &planned.report {
        render_report(out, report, planned.held.as_deref());
        return;
    }
    // The Cluster is compared only for its references.
    let changes = diff(&planned.current, planned.desired.get(1..).unwrap_or_default());
    if changes.is_empty() && planned.held.is_none() {
        out.push_str("  no changes\n");
    }
    for change in changes {
        match change {
            Change::Created(what) => out.push_str(&format!("  + created {what}\n")),
            Change::Deleted(what) => out.push_str(&format!("  - deleted {what}\n")),
            Change::Changed(what, fields) => {
                out.push_str(&format!("  ~ changed {what}\n"));
                for field in fields {
                    out.push_str(&format!("      {}: {} -> {}\n", field.path, field.from, field.to));
                }
            }
        }
    }
    if let Some(line) = &planned.held {
        out.push_str(&format!("  = held {line}\n"));
    }
}

/// The `-o diff` of a plan against the current state: its change and rollout lines, then what is
/// held.
fn render_report(out: &mut String, report: &str, held: Option<&str>) {
    if !report.contains("  + ") && !report.contains("  ~ ") && !report.contains("  - ") && held.is_none() {
        out.push_str("  no changes\n");
    }
    out.push_str(report);
    if let Some(line) = held {
        out.push_str(&format!("  = held {line}\n"));
    }
}
