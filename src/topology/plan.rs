//! The entry point: from a compiled class, a Cluster and its current objects, the desired objects.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::blueprint::Blueprint;
use super::builtins::{self, merge};
use super::current::Current;
use super::desired::control_plane::{self, ControlPlaneInput};
use super::desired::{clone_template, health_checks, metadata_builtin, reference_to};
use super::error::TopologyError;
use super::names;
use super::plan_patches::apply_patches;
use super::plan_workers::{
    deployment_objects, holder, pool_objects, Patched, Scope, WorkerScope, HOLDER_API_VERSION,
};
use super::template_names::{clone_name, settle, NameSlot, NamedScope, CONTROL_PLANE_MACHINE};
use super::upgrade::{concurrency, Inputs, UpgradePlan};
use super::workers;
use crate::api::labels::{MACHINE_CONTROL_PLANE_LABEL, TOPOLOGY_OWNED_LABEL};
use crate::api::runtime::HolderReference;
use crate::api::{Cluster, ClusterVariable};
use crate::patches::external::ExternalPatches;
use crate::patches::hook_requests::HookInputs;
use crate::patches::inline::PatchItem;
use crate::patches::selector::Role;

/// The desired state of one Cluster's topology.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The Cluster with `spec.infrastructureRef` and `spec.controlPlaneRef` set.
    pub cluster: Value,
    /// Every desired object, in creation order: infrastructure cluster, control plane machine
    /// template, control plane, its health check, then per MachineDeployment its bootstrap and
    /// infrastructure templates, itself and its health check, then per MachinePool its bootstrap
    /// config, infrastructure machine pool and itself. Workers waiting to be created are left out.
    pub objects: Vec<Value>,
    /// How versions and rollouts are sequenced, and what still waits.
    pub upgrade: UpgradePlan,
}

/// Computes the desired objects of `cluster` (already defaulted and validated) from `blueprint`,
/// reading `current` for names to keep, templates to reuse and version sequencing. Pure.
pub fn plan(
    blueprint: &Blueprint,
    cluster: &Cluster,
    current: &Current,
    external: &dyn ExternalPatches,
) -> Result<Plan, TopologyError> {
    let cluster_name = cluster.metadata.name.clone().unwrap_or_default();
    let namespace = cluster
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".to_owned());
    let topology = cluster
        .spec
        .topology
        .as_ref()
        .ok_or_else(|| TopologyError::NoTopology(cluster_name.clone()))?;
    let class = &blueprint.class;
    let version = topology.version.as_str();

    let name_data = json!({"cluster": {"name": cluster_name}});
    let infra_name = match cluster
        .spec
        .infrastructure_ref
        .as_ref()
        .and_then(|r| r.name.clone())
    {
        Some(name) => name,
        None => names::from_strategy(
            class.spec.infrastructure_naming_strategy.as_ref(),
            name_data.clone(),
            &cluster_name,
            "infrastructure",
        )?,
    };
    let cp_name = match cluster
        .spec
        .control_plane_ref
        .as_ref()
        .and_then(|r| r.name.clone())
    {
        Some(name) => name,
        None => names::from_strategy(
            class.spec.control_plane.naming_strategy.as_ref(),
            name_data.clone(),
            &cluster_name,
            "control-plane",
        )?,
    };
    let cp_kind = blueprint
        .template(class.spec.control_plane.r#ref.as_ref())
        .and_then(|t| t["kind"].as_str())
        .map(|k| k.trim_end_matches("Template").to_owned())
        .unwrap_or_default();
    let current_cp = current.find(&cp_kind, &cp_name);
    let workers_topology = topology.workers.as_ref();
    let deployments = workers::resolve(
        class,
        workers_topology.map_or(&[], |w| w.machine_deployments.as_slice()),
        current,
        &cluster_name,
    )?;
    let pools = workers::resolve(
        class,
        workers_topology.map_or(&[], |w| w.machine_pools.as_slice()),
        current,
        &cluster_name,
    )?;
    let rollout_after = topology
        .rollout_after
        .as_ref()
        .and_then(|t| serde_json::to_value(t).ok())
        .and_then(|t| t.as_str().map(str::to_owned));
    let upgrade = UpgradePlan::decide(&Inputs {
        target: version,
        rollout_after: rollout_after.as_deref(),
        control_plane: current_cp,
        control_plane_machines: &current.control_plane_machines(),
        machine_deployments: &deployments
            .iter()
            .map(|md| workers::deployment_worker(md, current))
            .collect::<Vec<_>>(),
        machine_pools: &pools
            .iter()
            .map(|mp| workers::pool_worker(mp, current, &cluster_name))
            .collect::<Vec<_>>(),
        concurrency: concurrency(cluster.metadata.annotations.as_ref()),
    });
    let cp_version = upgrade.control_plane_version.as_str();

    // An empty classNamespace means the Cluster's own, as Cluster API reads it.
    let class_namespace = topology
        .class_namespace
        .clone()
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| namespace.clone());
    let (labels, annotations) = (&cluster.metadata.labels, &cluster.metadata.annotations);
    let metadata = (labels.is_some() || annotations.is_some())
        .then(|| json!({"labels": labels, "annotations": annotations}))
        .map(|mut m| {
            if let Some(map) = m.as_object_mut() {
                map.retain(|_, v| !v.is_null());
            }
            m
        });
    let base = builtins::cluster(&builtins::ClusterFacts {
        name: &cluster_name,
        namespace: &namespace,
        uid: cluster.metadata.uid.as_deref().unwrap_or_default(),
        metadata,
        class: &topology.class,
        class_namespace: &class_namespace,
        version,
        network: cluster.spec.cluster_network.as_ref(),
    });
    let values = &topology.variables;
    let no_overrides = Vec::new();

    let mut items = Vec::new();
    let scope = |builtin: Value, overrides: &[ClusterVariable]| Scope {
        variables: Arc::new(builtins::variables(values, overrides, builtin)),
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
    let of_cluster = |field_path| {
        holder(
            HOLDER_API_VERSION,
            "Cluster",
            &namespace,
            &cluster_name,
            field_path,
        )
    };
    let infra_item = push(
        Role::InfrastructureCluster,
        of_cluster("spec.infrastructureRef"),
        blueprint.template(class.spec.infrastructure.r#ref.as_ref()),
        &scope(base.clone(), &no_overrides),
    );
    let cp_overrides = topology
        .control_plane
        .variables
        .as_ref()
        .map_or(&no_overrides, |v| &v.overrides);
    let mut cp_builtin = json!({"controlPlane": {"version": cp_version, "name": cp_name}});
    if let Some(replicas) = topology.control_plane.replicas {
        cp_builtin["controlPlane"]["replicas"] = json!(replicas);
    }
    let cp_template = blueprint.template(class.spec.control_plane.r#ref.as_ref());
    let (cp_labels, cp_annotations) = control_plane::object_metadata(
        cp_template.unwrap_or(&Value::Null),
        &class.spec.control_plane,
        &topology.control_plane,
        &cluster_name,
    );
    cp_builtin["controlPlane"]["metadata"] = metadata_builtin(cp_labels, cp_annotations);
    let cp_variables = scope(merge(&base, cp_builtin), cp_overrides);
    let cp_item = push(
        Role::ControlPlane,
        of_cluster("spec.controlPlaneRef"),
        cp_template,
        &cp_variables,
    );
    let cp_machine = class
        .spec
        .control_plane
        .machine_infrastructure
        .as_ref()
        .and_then(|m| blueprint.template(m.r#ref.as_ref()));
    let cp_api_version = cp_template
        .and_then(|t| t["apiVersion"].as_str())
        .unwrap_or_default();
    let cp_machine_item = push(
        Role::ControlPlaneMachineInfrastructure,
        holder(
            cp_api_version,
            &cp_kind,
            &namespace,
            &cp_name,
            "spec.machineTemplate.infrastructureRef",
        ),
        cp_machine,
        &cp_variables,
    );

    let workers = WorkerScope {
        blueprint,
        base: &base,
        cluster_name: &cluster_name,
        namespace: &namespace,
        scope: &scope,
    };
    let planned_deployments = workers.items(deployments, &upgrade.machine_deployments, &mut push);
    let planned_pools = workers.items(pools, &upgrade.machine_pools, &mut push);

    let inputs = HookInputs {
        values,
        builtin: &json!({"cluster": base["cluster"]}),
        status: class.status.as_ref(),
    };
    let current_machine_ref = current_cp.map_or(&Value::Null, |cp| {
        &cp["spec"]["machineTemplate"]["infrastructureRef"]
    });
    // Generated template names are settled with the patching only when some patch reads them.
    let mut scopes: Vec<NamedScope<'_>> = Vec::new();
    if blueprint.reads_generated_names {
        if let Some(machine_item) = cp_machine_item {
            scopes.push(NamedScope {
                items: cp_item.into_iter().chain(cp_machine_item).collect(),
                slots: vec![NameSlot::new(
                    machine_item,
                    CONTROL_PLANE_MACHINE,
                    cluster_name.clone(),
                    current_machine_ref,
                    current,
                )],
            });
        }
        scopes.extend(
            planned_deployments
                .iter()
                .map(|planned| planned.named_scope(current, &cluster_name)),
        );
    }
    let settled = if scopes.is_empty() {
        apply_patches(blueprint, &mut items, &inputs, &namespace, external)?;
        Vec::new()
    } else {
        settle(&mut items, &scopes, &mut |items| {
            apply_patches(blueprint, items, &inputs, &namespace, external)
        })?
    };
    // The patched templates, each taken (not copied) by the object built from it.
    let mut patched: Vec<Option<Patched>> = items
        .into_iter()
        .zip(settled.into_iter().chain(std::iter::repeat(None)))
        .map(|(item, name)| Some((item.object, name)))
        .collect();
    let mut take = |index: Option<usize>| index.and_then(|i| patched.get_mut(i)).and_then(Option::take);
    let mut objects = Vec::new();
    let mut cluster_object = serde_json::to_value(cluster).unwrap_or_else(|_| json!({}));
    if let Some((template, _)) = take(infra_item) {
        let infra = clone_template(template, &infra_name, &namespace, &cluster_name, true);
        cluster_object["spec"]["infrastructureRef"] = reference_to(&infra);
        objects.push(infra);
    }
    let machine = take(cp_machine_item).map(|(template, settled)| {
        let name = settled
            .unwrap_or_else(|| clone_name(current, current_machine_ref, &cluster_name, &template["spec"]));
        clone_template(template, &name, &namespace, &cluster_name, false)
    });
    if let Some((template, _)) = take(cp_item) {
        let cp = control_plane::desired(&ControlPlaneInput {
            template: &template,
            unpatched: cp_template.unwrap_or(&Value::Null),
            name: &cp_name,
            namespace: &namespace,
            cluster: &cluster_name,
            version: cp_version,
            rollout_after: rollout_after.as_deref(),
            class: &class.spec.control_plane,
            topology: &topology.control_plane,
            machine_infrastructure: machine.as_ref(),
        });
        cluster_object["spec"]["controlPlaneRef"] = reference_to(&cp);
        objects.extend(machine);
        objects.push(cp);
        let check = health_checks::effective(
            class.spec.control_plane.machine_health_check.as_ref(),
            topology.control_plane.machine_health_check.as_ref(),
        );
        if let Some(check) = check {
            let selector = Map::from_iter([
                (MACHINE_CONTROL_PLANE_LABEL.to_owned(), json!("")),
                (TOPOLOGY_OWNED_LABEL.to_owned(), json!("")),
            ]);
            objects.push(health_checks::desired(
                &cp_name,
                &namespace,
                &cluster_name,
                selector,
                check,
            ));
        }
    }
    for planned in &planned_deployments {
        objects.extend(deployment_objects(
            planned,
            &mut take,
            current,
            &namespace,
            &cluster_name,
        ));
    }
    for planned in &planned_pools {
        objects.extend(pool_objects(planned, &mut take, &namespace, &cluster_name));
    }
    Ok(Plan {
        cluster: cluster_object,
        objects,
        upgrade,
    })
}
