//! The entry point: from a compiled class, a Cluster and its current objects, the desired objects.

use serde_json::{json, Map, Value};

use super::blueprint::Blueprint;
use super::current::Current;
use super::desired::control_plane::{self, ControlPlaneInput};
use super::desired::{clone_template, contract_ref_to, health_checks};
use super::error::TopologyError;
use super::hooks::{LifecycleHooks, ProceedingHooks};
use super::plan_facts::{cluster_builtin, Facts};
use super::plan_items::{collect_items, current_machine_ref, patch_items, Collected};
use super::plan_upgrade::{self, Sequencing};
use super::plan_workers::{deployment_objects, pool_objects, Patched};
use super::template_names::clone_name;
use super::upgrade::UpgradePlan;
use super::upgrade_hooks::HookEffects;
use super::workers::{self, ResolvedDeployment, ResolvedPool};
use crate::api::labels::{
    CLUSTER_NAME_LABEL, MACHINE_CONTROL_PLANE_LABEL, TOPOLOGY_OWNED_LABEL, TOPOLOGY_UPGRADE_STEP_ANNOTATION,
};
use crate::api::Cluster;
use crate::patches::external::ExternalPatches;

/// The desired state of one Cluster's topology.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The Cluster with `spec.infrastructureRef` and `spec.controlPlaneRef` set, and the labels
    /// the topology puts on it (`cluster.x-k8s.io/cluster-name`, `topology.cluster.x-k8s.io/owned`).
    pub cluster: Value,
    /// Every desired object, in creation order: infrastructure cluster, control plane machine
    /// template, control plane, its health check, then per MachineDeployment its bootstrap and
    /// infrastructure templates, itself and its health check, then per MachinePool its bootstrap
    /// config, infrastructure machine pool and itself. Workers waiting to be created are left out.
    pub objects: Vec<Value>,
    /// How versions and rollouts are sequenced, and what still waits.
    pub upgrade: UpgradePlan,
    /// What the upgrade's lifecycle hook calls left (hooks to mark pending or done, holds).
    pub hooks: HookEffects,
}

/// Computes the desired objects of `cluster` (already defaulted and validated) from `blueprint`,
/// reading `current` for names to keep, templates to reuse and version sequencing. Pure.
///
/// In steps: what the Cluster says (`Facts`), its workers and the upgrade's sequencing, the
/// builtin variables, the patch items (one per template, with its scope's variables), the
/// patching (settling generated template names when patches read them), then the objects.
pub fn plan(
    blueprint: &Blueprint,
    cluster: &Cluster,
    current: &Current,
    external: &dyn ExternalPatches,
) -> Result<Plan, TopologyError> {
    plan_with_hooks(blueprint, cluster, current, external, &ProceedingHooks::NONE)
}

/// [`plan`], calling the upgrade's lifecycle hooks (and a GenerateUpgradePlan extension) through
/// `hooks`.
pub fn plan_with_hooks(
    blueprint: &Blueprint,
    cluster: &Cluster,
    current: &Current,
    external: &dyn ExternalPatches,
    hooks: &dyn LifecycleHooks,
) -> Result<Plan, TopologyError> {
    let facts = Facts::read(blueprint, cluster, current)?;
    let workers_topology = &facts.topology.workers;
    let class = &blueprint.class;
    let deployments = workers::resolve(
        class,
        &workers_topology.machine_deployments,
        current,
        &facts.cluster_name,
    )?;
    let pools = workers::resolve(
        class,
        &workers_topology.machine_pools,
        current,
        &facts.cluster_name,
    )?;
    let (upgrade, hook_effects) = sequence(&facts, blueprint, cluster, current, &deployments, &pools, hooks)?;
    let base = cluster_builtin(&facts, cluster);
    let mut collected = collect_items(&facts, blueprint, &base, &upgrade, deployments, pools);
    let settled = patch_items(&facts, blueprint, current, &base, &mut collected, external)?;
    let (cluster_object, objects) =
        assemble(&facts, blueprint, cluster, current, &upgrade, collected, settled);
    Ok(Plan {
        cluster: cluster_object,
        objects,
        upgrade,
        hooks: hook_effects,
    })
}

/// How versions and rollouts are sequenced between the control plane and the workers.
fn sequence(
    facts: &Facts<'_>,
    blueprint: &Blueprint,
    cluster: &Cluster,
    current: &Current,
    deployments: &[ResolvedDeployment<'_>],
    pools: &[ResolvedPool<'_>],
    hooks: &dyn LifecycleHooks,
) -> Result<(UpgradePlan, HookEffects), TopologyError> {
    let input = Sequencing {
        cluster,
        target: facts.topology.version.as_str(),
        rollout_after: facts.rollout_after.as_deref(),
        control_plane: facts.current_cp,
        current,
        machine_deployments: deployments
            .iter()
            .map(|md| workers::deployment_worker(md, current))
            .collect(),
        machine_pools: pools
            .iter()
            .map(|mp| workers::pool_worker(mp, current, &facts.cluster_name))
            .collect(),
    };
    plan_upgrade::sequence(&blueprint.class, &input, hooks)
}

/// Records the upgrade step in progress on the desired Cluster (removes it when none runs).
fn set_upgrade_step(cluster: &mut Value, step: Option<&str>) {
    let Some(metadata) = cluster.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
    if let Some(map) = annotations.as_object_mut() {
        map.remove(TOPOLOGY_UPGRADE_STEP_ANNOTATION);
        if let Some(step) = step {
            map.insert(TOPOLOGY_UPGRADE_STEP_ANNOTATION.to_owned(), json!(step));
        }
        if map.is_empty() {
            metadata.remove("annotations");
        }
    }
}

/// The Cluster with its references set, and the desired objects built from the patched
/// templates (each taken, not copied, by the object built from it).
fn assemble(
    facts: &Facts<'_>,
    blueprint: &Blueprint,
    cluster: &Cluster,
    current: &Current,
    upgrade: &UpgradePlan,
    collected: Collected<'_>,
    settled: Vec<Option<String>>,
) -> (Value, Vec<Value>) {
    let (cluster_name, namespace) = (&facts.cluster_name, &facts.namespace);
    let mut patched: Vec<Option<Patched>> = collected
        .items
        .into_iter()
        .zip(settled.into_iter().chain(std::iter::repeat(None)))
        .map(|(item, name)| Some((item.object, name)))
        .collect();
    let mut take = |index: Option<usize>| index.and_then(|i| patched.get_mut(i)).and_then(Option::take);
    let mut objects = Vec::new();
    let mut cluster_object = serde_json::to_value(cluster).unwrap_or_else(|_| json!({}));
    set_topology_labels(&mut cluster_object, cluster_name);
    set_upgrade_step(&mut cluster_object, upgrade.upgrade_step.as_deref());
    if let Some((template, _)) = take(collected.infra_item) {
        let infra = clone_template(template, &facts.infra_name, namespace, cluster_name, true);
        cluster_object["spec"]["infrastructureRef"] = contract_ref_to(&infra);
        objects.push(infra);
    }
    let current_machine_ref = current_machine_ref(facts);
    let machine = take(collected.cp_machine_item).map(|(template, settled)| {
        let name = settled
            .unwrap_or_else(|| clone_name(current, current_machine_ref, cluster_name, &template["spec"]));
        clone_template(template, &name, namespace, cluster_name, false)
    });
    if let Some((template, _)) = take(collected.cp_item) {
        add_control_plane(
            facts,
            blueprint,
            upgrade,
            (template, machine),
            &mut cluster_object,
            &mut objects,
        );
    }
    for planned in &collected.deployments {
        objects.extend(deployment_objects(
            planned,
            &mut take,
            current,
            namespace,
            cluster_name,
        ));
    }
    for planned in &collected.pools {
        objects.extend(pool_objects(planned, &mut take, namespace, cluster_name));
    }
    (cluster_object, objects)
}

/// Adds the control plane built from its patched `template` to `objects` (after its machines'
/// infrastructure template, before its MachineHealthCheck) and references it from the Cluster.
fn add_control_plane(
    facts: &Facts<'_>,
    blueprint: &Blueprint,
    upgrade: &UpgradePlan,
    (template, machine): (Value, Option<Value>),
    cluster_object: &mut Value,
    objects: &mut Vec<Value>,
) {
    let class = &blueprint.class;
    let topology = facts.topology;
    let (cluster_name, namespace) = (&facts.cluster_name, &facts.namespace);
    let cp = control_plane::desired(&ControlPlaneInput {
        template: &template,
        unpatched: blueprint
            .template(&class.spec.control_plane.template_ref)
            .unwrap_or(&Value::Null),
        name: &facts.cp_name,
        namespace,
        cluster: cluster_name,
        version: upgrade.control_plane_version.as_str(),
        rollout_after: facts.rollout_after.as_deref(),
        v1beta1_contract: blueprint.control_plane_is_v1beta1(),
        class: &class.spec.control_plane,
        topology: &topology.control_plane,
        machine_infrastructure: machine.as_ref(),
    });
    cluster_object["spec"]["controlPlaneRef"] = contract_ref_to(&cp);
    // As Cluster API, the control plane is health checked only when it has machines of its own.
    let check = machine.as_ref().and_then(|_| {
        health_checks::effective(
            &class.spec.control_plane.health_check,
            &topology.control_plane.health_check,
        )
    });
    objects.extend(machine);
    objects.push(cp);
    if let Some(check) = check {
        let selector = Map::from_iter([
            (MACHINE_CONTROL_PLANE_LABEL.to_owned(), json!("")),
            (TOPOLOGY_OWNED_LABEL.to_owned(), json!("")),
        ]);
        objects.push(health_checks::desired(
            &facts.cp_name,
            namespace,
            cluster_name,
            selector,
            &check,
        ));
    }
}

/// The labels Cluster API v1.14 sets on a Cluster with a managed topology (`computeCluster`): its
/// name and the topology-owned marker, over whatever it has.
fn set_topology_labels(cluster: &mut Value, name: &str) {
    let metadata = &mut cluster["metadata"];
    if !metadata["labels"].is_object() {
        metadata["labels"] = json!({});
    }
    metadata["labels"][CLUSTER_NAME_LABEL] = json!(name);
    metadata["labels"][TOPOLOGY_OWNED_LABEL] = json!("");
}
