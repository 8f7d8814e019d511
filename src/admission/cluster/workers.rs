//! The worker and part checks of a topology: worker names and classes, rollout strategies,
//! taints, and health checks against the class.

use std::collections::BTreeSet;

use crate::api::names::label_value_problems;
use crate::api::{Cluster, ClusterClass, MachineHealthCheckTopology, Topology};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// MachineDeployment rollout strategies: ints or percentages, not both 0.
pub(super) fn validate_rollout(topology: &Topology, path: &FieldPath, errors: &mut FieldErrors) {
    for md in &topology.workers.machine_deployments {
        let at = path
            .children(&["workers", "machineDeployments"])
            .key(&md.name)
            .children(&["rollout", "strategy"]);
        errors.extend(crate::admission::health_check::validate_rolling_update(
            &md.rollout.strategy.rolling_update,
            &at,
        ));
    }
}

/// Taints of the control plane, MachineDeployments and MachinePools.
pub(super) fn validate_taints(topology: &Topology, path: &FieldPath, errors: &mut FieldErrors) {
    use crate::admission::taints;
    errors.extend(taints::validate(
        &topology.control_plane.taints,
        &path.children(&["controlPlane", "taints"]),
    ));
    for md in &topology.workers.machine_deployments {
        let at = path
            .children(&["workers", "machineDeployments"])
            .key(&md.name)
            .child("taints");
        errors.extend(taints::validate(&md.taints, &at));
    }
    for mp in &topology.workers.machine_pools {
        let at = path
            .children(&["workers", "machinePools"])
            .key(&mp.name)
            .child("taints");
        errors.extend(taints::validate(&mp.taints, &at));
    }
}

/// MachineDeployment and MachinePool topologies: valid unique names, classes the ClusterClass has.
pub(super) fn validate_workers(cluster: &Cluster, class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let workers = &cluster.spec.topology.workers;
    let class_name = class.metadata.name.as_deref().unwrap_or_default();
    let md_classes = class.spec.workers.machine_deployment_classes();
    let mp_classes = class.spec.workers.machine_pool_classes();
    let pools = workers
        .machine_pools
        .iter()
        .map(|p| (p.name.as_str(), p.class.as_str()));
    let deployments = workers
        .machine_deployments
        .iter()
        .map(|d| (d.name.as_str(), d.class.as_str()));
    for (field, kind, known, entries) in [
        (
            "machineDeployments",
            "MachineDeployment",
            &md_classes,
            deployments.collect::<Vec<_>>(),
        ),
        (
            "machinePools",
            "MachinePool",
            &mp_classes,
            pools.collect::<Vec<_>>(),
        ),
    ] {
        let mut names = BTreeSet::new();
        for (i, (name, worker_class)) in entries.into_iter().enumerate() {
            let at = FieldPath::new("spec")
                .children(&["topology", "workers", field])
                .index(i);
            for problem in label_value_problems(name) {
                errors.push(FieldError::invalid(
                    &at.child("name"),
                    name,
                    format!("must be a valid label value {problem}"),
                ));
            }
            if !known.contains(&worker_class) {
                errors.push(FieldError::invalid(
                    &at.child("class"),
                    worker_class,
                    format!("{kind}Class with name {worker_class:?} does not exist in ClusterClass {class_name:?}"),
                ));
            }
            if name.is_empty() {
                errors.push(FieldError::required(&at.child("name"), "name must not be empty"));
                continue;
            }
            if !names.insert(name) {
                errors.push(FieldError::invalid(
                    &at.child("name"),
                    name,
                    format!("name must be unique. {kind} with name {name:?} is defined more than once"),
                ));
            }
        }
    }
    errors
}

pub(super) fn validate_health_checks(cluster: &Cluster, class: &ClusterClass) -> FieldErrors {
    use crate::admission::health_check;
    let mut errors = FieldErrors::new();
    let topology = &cluster.spec.topology;
    let check = &topology.control_plane.health_check;
    let path = FieldPath::new("spec").children(&["topology", "controlPlane", "healthCheck"]);
    if check.is_defined() {
        if class
            .spec
            .control_plane
            .machine_infrastructure
            .template_ref
            .is_unset()
        {
            errors.push(FieldError::forbidden(
                &path,
                "can be only set if spec.controlPlane.machineInfrastructure is set in ClusterClass",
            ));
        }
        errors.extend(health_check::validate(
            &check.checks,
            &check.remediation,
            false,
            &path,
        ));
    }
    validate_enabled(
        check,
        !class.spec.control_plane.health_check.is_unset(),
        &path,
        &mut errors,
    );
    for md in &topology.workers.machine_deployments {
        let check = &md.health_check;
        let path = FieldPath::new("spec")
            .children(&["topology", "workers", "machineDeployments"])
            .key(&md.name)
            .child("healthCheck");
        if check.is_defined() {
            errors.extend(health_check::validate(
                &check.checks,
                &check.remediation,
                true,
                &path,
            ));
        }
        let md_class = class
            .spec
            .workers
            .machine_deployments
            .iter()
            .find(|c| c.class == md.class);
        if let Some(md_class) = md_class {
            validate_enabled(check, !md_class.health_check.is_unset(), &path, &mut errors);
        }
    }
    errors
}

/// `enabled: true` needs a health check defined in the topology or the class.
fn validate_enabled(
    check: &MachineHealthCheckTopology,
    in_class: bool,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    if check.enabled == Some(true) && !check.is_defined() && !in_class {
        // Sic: Cluster API v1.14 still names the field `enable`.
        errors.push(FieldError::forbidden(
            &path.child("enable"),
            "cannot be set to true as healthCheck definition is not available in the Cluster topology or the ClusterClass",
        ));
    }
}
