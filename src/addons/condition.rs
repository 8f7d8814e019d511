//! A ClusterResourceSet's `ResourcesApplied` condition: True when every resource could be read
//! and applied to every selected Cluster; otherwise which resources and which Clusters failed and
//! why, worded the same on every retry so a failing set is not rewritten. A v1beta2 set carries it
//! twice: as a metav1 Condition in `status.conditions` (v1.14 reasons `Applied`, `NotApplied`,
//! `WrongSecretType`, `InternalError`) and in the v1beta1 shape (reasons of [`reasons`], a
//! severity) in `status.deprecated.v1beta1.conditions`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::ResourceError;
use crate::api::ResourceRef;

/// The condition's type.
pub const RESOURCES_APPLIED: &str = "ResourcesApplied";

/// Why resources are not applied, in the order the condition's reason prefers them.
pub mod reasons {
    /// A Secret is not of type `addons.cluster.x-k8s.io/resource-set`.
    pub const WRONG_SECRET_TYPE: &str = "WrongSecretType";
    /// A resource is missing or its data does not hold objects.
    pub const RETRIEVING_RESOURCE_FAILED: &str = "RetrievingResourceFailed";
    /// The workload cluster cannot be reached (no kubeconfig, or it does not answer).
    pub const REMOTE_CLUSTER_CLIENT_FAILED: &str = "RemoteClusterClientFailed";
    /// The workload cluster refused an object.
    pub const APPLY_FAILED: &str = "ApplyFailed";
    /// The set's selector does not parse.
    pub const CLUSTER_MATCH_FAILED: &str = "ClusterMatchFailed";
}

/// Most Clusters a condition message names; the rest are counted.
pub const MAX_CLUSTERS_LISTED: usize = 10;

/// Something that keeps resources from being applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// One of [`reasons`].
    pub reason: &'static str,
    /// What failed, with no time or attempt count in it.
    pub message: String,
}

impl Problem {
    /// A problem for `reason` saying `message`.
    pub fn new(reason: &'static str, message: impl Into<String>) -> Problem {
        Problem {
            reason,
            message: message.into(),
        }
    }
}

impl From<&ResourceError> for Problem {
    /// A resource that cannot be read: a Secret of the wrong type, or data without objects.
    fn from(error: &ResourceError) -> Problem {
        let reason = match error {
            ResourceError::WrongSecretType(_) => reasons::WRONG_SECRET_TYPE,
            _ => reasons::RETRIEVING_RESOURCE_FAILED,
        };
        Problem::new(reason, error.to_string())
    }
}

/// What is wrong with a set: its unreadable resources, and its failures by Cluster name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetProblems {
    /// Resources that cannot be read, by resource.
    pub resources: BTreeMap<ResourceRef, Problem>,
    /// Clusters the resources could not be applied to, by Cluster name.
    pub clusters: BTreeMap<String, Problem>,
}

impl SetProblems {
    /// True when nothing is wrong.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.clusters.is_empty()
    }
}

/// The `ResourcesApplied` condition for `problems`, stamped `now`.
pub fn resources_applied(problems: &SetProblems, now: &str) -> Value {
    if problems.is_empty() {
        return json!({"type": RESOURCES_APPLIED, "status": "True", "lastTransitionTime": now});
    }
    let reason = problems
        .resources
        .values()
        .chain(problems.clusters.values())
        .map(|p| p.reason)
        .min_by_key(|reason| rank(reason))
        .unwrap_or(reasons::APPLY_FAILED);
    let mut lines: Vec<String> = problems
        .resources
        .iter()
        .map(|(resource, problem)| format!("{} {}: {}", resource.kind, resource.name, problem.message))
        .collect();
    lines.extend(
        problems
            .clusters
            .iter()
            .take(MAX_CLUSTERS_LISTED)
            .map(|(cluster, problem)| format!("Cluster {cluster}: {}", problem.message)),
    );
    let unlisted = problems.clusters.len().saturating_sub(MAX_CLUSTERS_LISTED);
    if unlisted > 0 {
        lines.push(format!("and {unlisted} more Clusters"));
    }
    let severity = if reason == reasons::REMOTE_CLUSTER_CLIENT_FAILED {
        "Error"
    } else {
        "Warning"
    };
    json!({"type": RESOURCES_APPLIED, "status": "False", "severity": severity, "reason": reason,
           "message": lines.join("; "), "lastTransitionTime": now})
}

/// The metav1 twin of a v1beta1 `ResourcesApplied` condition made by [`resources_applied`]: the
/// same status and message, the reason as Cluster API v1.14 names it, without a transition time.
pub fn meta_resources_applied(condition: &Value) -> Value {
    let reason = match condition["reason"].as_str() {
        None if condition["status"] == "True" => "Applied",
        Some(reasons::WRONG_SECRET_TYPE) => "WrongSecretType",
        Some(reasons::APPLY_FAILED) => "NotApplied",
        _ => "InternalError",
    };
    json!({"type": RESOURCES_APPLIED, "status": condition["status"], "reason": reason,
           "message": condition["message"].as_str().unwrap_or_default()})
}

fn rank(reason: &str) -> usize {
    [
        reasons::CLUSTER_MATCH_FAILED,
        reasons::WRONG_SECRET_TYPE,
        reasons::RETRIEVING_RESOURCE_FAILED,
        reasons::REMOTE_CLUSTER_CLIENT_FAILED,
        reasons::APPLY_FAILED,
    ]
    .iter()
    .position(|r| *r == reason)
    .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str) -> ResourceRef {
        ResourceRef {
            name: name.to_owned(),
            kind: "Secret".to_owned(),
        }
    }

    #[test]
    fn nothing_wrong_is_true() {
        let condition = resources_applied(&SetProblems::default(), "2024-01-01T00:00:00Z");
        assert_eq!(
            condition,
            json!({"type": "ResourcesApplied", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"})
        );
    }

    #[test]
    fn resources_then_clusters_are_named_and_the_worst_reason_wins() {
        let mut problems = SetProblems::default();
        problems.clusters.insert(
            "b".to_owned(),
            Problem::new(reasons::APPLY_FAILED, "creating Namespace x: forbidden"),
        );
        problems.clusters.insert(
            "a".to_owned(),
            Problem::new(reasons::REMOTE_CLUSTER_CLIENT_FAILED, "connection refused"),
        );
        let condition = resources_applied(&problems, "t");
        assert_eq!(condition["reason"], "RemoteClusterClientFailed");
        assert_eq!(condition["severity"], "Error");
        assert_eq!(
            condition["message"],
            "Cluster a: connection refused; Cluster b: creating Namespace x: forbidden"
        );
        problems.resources.insert(
            secret("db"),
            Problem::new(reasons::WRONG_SECRET_TYPE, "unsupported secret type \"Opaque\""),
        );
        let condition = resources_applied(&problems, "t");
        assert_eq!(condition["reason"], "WrongSecretType");
        assert_eq!(condition["severity"], "Warning");
        assert!(condition["message"]
            .as_str()
            .unwrap()
            .starts_with("Secret db: unsupported secret type \"Opaque\"; Cluster a:"));
    }

    #[test]
    fn the_metav1_twin_uses_the_v1beta2_reasons() {
        let reason = |problem: Problem| {
            let mut problems = SetProblems::default();
            problems.clusters.insert("a".to_owned(), problem);
            meta_resources_applied(&resources_applied(&problems, "t"))["reason"].clone()
        };
        assert_eq!(reason(Problem::new(reasons::APPLY_FAILED, "x")), "NotApplied");
        assert_eq!(
            reason(Problem::new(reasons::WRONG_SECRET_TYPE, "x")),
            "WrongSecretType"
        );
        assert_eq!(
            reason(Problem::new(reasons::REMOTE_CLUSTER_CLIENT_FAILED, "x")),
            "InternalError"
        );
        let applied = meta_resources_applied(&resources_applied(&SetProblems::default(), "t"));
        assert_eq!(
            applied,
            json!({"type": "ResourcesApplied", "status": "True", "reason": "Applied", "message": ""})
        );
    }

    #[test]
    fn many_failing_clusters_are_counted_past_the_first_ten() {
        let mut problems = SetProblems::default();
        for i in 0..25 {
            problems
                .clusters
                .insert(format!("c{i:02}"), Problem::new(reasons::APPLY_FAILED, "refused"));
        }
        let message = resources_applied(&problems, "t")["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(message.matches("Cluster c").count(), MAX_CLUSTERS_LISTED);
        assert!(
            message.ends_with("Cluster c09: refused; and 15 more Clusters"),
            "{message}"
        );
    }
}
