//! The patch items of a plan: one per template, each with its scope's variables, and the
//! patching of them (settling generated template names when patches read them).

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::blueprint::Blueprint;
use super::builtins::{self, merge};
use super::current::Current;
use super::desired::control_plane::{self};
use super::desired::metadata_builtin;
use super::error::TopologyError;
use super::plan_patches::apply_patches;
use super::plan_workers::{holder, Planned, Scope, WorkerScope, HOLDER_API_VERSION};
use super::template_names::{name_current_clones, settle, NameSlot, NamedScope, CONTROL_PLANE_MACHINE};
use super::upgrade::UpgradePlan;
use super::workers::{ResolvedDeployment, ResolvedPool};
use crate::api::runtime::HolderReference;
use crate::api::ClusterVariable;
use crate::patches::external::ExternalPatches;
use crate::patches::hook_requests::HookInputs;
use crate::patches::inline::PatchItem;
use crate::patches::selector::Role;

use super::plan_facts::Facts;

/// The patch items of every template, and which item each object is built from.
pub(super) struct Collected<'a> {
    pub(super) items: Vec<PatchItem>,
    pub(super) infra_item: Option<usize>,
    pub(super) cp_item: Option<usize>,
    pub(super) cp_machine_item: Option<usize>,
    pub(super) deployments: Vec<Planned<ResolvedDeployment<'a>>>,
    pub(super) pools: Vec<Planned<ResolvedPool<'a>>>,
}

/// One patch item per template (the infrastructure cluster's, the control plane's and its
/// machines', two per worker to create or update), each with its scope's variables.
pub(super) fn collect_items<'a>(
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
    let cp_template = blueprint.template(&class.spec.control_plane.template_ref);
    let cp_builtin = control_plane_builtin(facts, blueprint, upgrade, cp_template);
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
    let cp_machine_item = push(
        Role::ControlPlaneMachineInfrastructure,
        control_plane_machine_holder(facts, blueprint, cp_template),
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

/// The `builtin.controlPlane` the control plane's templates are patched with: its version
/// (as the upgrade plan has it), name, replicas and metadata.
fn control_plane_builtin(
    facts: &Facts<'_>,
    blueprint: &Blueprint,
    upgrade: &UpgradePlan,
    cp_template: Option<&Value>,
) -> Value {
    let topology = facts.topology;
    let mut cp_builtin =
        json!({"controlPlane": {"version": upgrade.control_plane_version, "name": facts.cp_name}});
    if let Some(replicas) = topology.control_plane.replicas {
        cp_builtin["controlPlane"]["replicas"] = json!(replicas);
    }
    let (cp_labels, cp_annotations) = control_plane::object_metadata(
        cp_template.unwrap_or(&Value::Null),
        &blueprint.class.spec.control_plane,
        &topology.control_plane,
        &facts.cluster_name,
    );
    cp_builtin["controlPlane"]["metadata"] = metadata_builtin(cp_labels, cp_annotations);
    cp_builtin
}

/// The control plane object as the holder of its machines' infrastructure template, at the
/// field its contract version keeps the reference in.
fn control_plane_machine_holder(
    facts: &Facts<'_>,
    blueprint: &Blueprint,
    cp_template: Option<&Value>,
) -> HolderReference {
    let cp_api_version = cp_template
        .and_then(|t| t["apiVersion"].as_str())
        .unwrap_or_default();
    holder(
        cp_api_version,
        &facts.cp_kind,
        &facts.namespace,
        &facts.cp_name,
        if blueprint.control_plane_is_v1beta1() {
            "spec.machineTemplate.infrastructureRef"
        } else {
            "spec.machineTemplate.spec.infrastructureRef"
        },
    )
}

/// The control plane's current machine template reference (at the v1beta2 contract's path, else
/// the v1beta1 one's), or null.
pub(super) fn current_machine_ref<'v>(facts: &Facts<'v>) -> &'v Value {
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
pub(super) fn patch_items(
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
