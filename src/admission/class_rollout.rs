//! The ClusterClassRollout webhook (rollout.capi-topology.io/v1alpha1): validation only, by the
//! rules the controller applies too (`rollout::policy`), so a policy the controller would refuse
//! as `InvalidPolicy` is refused at `kubectl apply`, with every field path.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::Outcome;
use crate::api::class_rollout::ClusterClassRolloutSpec;
use crate::rollout::policy::review_policy;

/// A ClusterClassRollout as the webhook reads it: its type, name and spec (the status is the
/// controller's and not judged). Kept apart from the API type, whose derived decoding drops
/// `apiVersion` and `kind`, so a request naming another kind is refused.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmittedRollout {
    /// `apiVersion` as sent.
    #[serde(default)]
    pub api_version: String,
    /// `kind` as sent.
    #[serde(default)]
    pub kind: String,
    /// Name, namespace, labels.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The policy.
    #[serde(default)]
    pub spec: ClusterClassRolloutSpec,
}

/// Validating webhook for a create (`old` is None) or an update.
pub fn validate(new: &AdmittedRollout, old: Option<&AdmittedRollout>) -> Outcome {
    let review = review_policy(&new.spec, old.map(|o| &o.spec));
    Outcome {
        errors: review.errors,
        warnings: review.warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rollout(spec: &str) -> AdmittedRollout {
        serde_yaml_ng::from_str(&format!(
            "apiVersion: rollout.capi-topology.io/v1alpha1\nkind: ClusterClassRollout\nmetadata: {{name: r1, namespace: default}}\nspec: {spec}"
        ))
        .expect("rollout decodes")
    }

    #[test]
    fn the_policys_rules_answer_with_errors_and_warnings() {
        let good = rollout("{classRef: {name: quick-start}, waves: [{name: all}, {name: late, selector: {matchLabels: {a: b}}}]}");
        let outcome = validate(&good, None);
        assert!(outcome.errors.is_empty());
        assert_eq!(outcome.warnings.len(), 1, "the unreachable wave");
        let moved = rollout("{classRef: {name: other}}");
        let outcome = validate(&moved, Some(&good));
        assert_eq!(
            outcome.errors.to_string(),
            r#"spec.classRef.name: Invalid value: "other": field is immutable (was "quick-start")"#
        );
    }
}
