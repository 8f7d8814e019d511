//! The entry point: from a compiled class, a Cluster and its current objects, the desired objects.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::blueprint::Blueprint;
use super::builtins::{self, merge};
use super::current::Current;
use super::desired::control_plane::{self, ControlPlaneInput};
use super::desired::{
    clone_template, contract_ref_to, health_checks, metadata_builtin, LAST_APPLIED_ANNOTATION,
};
use super::error::TopologyError;
use super::hooks::{LifecycleHooks, ProceedingHooks};
use super::names;
use super::plan_patches::apply_patches;
use super::plan_upgrade::{self, Sequencing};
use super::plan_workers::{
    deployment_objects, holder, pool_objects, Patched, Planned, Scope, WorkerScope, HOLDER_API_VERSION,
};
use super::template_names::{
    clone_name, name_current_clones, settle, NameSlot, NamedScope, CONTROL_PLANE_MACHINE,
};
use super::upgrade::UpgradePlan;
use super::upgrade_hooks::HookEffects;
use super::workers::{self, ResolvedDeployment, ResolvedPool};
use crate::api::convert::{CONVERSION_DATA, V1BETA1_FIELDS};
use crate::api::labels::{
    CLUSTER_NAME_LABEL, MACHINE_CONTROL_PLANE_LABEL, TOPOLOGY_OWNED_LABEL, TOPOLOGY_UPGRADE_STEP_ANNOTATION,
};
use crate::api::runtime::HolderReference;
use crate::api::{Cluster, ClusterVariable, ContractVersionedObjectReference, Topology};
use crate::patches::external::ExternalPatches;
use crate::patches::hook_requests::HookInputs;
use crate::patches::inline::PatchItem;
use crate::patches::selector::Role;

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
/// In steps: what the Cluster says ([`Facts`]), its workers and the upgrade's sequencing, the
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

/// What the plan reads from the Cluster and its current control plane.
struct Facts<'c> {
    cluster_name: String,
    namespace: String,
    topology: &'c Topology,
    /// The infrastructure cluster's name: the Cluster's reference, else from the naming strategy.
    infra_name: String,
    /// The control plane's name, likewise.
    cp_name: String,
    /// The control plane's kind (its template's without `Template`).
    cp_kind: String,
    /// The control plane as it is, if it exists.
    current_cp: Option<&'c Value>,
    /// The v1beta1 topology-wide `rolloutAfter` the Cluster was written with, if any
    /// (`Topology::v1beta1_rollout_after`); it is still sequenced (control plane first, then the workers) as before.
    rollout_after: Option<String>,
}

impl<'c> Facts<'c> {
    fn read(
        blueprint: &Blueprint,
        cluster: &'c Cluster,
        current: &'c Current,
    ) -> Result<Self, TopologyError> {
        let cluster_name = cluster.metadata.name.clone().unwrap_or_default();
        let namespace = cluster
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned());
        let topology = cluster
            .spec
            .managed_topology()
            .ok_or_else(|| TopologyError::NoTopology(cluster_name.clone()))?;
        let class = &blueprint.class;
        let name_data = || json!({"cluster": {"name": cluster_name}});
        let named = |reference: &ContractVersionedObjectReference, strategy, suffix| {
            if reference.name.is_empty() {
                names::from_strategy(Some(strategy), name_data, &cluster_name, suffix)
            } else {
                Ok(reference.name.clone())
            }
        };
        let infra_name = named(
            &cluster.spec.infrastructure_ref,
            &class.spec.infrastructure.naming,
            "infrastructure",
        )?;
        let cp_name = named(
            &cluster.spec.control_plane_ref,
            &class.spec.control_plane.naming,
            "control-plane",
        )?;
        let cp_kind = blueprint
            .template(&class.spec.control_plane.template_ref)
            .and_then(|t| t["kind"].as_str())
            .map(|k| k.trim_end_matches("Template").to_owned())
            .unwrap_or_default();
        let current_cp = current.find(&cp_kind, &cp_name);
        let rollout_after = cluster.spec.topology.v1beta1_rollout_after.clone();
        Ok(Facts {
            cluster_name,
            namespace,
            topology,
            infra_name,
            cp_name,
            cp_kind,
            current_cp,
            rollout_after,
        })
    }
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

/// `builtin.cluster`: what every patch sees of the Cluster.
fn cluster_builtin(facts: &Facts<'_>, cluster: &Cluster) -> Value {
    // An empty classRef.namespace means the Cluster's own, as Cluster API reads it.
    let class_ref = &facts.topology.class_ref;
    let class_namespace = match class_ref.namespace.as_str() {
        "" => facts.namespace.clone(),
        namespace => namespace.to_owned(),
    };
    // The desired Cluster's metadata, as Cluster API v1.14 builds `builtin.cluster.metadata`: its
    // labels with the two the topology sets on it (see `assemble`), its annotations without those
    // of `kubectl apply` and of conversions (ours included: a Cluster API hub object has no
    // v1beta1 fields annotation), each map left out when empty.
    let mut labels = cluster.metadata.labels.clone().unwrap_or_default();
    labels.insert(CLUSTER_NAME_LABEL.to_owned(), facts.cluster_name.clone());
    labels.insert(TOPOLOGY_OWNED_LABEL.to_owned(), String::new());
    let mut metadata = json!({ "labels": labels });
    if let Some(mut annotations) = cluster.metadata.annotations.clone() {
        for annotation in [LAST_APPLIED_ANNOTATION, CONVERSION_DATA, V1BETA1_FIELDS] {
            annotations.remove(annotation);
        }
        if !annotations.is_empty() {
            metadata["annotations"] = json!(annotations);
        }
    }
    let metadata = Some(metadata);
    builtins::cluster(&builtins::ClusterFacts {
        name: &facts.cluster_name,
        namespace: &facts.namespace,
        uid: cluster.metadata.uid.as_deref().unwrap_or_default(),
        metadata,
        class: &class_ref.name,
        class_namespace: &class_namespace,
        version: facts.topology.version.as_str(),
        network: &cluster.spec.cluster_network,
    })
}

/// The patch items of every template, and which item each object is built from.
struct Collected<'a> {
    items: Vec<PatchItem>,
    infra_item: Option<usize>,
    cp_item: Option<usize>,
    cp_machine_item: Option<usize>,
    deployments: Vec<Planned<ResolvedDeployment<'a>>>,
    pools: Vec<Planned<ResolvedPool<'a>>>,
}

/// One patch item per template (the infrastructure cluster's, the control plane's and its
/// machines', two per worker to create or update), each with its scope's variables.
fn collect_items<'a>(
    facts: &Facts<'_>,
    blueprint: &Blueprint,
    base: &Value,
    upgrade: &UpgradePlan,
    deployments: Vec<ResolvedDeployment<'a>>,
    pools: Vec<ResolvedPool<'a>>,
) -> Collected<'a> {
    let class = &blueprint.class;
    let topology = facts.topology;
    let (cluster_name, namespace) = (&facts.cluster_name, &facts.namespace);
    let values = builtins::inline_values(&topology.variables);
    let no_overrides = Vec::new();
    let mut items = Vec::new();
    let scope = |builtin: Value, overrides: &[ClusterVariable]| Scope {
        variables: Arc::new(builtins::variables(&values, overrides, builtin)),
        overrides: Arc::from(overrides),
    };
    let mut push = |role: Role, holder: HolderReference, template: Option<&Value>, scope: &Scope| {
        template.map(|object| {
            items.push(PatchItem {
                role,
                holder,
                object: object.clone(),
                variables: Arc::clone(&scope.variables),
                overrides: Arc::clone(&scope.overrides),
            });
            items.len() - 1
        })
    };
    let of_cluster = |field_path| holder(HOLDER_API_VERSION, "Cluster", namespace, cluster_name, field_path);
    let infra_item = push(
        Role::InfrastructureCluster,
        of_cluster("spec.infrastructureRef"),
        blueprint.template(&class.spec.infrastructure.template_ref),
        &scope(base.clone(), &no_overrides),
    );
    let cp_overrides = &topology.control_plane.variables.overrides;
    let mut cp_builtin =
        json!({"controlPlane": {"version": upgrade.control_plane_version, "name": facts.cp_name}});
    if let Some(replicas) = topology.control_plane.replicas {
        cp_builtin["controlPlane"]["replicas"] = json!(replicas);
    }
    let cp_template = blueprint.template(&class.spec.control_plane.template_ref);
    let (cp_labels, cp_annotations) = control_plane::object_metadata(
        cp_template.unwrap_or(&Value::Null),
        &class.spec.control_plane,
        &topology.control_plane,
        cluster_name,
    );
    cp_builtin["controlPlane"]["metadata"] = metadata_builtin(cp_labels, cp_annotations);
    let cp_variables = scope(merge(base, cp_builtin), cp_overrides);
    let cp_item = push(
        Role::ControlPlane,
        of_cluster("spec.controlPlaneRef"),
        cp_template,
        &cp_variables,
    );
    let cp_machine = class
        .spec
        .control_plane
        .machine_infrastructure_ref()
        .and_then(|m| blueprint.template(m));
    let cp_api_version = cp_template
        .and_then(|t| t["apiVersion"].as_str())
        .unwrap_or_default();
    let cp_machine_item = push(
        Role::ControlPlaneMachineInfrastructure,
        holder(
            cp_api_version,
            &facts.cp_kind,
            namespace,
            &facts.cp_name,
            if blueprint.control_plane_is_v1beta1() {
                "spec.machineTemplate.infrastructureRef"
            } else {
                "spec.machineTemplate.spec.infrastructureRef"
            },
        ),
        cp_machine,
        &cp_variables,
    );
    let workers = WorkerScope {
        blueprint,
        base,
        cluster_name,
        namespace,
        scope: &scope,
    };
    let deployments = workers.items(deployments, &upgrade.machine_deployments, &mut push);
    let pools = workers.items(pools, &upgrade.machine_pools, &mut push);
    Collected {
        items,
        infra_item,
        cp_item,
        cp_machine_item,
        deployments,
        pools,
    }
}

/// The control plane's current machine template reference (at the v1beta2 contract's path, else
/// the v1beta1 one's), or null.
fn current_machine_ref<'v>(facts: &Facts<'v>) -> &'v Value {
    facts.current_cp.map_or(&Value::Null, |cp| {
        let machine = &cp["spec"]["machineTemplate"];
        match &machine["spec"]["infrastructureRef"] {
            Value::Null => &machine["infrastructureRef"],
            reference => reference,
        }
    })
}

/// Applies the class's patches to the items, in place; returns, per item, the name its clone was
/// given when generated template names had to be settled with the patching (only when some
/// inline patch reads them; otherwise the patches see the names of the clones that exist).
fn patch_items(
    facts: &Facts<'_>,
    blueprint: &Blueprint,
    current: &Current,
    base: &Value,
    collected: &mut Collected<'_>,
    external: &dyn ExternalPatches,
) -> Result<Vec<Option<String>>, TopologyError> {
    // Only external patches see the names of existing clones without settling them; a class
    // with neither kind of reader is patched once, its variables left as they are.
    let external_patches = blueprint.class.spec.patches.iter().any(|p| p.external.is_some());
    // The builtins of requests to extensions, made only when some patch is external.
    let builtin = match external_patches {
        true => Value::Object(Map::from_iter([("cluster".to_owned(), base["cluster"].clone())])),
        false => Value::Null,
    };
    let inputs = HookInputs {
        values: &facts.topology.variables,
        builtin: &builtin,
        status: blueprint.class.status.as_ref(),
    };
    let namespace = facts.namespace.as_str();
    if !blueprint.reads_generated_names && !external_patches {
        apply_patches(blueprint, &mut collected.items, &inputs, namespace, external)?;
        return Ok(Vec::new());
    }
    let mut scopes: Vec<NamedScope<'_>> = Vec::new();
    if let Some(machine_item) = collected.cp_machine_item {
        scopes.push(NamedScope {
            items: collected
                .cp_item
                .into_iter()
                .chain(collected.cp_machine_item)
                .collect(),
            slots: vec![NameSlot::new(
                machine_item,
                CONTROL_PLANE_MACHINE,
                facts.cluster_name.clone(),
                current_machine_ref(facts),
                current,
            )],
        });
    }
    scopes.extend(
        collected
            .deployments
            .iter()
            .map(|planned| planned.named_scope(current, &facts.cluster_name)),
    );
    if !blueprint.reads_generated_names {
        name_current_clones(&mut collected.items, &scopes);
        apply_patches(blueprint, &mut collected.items, &inputs, namespace, external)?;
        return Ok(Vec::new());
    }
    settle(&mut collected.items, &scopes, &mut |items| {
        apply_patches(blueprint, items, &inputs, namespace, external)
    })
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
    let class = &blueprint.class;
    let topology = facts.topology;
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
