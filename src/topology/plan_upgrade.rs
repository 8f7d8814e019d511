//! The plan's upgrade part: the steps ahead (from the class's `kubernetesVersions`, its
//! GenerateUpgradePlan extension, or one minor), then the sequencing of the control plane and the
//! workers with the lifecycle hooks called on the way.

use serde_json::Value;

use super::current::Current;
use super::error::TopologyError;
use super::hooks::LifecycleHooks;
use super::upgrade::{concurrency, Inputs, UpgradePlan, Worker};
use super::upgrade_hooks::{HookEffects, HookRunner, RequestCluster};
use super::upgrade_outline::{outline, Pool};
use super::upgrade_steps::{self, UpgradeSteps};
use crate::api::labels::{TOPOLOGY_DEFER_UPGRADE_ANNOTATION, TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION};
use crate::api::runtime::GenerateUpgradePlanRequest;
use crate::api::{Cluster, ClusterClass};

/// The API version of the GenerateUpgradePlan request.
const HOOKS_API_VERSION: &str = "hooks.runtime.cluster.x-k8s.io/v1alpha1";

/// What sequencing reads besides the class.
pub struct Sequencing<'a> {
    /// The Cluster (its annotations, its namespace).
    pub cluster: &'a Cluster,
    /// The topology's version.
    pub target: &'a str,
    /// The topology's `rolloutAfter`, when set.
    pub rollout_after: Option<&'a str>,
    /// The current control plane, when it exists.
    pub control_plane: Option<&'a Value>,
    /// The current objects.
    pub current: &'a Current,
    /// MachineDeployments, in topology order.
    pub machine_deployments: Vec<Worker<'a>>,
    /// MachinePools, in topology order.
    pub machine_pools: Vec<Worker<'a>>,
}

/// The steps ahead of the Cluster: none before the control plane exists or once everything runs
/// the target; else computed from the class and checked as Cluster API v1.14 does (the Cluster's
/// JSON, from `cluster_json`, only made for a GenerateUpgradePlan request).
pub fn steps(
    class: &ClusterClass,
    input: &Sequencing<'_>,
    cluster_json: &dyn Fn() -> Value,
    hooks: &dyn LifecycleHooks,
) -> Result<(UpgradeSteps, Option<String>), TopologyError> {
    let invalid = |reason: String| TopologyError::UpgradePlan { reason };
    let Some(control_plane) = input.control_plane else {
        return Ok((UpgradeSteps::default(), None));
    };
    let cp_version = control_plane["spec"]["version"].as_str().unwrap_or_default();
    if cp_version.is_empty() {
        return Ok((UpgradeSteps::default(), None));
    }
    let worker_versions = input
        .machine_deployments
        .iter()
        .chain(&input.machine_pools)
        .filter_map(|w| w.current.map(|c| c.version));
    let min_workers = upgrade_steps::min_workers_version(cp_version, worker_versions).map_err(invalid)?;
    let parse =
        |v: &str| upgrade_steps::parse(v).ok_or_else(|| invalid(format!("failed to parse version {v}")));
    let (target, cp) = (parse(input.target)?, parse(cp_version)?);
    let workers_there = min_workers
        .as_deref()
        .map(parse)
        .transpose()?
        .is_none_or(|min| min == target);
    if cp == target && workers_there {
        return Ok((UpgradeSteps::default(), min_workers));
    }
    let extension = &class.spec.upgrade.external.generate_upgrade_plan_extension;
    let (cp_steps, worker_steps) = if !extension.is_empty() {
        let namespace = input.cluster.metadata.namespace.as_deref().unwrap_or("default");
        let request = GenerateUpgradePlanRequest {
            api_version: HOOKS_API_VERSION.to_owned(),
            kind: "GenerateUpgradePlanRequest".to_owned(),
            settings: Default::default(),
            cluster: cluster_json(),
            from_control_plane_kubernetes_version: cp_version.to_owned(),
            from_workers_kubernetes_version: min_workers.clone().unwrap_or_default(),
            to_kubernetes_version: input.target.to_owned(),
        };
        let answer = hooks
            .generate_upgrade_plan(extension, namespace, &request)
            .map_err(|reason| invalid(format!("failed to get upgrade plan from extension: {reason}")))?;
        let versions =
            |steps: Vec<crate::api::runtime::UpgradeStep>| steps.into_iter().map(|s| s.version).collect();
        (
            versions(answer.control_plane_upgrades),
            versions(answer.workers_upgrades),
        )
    } else if !class.spec.kubernetes_versions.is_empty() {
        let listed =
            upgrade_steps::from_class_versions(&class.spec.kubernetes_versions, input.target, cp_version)
                .map_err(invalid)?;
        (listed, Vec::new())
    } else {
        (
            upgrade_steps::one_minor(input.target, cp_version).map_err(invalid)?,
            Vec::new(),
        )
    };
    let steps = upgrade_steps::default_and_validate(
        input.target,
        cp_version,
        min_workers.as_deref(),
        cp_steps,
        worker_steps,
    )
    .map_err(invalid)?;
    Ok((steps, min_workers))
}

/// Sequences the upgrade of one Cluster: the steps, then each object's version, with the hook
/// calls' effects.
pub fn sequence<'a>(
    class: &ClusterClass,
    input: &'a Sequencing<'a>,
    hooks: &dyn LifecycleHooks,
) -> Result<(UpgradePlan, HookEffects), TopologyError> {
    let namespace = input.cluster.metadata.namespace.as_deref().unwrap_or("default");
    // The Cluster's JSON is made only if a request carries it.
    let mut runner = HookRunner::new(hooks, namespace, RequestCluster::of(input.cluster));
    let (steps, min_workers) = steps(class, input, &|| runner.cluster().clone(), hooks)?;
    let mut plan = UpgradePlan::decide(
        &Inputs {
            target: input.target,
            rollout_after: input.rollout_after,
            control_plane: input.control_plane,
            control_plane_machines: &input.current.control_plane_machines(),
            machine_deployments: &input.machine_deployments,
            machine_pools: &input.machine_pools,
            concurrency: concurrency(input.cluster.metadata.annotations.as_ref()),
            steps: &steps,
            min_workers_version: min_workers.as_deref(),
        },
        &mut runner,
    );
    let cp_version = input
        .control_plane
        .and_then(|cp| cp["spec"]["version"].as_str())
        .unwrap_or_default();
    let pools = |kind: &'a str, workers: &'a [Worker<'a>]| {
        let mut held = false;
        workers.iter().filter_map(move |w| {
            held |= w
                .annotations
                .contains_key(TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION);
            let current = w.current?;
            Some(Pool {
                kind,
                name: current.name,
                version: current.version,
                deferred: held || w.annotations.contains_key(TOPOLOGY_DEFER_UPGRADE_ANNOTATION),
            })
        })
    };
    let all: Vec<Pool<'_>> = pools("MachineDeployment", &input.machine_deployments)
        .chain(pools("MachinePool", &input.machine_pools))
        .collect();
    plan.outline = outline(input.target, cp_version, &steps, &all);
    if let Some((hook, reason)) = runner.effects.failed.clone() {
        return Err(TopologyError::LifecycleHook {
            hook: hook.name().to_owned(),
            reason,
        });
    }
    Ok((plan, runner.effects))
}
