//! Template references, worker class names, health checks, rollout strategies, taints and
//! metadata of a ClusterClass.

use std::collections::BTreeSet;

use crate::admission::{health_check, taints};
use crate::api::{ClusterClass, ClusterClassTemplateReference, TopologyMetadata};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// Suffix every template kind has.
const TEMPLATE_SUFFIX: &str = "Template";

/// Every template reference is named, of a `*Template` kind with a valid apiVersion. The paths
/// end in `.ref` as Cluster API v1.14 still writes them (its v1beta1 names).
pub fn validate(class: &ClusterClass) -> FieldErrors {
    let spec = FieldPath::new("spec");
    let mut errors = FieldErrors::new();
    let control_plane = &class.spec.control_plane;
    errors.extend(validate_template(
        &class.spec.infrastructure.template_ref,
        &spec.child("infrastructure"),
    ));
    errors.extend(validate_template(
        &control_plane.template_ref,
        &spec.child("controlPlane"),
    ));
    if let Some(infrastructure) = control_plane.machine_infrastructure_ref() {
        errors.extend(validate_template(
            infrastructure,
            &spec.children(&["controlPlane", "machineInfrastructure"]),
        ));
    }
    let workers = &class.spec.workers;
    let deployments = workers
        .machine_deployments
        .iter()
        .map(|c| (&c.bootstrap.template_ref, &c.infrastructure.template_ref));
    let pools = workers
        .machine_pools
        .iter()
        .map(|c| (&c.bootstrap.template_ref, &c.infrastructure.template_ref));
    let lists: [(&str, Vec<_>); 2] = [
        ("machineDeployments", deployments.collect()),
        ("machinePools", pools.collect()),
    ];
    for (field, templates) in lists {
        for (i, (bootstrap, infrastructure)) in templates.into_iter().enumerate() {
            let path = spec.children(&["workers", field]).index(i).child("template");
            errors.extend(validate_template(bootstrap, &path.child("bootstrap")));
            errors.extend(validate_template(infrastructure, &path.child("infrastructure")));
        }
    }
    errors
}

fn validate_template(reference: &ClusterClassTemplateReference, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let path = path.child("ref");
    if reference.name.is_empty() {
        errors.push(FieldError::required(
            &path.child("name"),
            "template name must be defined",
        ));
    }
    let kind = reference.kind.as_str();
    if kind.len() <= TEMPLATE_SUFFIX.len() || !kind.ends_with(TEMPLATE_SUFFIX) {
        errors.push(FieldError::invalid(
            &path.child("kind"),
            kind,
            format!("template kind must be of form \"<name>{TEMPLATE_SUFFIX}\""),
        ));
    }
    let api_version = reference.api_version.as_str();
    if api_version.is_empty() {
        errors.push(FieldError::required(
            &path.child("apiVersion"),
            "template apiVersion must be defined",
        ));
    } else if api_version.matches('/').count() > 1
        || api_version.starts_with('/')
        || api_version.ends_with('/')
    {
        errors.push(FieldError::invalid(
            &path.child("apiVersion"),
            api_version,
            format!("template apiVersion must be a valid Kubernetes apiVersion: unexpected GroupVersion string: {api_version}"),
        ));
    }
    errors
}

/// MachineDeployment and MachinePool class names are unique.
pub fn validate_worker_classes_unique(class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let workers = &class.spec.workers;
    for (field, kind, names) in [
        (
            "machineDeployments",
            "MachineDeployment",
            workers
                .machine_deployments
                .iter()
                .map(|c| c.class.as_str())
                .collect::<Vec<_>>(),
        ),
        (
            "machinePools",
            "MachinePool",
            workers
                .machine_pools
                .iter()
                .map(|c| c.class.as_str())
                .collect::<Vec<_>>(),
        ),
    ] {
        let mut seen = BTreeSet::new();
        for (i, name) in names.into_iter().enumerate() {
            if !seen.insert(name) {
                errors.push(FieldError::invalid(
                    &FieldPath::new("spec")
                        .children(&["workers", field])
                        .index(i)
                        .child("class"),
                    name,
                    format!(
                        "{kind} class must be unique. {kind} with class {name:?} is defined more than once"
                    ),
                ));
            }
        }
    }
    errors
}

/// Health checks of the control plane class (which needs machine infrastructure) and of the
/// MachineDeployment classes.
pub fn validate_health_checks(class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let control_plane = &class.spec.control_plane;
    let check = &control_plane.health_check;
    if !check.is_unset() {
        let path = FieldPath::new("spec").children(&["controlPlane", "healthCheck"]);
        errors.extend(health_check::validate(
            &check.checks,
            &check.remediation,
            false,
            &path,
        ));
        if control_plane.machine_infrastructure_ref().is_none() {
            errors.push(FieldError::forbidden(
                &path,
                "can be only set if spec.controlPlane.machineInfrastructure is set",
            ));
        }
    }
    for md in &class.spec.workers.machine_deployments {
        let check = &md.health_check;
        if check.is_unset() {
            continue;
        }
        let path = FieldPath::new("spec")
            .children(&["workers", "machineDeployments"])
            .key(&md.class)
            .child("healthCheck");
        errors.extend(health_check::validate(
            &check.checks,
            &check.remediation,
            true,
            &path,
        ));
    }
    errors
}

/// MachineDeployment class rollout strategies: ints or percentages, not both 0.
pub fn validate_rollout(class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    for md in &class.spec.workers.machine_deployments {
        let path = FieldPath::new("spec")
            .children(&["workers", "machineDeployments"])
            .key(&md.class)
            .children(&["rollout", "strategy"]);
        errors.extend(health_check::validate_rolling_update(
            &md.rollout.strategy.rolling_update,
            &path,
        ));
    }
    errors
}

/// Taints of the control plane, MachineDeployment and MachinePool classes.
pub fn validate_taints(class: &ClusterClass) -> FieldErrors {
    let spec = FieldPath::new("spec");
    let mut errors = taints::validate(
        &class.spec.control_plane.taints,
        &spec.children(&["controlPlane", "taints"]),
    );
    for md in &class.spec.workers.machine_deployments {
        let path = spec
            .children(&["workers", "machineDeployments"])
            .key(&md.class)
            .child("taints");
        errors.extend(taints::validate(&md.taints, &path));
    }
    for mp in &class.spec.workers.machine_pools {
        let path = spec
            .children(&["workers", "machinePools"])
            .key(&mp.class)
            .child("taints");
        errors.extend(taints::validate(&mp.taints, &path));
    }
    errors
}

/// Labels and annotations of the control plane and worker class templates are well-formed.
pub fn validate_metadata(class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let spec = FieldPath::new("spec");
    check_metadata(
        &class.spec.control_plane.metadata,
        &spec.children(&["controlPlane", "metadata"]),
        &mut errors,
    );
    // Sic: Cluster API v1.14 still names the v1beta1 `template.metadata`.
    for md in &class.spec.workers.machine_deployments {
        let path = spec
            .children(&["workers", "machineDeployments"])
            .key(&md.class)
            .children(&["template", "metadata"]);
        check_metadata(&md.metadata, &path, &mut errors);
    }
    for mp in &class.spec.workers.machine_pools {
        let path = spec
            .children(&["workers", "machinePools"])
            .key(&mp.class)
            .children(&["template", "metadata"]);
        check_metadata(&mp.metadata, &path, &mut errors);
    }
    errors
}

/// The API server's label and annotation checks (`ObjectMeta.Validate` in Cluster API v1.14):
/// qualified-name keys, label values, the annotations' total size.
fn check_metadata(metadata: &TopologyMetadata, path: &FieldPath, errors: &mut FieldErrors) {
    errors.extend(crate::admission::cluster::metadata::validate(
        &metadata.labels,
        &metadata.annotations,
        path,
    ));
}
