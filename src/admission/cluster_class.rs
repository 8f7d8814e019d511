//! The ClusterClass webhooks: defaulting (ref namespaces) and validation (references, worker
//! classes, health checks, naming strategies, variables, patches, metadata) and, on update and
//! delete, what the Clusters using the class need from it.

mod naming;
mod patches;
mod references;
mod usage;
mod variable_metadata;

use super::Outcome;
use crate::api::{ClusterClass, ObjectReference};
use crate::field::{FieldErrors, FieldPath};
use crate::store::ObjectSource;
use crate::topology::compatibility::check_classes_compatible;
use crate::variables::validate_definitions;

/// Mutating webhook: empty namespaces of every template reference become the class's namespace.
pub fn default(class: &mut ClusterClass) {
    let namespace = class.metadata.namespace.clone().unwrap_or_default();
    let spec = &mut class.spec;
    let mut refs: Vec<&mut Option<ObjectReference>> =
        vec![&mut spec.infrastructure.r#ref, &mut spec.control_plane.r#ref];
    if let Some(infrastructure) = spec.control_plane.machine_infrastructure.as_mut() {
        refs.push(&mut infrastructure.r#ref);
    }
    let mut remediation: Vec<&mut Option<ObjectReference>> = Vec::new();
    if let Some(check) = spec.control_plane.machine_health_check.as_mut() {
        remediation.push(&mut check.remediation_template);
    }
    for md in &mut spec.workers.machine_deployments {
        refs.push(&mut md.template.bootstrap.r#ref);
        refs.push(&mut md.template.infrastructure.r#ref);
        if let Some(check) = md.machine_health_check.as_mut() {
            remediation.push(&mut check.remediation_template);
        }
    }
    for mp in &mut spec.workers.machine_pools {
        refs.push(&mut mp.template.bootstrap.r#ref);
        refs.push(&mut mp.template.infrastructure.r#ref);
    }
    for reference in refs.into_iter().chain(remediation).flatten() {
        if reference.namespace.as_deref().unwrap_or_default().is_empty() {
            reference.namespace = Some(namespace.clone());
        }
    }
}

/// Validating webhook for create (`old` is None) and update.
pub fn validate(new: &ClusterClass, old: Option<&ClusterClass>, source: &dyn ObjectSource) -> Outcome {
    let mut errors = FieldErrors::new();
    errors.extend(references::validate(new));
    errors.extend(references::validate_worker_classes_unique(new));
    errors.extend(references::validate_health_checks(new));
    errors.extend(naming::validate(new));
    errors.extend(validate_definitions(
        &new.spec.variables,
        &FieldPath::new("spec").child("variables"),
    ));
    errors.extend(variable_metadata::validate(new));
    errors.extend(patches::validate(new));
    errors.extend(references::validate_metadata(new));
    if let Some(old) = old {
        errors.extend(check_classes_compatible(old, new));
        errors.extend(usage::validate_update(old, new, source));
    }
    Outcome::from_errors(errors)
}

/// Validating webhook for delete: refused while Clusters use the class.
pub fn validate_delete(old: &ClusterClass, source: &dyn ObjectSource) -> Outcome {
    Outcome::from_errors(usage::validate_delete(old, source))
}
