//! Template references, worker class names, health checks and metadata of a ClusterClass.

use std::collections::BTreeSet;

use crate::admission::health_check;
use crate::api::{ClusterClass, LocalObjectTemplate, TopologyMetadata};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// Suffix every template kind has.
const TEMPLATE_SUFFIX: &str = "Template";

/// Every template reference is set, named, in the class's namespace, of a `*Template` kind with
/// a valid apiVersion.
pub fn validate(class: &ClusterClass) -> FieldErrors {
    let namespace = class.metadata.namespace.as_deref().unwrap_or_default();
    let spec = FieldPath::new("spec");
    let mut errors = FieldErrors::new();
    errors.extend(validate_template(
        &class.spec.infrastructure,
        namespace,
        &spec.child("infrastructure"),
    ));
    let control_plane = LocalObjectTemplate {
        r#ref: class.spec.control_plane.r#ref.clone(),
    };
    errors.extend(validate_template(
        &control_plane,
        namespace,
        &spec.child("controlPlane"),
    ));
    if let Some(infrastructure) = &class.spec.control_plane.machine_infrastructure {
        errors.extend(validate_template(
            infrastructure,
            namespace,
            &spec.children(&["controlPlane", "machineInfrastructure"]),
        ));
    }
    for (field, templates) in [
        (
            "machineDeployments",
            class
                .spec
                .workers
                .machine_deployments
                .iter()
                .map(|c| &c.template)
                .collect::<Vec<_>>(),
        ),
        (
            "machinePools",
            class
                .spec
                .workers
                .machine_pools
                .iter()
                .map(|c| &c.template)
                .collect::<Vec<_>>(),
        ),
    ] {
        for (i, template) in templates.into_iter().enumerate() {
            let path = spec.children(&["workers", field]).index(i).child("template");
            errors.extend(validate_template(
                &template.bootstrap,
                namespace,
                &path.child("bootstrap"),
            ));
            errors.extend(validate_template(
                &template.infrastructure,
                namespace,
                &path.child("infrastructure"),
            ));
        }
    }
    errors
}

fn validate_template(template: &LocalObjectTemplate, namespace: &str, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let Some(reference) = &template.r#ref else {
        errors.push(FieldError::required(
            &path.child("ref"),
            "template reference must be defined",
        ));
        return errors;
    };
    let path = path.child("ref");
    if reference.name.as_deref().unwrap_or_default().is_empty() {
        errors.push(FieldError::required(
            &path.child("name"),
            "template name must be defined",
        ));
    }
    let ref_namespace = reference.namespace.as_deref().unwrap_or_default();
    if !namespace.is_empty() && ref_namespace != namespace {
        errors.push(FieldError::invalid(
            &path.child("namespace"),
            ref_namespace,
            format!("template must be in the same namespace as the ClusterClass ({namespace})"),
        ));
    }
    let kind = reference.kind.as_deref().unwrap_or_default();
    if kind.len() <= TEMPLATE_SUFFIX.len() || !kind.ends_with(TEMPLATE_SUFFIX) {
        errors.push(FieldError::invalid(
            &path.child("kind"),
            kind,
            format!("template kind must be of form \"<name>{TEMPLATE_SUFFIX}\""),
        ));
    }
    let api_version = reference.api_version.as_deref().unwrap_or_default();
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

/// MachineHealthCheck classes are valid; the control plane's needs machine infrastructure.
pub fn validate_health_checks(class: &ClusterClass) -> FieldErrors {
    let namespace = class.metadata.namespace.as_deref().unwrap_or_default();
    let mut errors = FieldErrors::new();
    if let Some(check) = &class.spec.control_plane.machine_health_check {
        let path = FieldPath::new("spec").children(&["controlPlane", "machineHealthCheck"]);
        errors.extend(health_check::validate(check, namespace, &path));
        if class.spec.control_plane.machine_infrastructure.is_none() {
            errors.push(FieldError::forbidden(
                &path.child("machineInfrastructure"),
                "can be set only if spec.controlPlane.machineInfrastructure is set",
            ));
        }
    }
    for md in &class.spec.workers.machine_deployments {
        if let Some(check) = &md.machine_health_check {
            let path = FieldPath::new("spec")
                .children(&["workers", "machineDeployments"])
                .key(&md.class)
                .child("machineHealthCheck");
            errors.extend(health_check::validate(check, namespace, &path));
        }
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
    for md in &class.spec.workers.machine_deployments {
        let path = spec
            .children(&["workers", "machineDeployments"])
            .key(&md.class)
            .children(&["template", "metadata"]);
        check_metadata(&md.template.metadata, &path, &mut errors);
    }
    for mp in &class.spec.workers.machine_pools {
        let path = spec
            .children(&["workers", "machinePools"])
            .key(&mp.class)
            .children(&["template", "metadata"]);
        check_metadata(&mp.template.metadata, &path, &mut errors);
    }
    errors
}

fn check_metadata(metadata: &TopologyMetadata, path: &FieldPath, errors: &mut FieldErrors) {
    for (key, value) in &metadata.labels {
        for problem in crate::admission::cluster::label_value_problems(value) {
            errors.push(FieldError::invalid(
                &path.child("labels"),
                value.as_str(),
                problem,
            ));
        }
        if key.is_empty() {
            errors.push(FieldError::invalid(
                &path.child("labels"),
                key.as_str(),
                "name part must be non-empty",
            ));
        }
    }
}
