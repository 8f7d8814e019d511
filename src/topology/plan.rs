//! The entry point: from a compiled class, a Cluster and its current objects, the desired objects.

use serde_json::{json, Map, Value};

use super::blueprint::Blueprint;
use super::builtins::{self, merge};
use super::current::Current;
use super::desired::control_plane::{self, ControlPlaneInput};
use super::desired::machine_deployments::{self, MachineDeploymentInput};
use super::desired::{clone_template, health_checks, reference_to};
use super::error::TopologyError;
use super::names::{self, object_name};
use super::upgrade::machine_deployment_version;
use crate::api::labels::{TOPOLOGY_DEPLOYMENT_NAME_LABEL, TOPOLOGY_OWNED_LABEL};

/// The label on control plane machines, selected by the control plane's health check.
const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";
use crate::api::{Cluster, MachineDeploymentClass, MachineDeploymentTopology};
use crate::patches::external::ExternalPatches;
use crate::patches::inline::PatchItem;
use crate::patches::selector::Role;
use crate::patches::template::ExecOptions;

/// The desired state of one Cluster's topology.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The Cluster with `spec.infrastructureRef` and `spec.controlPlaneRef` set.
    pub cluster: Value,
    /// Every desired object, in creation order: infrastructure cluster, control plane machine
    /// template, control plane, its health check, then per MachineDeployment its bootstrap and
    /// infrastructure templates, itself and its health check.
    pub objects: Vec<Value>,
    /// MachineDeployments whose upgrade waits for the control plane: (name, version kept).
    pub held_upgrades: Vec<(String, String)>,
}

/// A worker topology with its class, name, version and the indexes of its templates among the patch items.
struct Worker<'a> {
    topology: &'a MachineDeploymentTopology,
    class: &'a MachineDeploymentClass,
    name: String,
    version: String,
    bootstrap: Option<usize>,
    infrastructure: Option<usize>,
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

    let network = cluster
        .spec
        .cluster_network
        .as_ref()
        .and_then(|n| serde_json::to_value(n).ok());
    let class_namespace = topology
        .class_namespace
        .clone()
        .unwrap_or_else(|| namespace.clone());
    let base = builtins::cluster(
        &cluster_name,
        &namespace,
        &topology.class,
        &class_namespace,
        version,
        network,
    );
    let values = &topology.variables;
    let no_overrides = Vec::new();

    let mut items = Vec::new();
    let mut push =
        |role: Role, template: Option<&Value>, builtin: &Value, overrides: &[crate::api::ClusterVariable]| {
            template.map(|object| {
                items.push(PatchItem {
                    role,
                    object: object.clone(),
                    variables: builtins::variables(values, overrides, builtin.clone()),
                });
                items.len() - 1
            })
        };
    let infra_item = push(
        Role::InfrastructureCluster,
        blueprint.template(class.spec.infrastructure.r#ref.as_ref()),
        &base,
        &no_overrides,
    );
    let cp_overrides = topology
        .control_plane
        .variables
        .as_ref()
        .map_or(&no_overrides, |v| &v.overrides);
    let mut cp_builtin = json!({"controlPlane": {"version": version, "name": cp_name}});
    if let Some(replicas) = topology.control_plane.replicas {
        cp_builtin["controlPlane"]["replicas"] = json!(replicas);
    }
    let cp_builtin = merge(&base, cp_builtin);
    let cp_item = push(
        Role::ControlPlane,
        blueprint.template(class.spec.control_plane.r#ref.as_ref()),
        &cp_builtin,
        cp_overrides,
    );
    let cp_machine = class
        .spec
        .control_plane
        .machine_infrastructure
        .as_ref()
        .and_then(|m| blueprint.template(m.r#ref.as_ref()));
    let cp_machine_item = push(
        Role::ControlPlaneMachineInfrastructure,
        cp_machine,
        &cp_builtin,
        cp_overrides,
    );

    let mut workers = Vec::new();
    for md in topology.workers.iter().flat_map(|w| &w.machine_deployments) {
        let md_class = class
            .spec
            .workers
            .machine_deployments
            .iter()
            .find(|c| c.class == md.class)
            .ok_or_else(|| TopologyError::UnknownWorkerClass {
                name: md.name.clone(),
                class: md.class.clone(),
            })?;
        let current_md = current.machine_deployment(&md.name);
        let name = match current_md.and_then(|o| o["metadata"]["name"].as_str()) {
            Some(name) => name.to_owned(),
            None => names::from_strategy(
                md_class.naming_strategy.as_ref(),
                json!({"cluster": {"name": cluster_name}, "machineDeployment": {"topologyName": md.name}}),
                &format!("{cluster_name}-{}", md.name),
                &md.class,
            )?,
        };
        let md_version = machine_deployment_version(version, current_cp, current_md, &md.metadata);
        let mut builtin = json!({"machineDeployment": {"version": md_version, "class": md.class, "name": name, "topologyName": md.name}});
        if let Some(replicas) = md.replicas {
            builtin["machineDeployment"]["replicas"] = json!(replicas);
        }
        let builtin = merge(&base, builtin);
        let overrides = md.variables.as_ref().map_or(&no_overrides, |v| &v.overrides);
        let role = Role::MachineDeployment {
            class: md.class.clone(),
        };
        let bootstrap = push(
            role.clone(),
            blueprint.template(md_class.template.bootstrap.r#ref.as_ref()),
            &builtin,
            overrides,
        );
        let infrastructure = push(
            role,
            blueprint.template(md_class.template.infrastructure.r#ref.as_ref()),
            &builtin,
            overrides,
        );
        workers.push(Worker {
            topology: md,
            class: md_class,
            name,
            version: md_version,
            bootstrap,
            infrastructure,
        });
    }

    let options = ExecOptions::default();
    for patch in &class.spec.patches {
        match blueprint.patches.iter().find(|p| p.name() == patch.name) {
            Some(compiled) if patch.external.is_none() => compiled.apply(&mut items, &options)?,
            _ if patch.external.is_some() => {
                external
                    .generate(&patch.name, &mut items)
                    .map_err(|reason| external_error(&patch.name, &reason))?;
                external
                    .validate(&patch.name, &items)
                    .map_err(|reason| external_error(&patch.name, &reason))?;
            }
            _ => {}
        }
    }
    let item = |index: Option<usize>| index.and_then(|i| items.get(i)).map(|item| &item.object);
    let mut objects = Vec::new();
    let mut cluster_object = serde_json::to_value(cluster).unwrap_or_else(|_| json!({}));
    if let Some(template) = item(infra_item) {
        let infra = clone_template(template, &infra_name, &namespace, &cluster_name, true);
        cluster_object["spec"]["infrastructureRef"] = reference_to(&infra);
        objects.push(infra);
    }
    let machine = item(cp_machine_item).map(|template| {
        let current_ref = current_cp.map_or(&Value::Null, |cp| {
            &cp["spec"]["machineTemplate"]["infrastructureRef"]
        });
        let name = current
            .reusable_template(current_ref, &template["spec"])
            .unwrap_or_else(|| object_name(&cp_name, &content_seed(&template["spec"])));
        clone_template(template, &name, &namespace, &cluster_name, false)
    });
    if let Some(template) = item(cp_item) {
        let cp = control_plane::desired(&ControlPlaneInput {
            template,
            name: &cp_name,
            namespace: &namespace,
            cluster: &cluster_name,
            version,
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
                (CONTROL_PLANE_LABEL.to_owned(), json!("")),
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
    for worker in &workers {
        let current_md = current.machine_deployment(&worker.topology.name);
        let clone = |index: Option<usize>, path: &[&str]| {
            item(index).map(|template| {
                let current_ref = current_md.map_or(&Value::Null, |md| {
                    path.iter().fold(&md["spec"]["template"]["spec"], |v, k| &v[*k])
                });
                let name = current
                    .reusable_template(current_ref, &template["spec"])
                    .unwrap_or_else(|| object_name(&worker.name, &content_seed(&template["spec"])));
                clone_template(template, &name, &namespace, &cluster_name, false)
            })
        };
        let (Some(bootstrap), Some(infrastructure)) = (
            clone(worker.bootstrap, &["bootstrap", "configRef"]),
            clone(worker.infrastructure, &["infrastructureRef"]),
        ) else {
            continue;
        };
        let md = machine_deployments::desired(&MachineDeploymentInput {
            name: &worker.name,
            namespace: &namespace,
            cluster: &cluster_name,
            version: &worker.version,
            class: worker.class,
            topology: worker.topology,
            bootstrap: &bootstrap,
            infrastructure: &infrastructure,
        });
        objects.extend([bootstrap, infrastructure, md]);
        if let Some(check) = health_checks::effective(
            worker.class.machine_health_check.as_ref(),
            worker.topology.machine_health_check.as_ref(),
        ) {
            let selector = Map::from_iter([
                (
                    TOPOLOGY_DEPLOYMENT_NAME_LABEL.to_owned(),
                    json!(worker.topology.name),
                ),
                (TOPOLOGY_OWNED_LABEL.to_owned(), json!("")),
            ]);
            objects.push(health_checks::desired(
                &worker.name,
                &namespace,
                &cluster_name,
                selector,
                check,
            ));
        }
    }
    let held_upgrades = workers
        .iter()
        .filter(|w| w.version != version)
        .map(|w| (w.name.clone(), w.version.clone()))
        .collect();
    Ok(Plan {
        cluster: cluster_object,
        objects,
        held_upgrades,
    })
}

/// The error of an external patch, worded like an inline one.
fn external_error(patch: &str, reason: &str) -> TopologyError {
    TopologyError::External {
        patch: patch.to_owned(),
        reason: reason.to_owned(),
    }
}

/// A stable digest of a template's content, so a changed template gets a new name.
fn content_seed(spec: &Value) -> String {
    names::suffix(&spec.to_string())
}
