//! The ClusterClass webhook as Cluster API v1.14 runs it: validation only (references, worker
//! classes, rollout, health checks, naming, taints, variables, patches, metadata, Kubernetes
//! versions) and, on update and delete, what the Clusters using the class need from it. v1.14
//! has no defaulting webhook for ClusterClass: the endpoint kept at the v1beta1 mutating path
//! allows every request unchanged.

mod naming;
mod patches;
mod references;
mod usage;
mod variable_metadata;
mod versions;

use super::Outcome;
use crate::api::convert::V1BETA1_FIELDS;
use crate::api::ClusterClass;
use crate::field::{FieldErrors, FieldPath};
use crate::store::ObjectSource;
use crate::topology::compatibility::check_classes_compatible;
use crate::variables::validate_definitions;

/// Validating webhook for create (`old` is None) and update.
pub fn validate(new: &ClusterClass, old: Option<&ClusterClass>, source: &dyn ObjectSource) -> Outcome {
    let mut errors = FieldErrors::new();
    errors.extend(references::validate(new));
    errors.extend(references::validate_worker_classes_unique(new));
    errors.extend(references::validate_rollout(new));
    errors.extend(references::validate_health_checks(new));
    errors.extend(naming::validate(new));
    errors.extend(references::validate_taints(new));
    errors.extend(validate_definitions(
        &new.spec.variables,
        &FieldPath::new("spec").child("variables"),
    ));
    errors.extend(variable_metadata::validate(new));
    errors.extend(patches::validate(new));
    errors.extend(references::validate_metadata(new));
    errors.extend(versions::validate(new));
    let kept_fields = |c: &ClusterClass| c.metadata.annotations.as_ref()?.get(V1BETA1_FIELDS).cloned();
    errors.extend(super::cluster::metadata::validate_v1beta1_fields(
        "ClusterClass",
        kept_fields(new).as_ref(),
        old.and_then(kept_fields).as_ref(),
    ));
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
