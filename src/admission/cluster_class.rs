//! ClusterClass webhook rules (placeholder until the ClusterClass webhook engineer's version lands).

use super::Outcome;
use crate::api::ClusterClass;
use crate::store::ObjectSource;

/// Mutating webhook: defaulting.
pub fn default(_class: &mut ClusterClass) {}

/// Validating webhook for create and update.
pub fn validate(_new: &ClusterClass, _old: Option<&ClusterClass>, _source: &dyn ObjectSource) -> Outcome {
    Outcome::default()
}

/// Validating webhook for delete.
pub fn validate_delete(_old: &ClusterClass, _source: &dyn ObjectSource) -> Outcome {
    Outcome::default()
}
