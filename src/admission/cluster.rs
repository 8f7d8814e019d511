//! Cluster webhook rules (placeholder until the Cluster webhook engineer's version lands).

use super::Outcome;
use crate::api::Cluster;
use crate::store::ObjectSource;

/// Mutating webhook: defaulting.
pub fn default(_cluster: &mut Cluster, _old: Option<&Cluster>, _source: &dyn ObjectSource) -> Outcome {
    Outcome::default()
}

/// Validating webhook.
pub fn validate(_cluster: &Cluster, _old: Option<&Cluster>, _source: &dyn ObjectSource) -> Outcome {
    Outcome::default()
}
