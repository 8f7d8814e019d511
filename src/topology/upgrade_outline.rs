//! The whole upgrade ahead of a Cluster, step by step, before it starts (beyond Cluster API, which
//! shows only the step in progress): for each step the control plane's version, the worker pools
//! that move, the lifecycle hooks called, and what holds pools back. `capi-topology plan` prints
//! it; the `TopologyReconciled` condition carries the same text while the upgrade runs.

use serde::Serialize;

use super::hooks::LifecycleHook;
use super::upgrade_steps::UpgradeSteps;

/// One worker pool as the outline reads it.
#[derive(Debug, Clone, Copy)]
pub struct Pool<'a> {
    /// `MachineDeployment` or `MachinePool`.
    pub kind: &'a str,
    /// The object's name.
    pub name: &'a str,
    /// The version it runs.
    pub version: &'a str,
    /// Whether the defer-upgrade or hold-upgrade-sequence annotation holds it.
    pub deferred: bool,
}

/// One step of the upgrade.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// The control plane's version at this step (`None`: the workers catch up first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<String>,
    /// The version the workers move to at this step, when they move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers_version: Option<String>,
    /// The pools that move ("Kind name").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<String>,
    /// The lifecycle hooks called, in order.
    pub hooks: Vec<String>,
    /// What holds pools back at this step.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<String>,
}

/// The upgrade ahead of one Cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outline {
    /// The control plane's version now.
    pub from: String,
    /// `spec.topology.version`.
    pub to: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// The outline of `steps` from a control plane at `control_plane` with `pools`; `None` when no
/// step is ahead.
pub fn outline(
    target: &str,
    control_plane: &str,
    steps: &UpgradeSteps,
    pools: &[Pool<'_>],
) -> Option<Outline> {
    if steps.is_empty() {
        return None;
    }
    let mut out = Outline {
        from: control_plane.to_owned(),
        to: target.to_owned(),
        steps: Vec::new(),
    };
    let mut first = true;
    let mut pool_versions: Vec<String> = pools.iter().map(|p| p.version.to_owned()).collect();
    // Workers catching up to the control plane before it moves.
    if steps.workers.first().is_some_and(|v| v == control_plane) {
        let mut step = Step::default();
        add_workers(&mut step, control_plane, pools, &mut pool_versions);
        out.steps.push(step);
    }
    for version in &steps.control_plane {
        let mut step = Step {
            control_plane: Some(version.clone()),
            ..Step::default()
        };
        if first {
            step.hooks
                .push(LifecycleHook::BeforeClusterUpgrade.name().to_owned());
            first = false;
        }
        step.hooks
            .push(LifecycleHook::BeforeControlPlaneUpgrade.name().to_owned());
        step.hooks
            .push(LifecycleHook::AfterControlPlaneUpgrade.name().to_owned());
        if steps.workers.contains(version) {
            add_workers(&mut step, version, pools, &mut pool_versions);
        }
        out.steps.push(step);
    }
    if let Some(last) = out.steps.last_mut() {
        last.hooks
            .push(LifecycleHook::AfterClusterUpgrade.name().to_owned());
    }
    Some(out)
}

/// Adds to `step` the workers' move to `version`: the pools not there yet move unless deferred.
fn add_workers(step: &mut Step, version: &str, pools: &[Pool<'_>], pool_versions: &mut [String]) {
    step.workers_version = Some(version.to_owned());
    step.hooks
        .push(LifecycleHook::BeforeWorkersUpgrade.name().to_owned());
    for (pool, current) in pools.iter().zip(pool_versions.iter_mut()) {
        if current == version {
            continue;
        }
        if pool.deferred {
            step.held.push(format!(
                "{} {} (defer-upgrade or hold-upgrade-sequence annotation)",
                pool.kind, pool.name
            ));
        } else {
            step.workers.push(format!("{} {}", pool.kind, pool.name));
            version.clone_into(current);
        }
    }
    step.hooks
        .push(LifecycleHook::AfterWorkersUpgrade.name().to_owned());
}

impl Outline {
    /// The outline as text, one line per step, each indented by `indent`.
    pub fn text(&self, indent: &str) -> String {
        let mut out = format!("{indent}upgrade {} -> {}\n", self.from, self.to);
        for (i, step) in self.steps.iter().enumerate() {
            let mut parts = Vec::new();
            if let Some(version) = &step.control_plane {
                parts.push(format!("control plane -> {version}"));
            }
            match (&step.workers_version, step.workers.is_empty()) {
                (Some(version), false) => parts.push(format!("{} -> {version}", step.workers.join(", "))),
                (Some(version), true) => parts.push(format!("no worker pool moves to {version}")),
                (None, _) => parts.push("workers stay".to_owned()),
            }
            parts.push(format!("hooks {}", step.hooks.join(", ")));
            out.push_str(&format!("{indent}  step {}: {}\n", i + 1, parts.join("; ")));
            for held in &step.held {
                out.push_str(&format!("{indent}    held: {held}\n"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_three_minor_upgrade_is_outlined_step_by_step() {
        let steps = UpgradeSteps {
            control_plane: vec!["v1.31.0".into(), "v1.32.0".into(), "v1.33.0".into()],
            workers: vec!["v1.33.0".into()],
        };
        let pools = [
            Pool {
                kind: "MachineDeployment",
                name: "c1-md-0",
                version: "v1.30.0",
                deferred: false,
            },
            Pool {
                kind: "MachinePool",
                name: "c1-mp-0",
                version: "v1.30.0",
                deferred: true,
            },
        ];
        let three = outline("v1.33.0", "v1.30.0", &steps, &pools).unwrap();
        assert_eq!(three.steps.len(), 3);
        assert_eq!(
            three.text(""),
            "upgrade v1.30.0 -> v1.33.0\n  \
             step 1: control plane -> v1.31.0; workers stay; hooks BeforeClusterUpgrade, BeforeControlPlaneUpgrade, AfterControlPlaneUpgrade\n  \
             step 2: control plane -> v1.32.0; workers stay; hooks BeforeControlPlaneUpgrade, AfterControlPlaneUpgrade\n  \
             step 3: control plane -> v1.33.0; MachineDeployment c1-md-0 -> v1.33.0; hooks BeforeControlPlaneUpgrade, AfterControlPlaneUpgrade, BeforeWorkersUpgrade, AfterWorkersUpgrade, AfterClusterUpgrade\n    \
             held: MachinePool c1-mp-0 (defer-upgrade or hold-upgrade-sequence annotation)\n"
        );
        assert_eq!(
            outline("v1.30.0", "v1.30.0", &UpgradeSteps::default(), &pools),
            None
        );
    }

    #[test]
    fn workers_behind_the_control_plane_catch_up_first() {
        let steps = UpgradeSteps {
            control_plane: vec!["v1.34.0".into()],
            workers: vec!["v1.33.0".into(), "v1.34.0".into()],
        };
        let pools = [Pool {
            kind: "MachineDeployment",
            name: "md",
            version: "v1.30.0",
            deferred: false,
        }];
        let caught_up = outline("v1.34.0", "v1.33.0", &steps, &pools).unwrap();
        assert_eq!(caught_up.steps[0].control_plane, None);
        assert_eq!(caught_up.steps[0].workers, ["MachineDeployment md"]);
        assert_eq!(caught_up.steps[1].workers, ["MachineDeployment md"]);
    }
}
