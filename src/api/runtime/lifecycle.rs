//! The lifecycle hooks (BeforeClusterCreate … BeforeClusterDelete) and the GenerateUpgradePlan
//! hook of hooks.runtime.cluster.x-k8s.io/v1alpha1, with Cluster API v1.14's JSON names. Every
//! lifecycle request carries the v1beta2 Cluster; the upgrade hooks add the versions and the
//! plan's steps. One request and one response type serve all lifecycle hooks: their bodies
//! differ only in which of the optional fields are set, and `kind` names the hook.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ResponseStatus;
use crate::api::convert::{CONVERSION_DATA, V1BETA1_FIELDS};

/// The annotation a Cluster gets once its BeforeClusterDelete hook let it go (its objects may
/// then be deleted), as Cluster API v1.14 names it.
pub const OK_TO_DELETE_ANNOTATION: &str = "runtime.cluster.x-k8s.io/ok-to-delete";

/// Annotations a hook request leaves out of the Cluster: kubectl's copy of what it applied and
/// the conversion's kept fields (size only, as Cluster API's `cleanupCluster`).
const LEFT_OUT_ANNOTATIONS: [&str; 3] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    CONVERSION_DATA,
    V1BETA1_FIELDS,
];

/// One version of an upgrade plan (`UpgradeStepInfo` in requests, `UpgradeStep` in answers).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpgradeStep {
    /// The Kubernetes version of this step.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
}

/// The request of a lifecycle hook; `kind` is `<Hook>Request`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleRequest {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `<Hook>Request`, e.g. `BeforeClusterUpgradeRequest`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The ExtensionConfig's settings (filled in per handler by the client).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// The Cluster (v1beta2), without managedFields.
    pub cluster: Value,
    /// The version upgraded from (BeforeClusterUpgrade, BeforeControlPlaneUpgrade,
    /// BeforeWorkersUpgrade).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_kubernetes_version: Option<String>,
    /// The version upgraded to (same hooks as `from_kubernetes_version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_kubernetes_version: Option<String>,
    /// The version reached (AfterControlPlaneUpgrade, AfterWorkersUpgrade, AfterClusterUpgrade).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// The control plane steps still ahead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub control_plane_upgrades: Vec<UpgradeStep>,
    /// The worker steps still ahead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers_upgrades: Vec<UpgradeStep>,
}

impl LifecycleRequest {
    /// The request of a hook for the (v1beta2) Cluster `cluster`, sent without its status, its
    /// managedFields and the annotations only size is lost with (as Cluster API's
    /// `cleanupCluster`); the client fills in `apiVersion` and `kind`.
    pub fn for_cluster(cluster: &Value) -> Self {
        let mut cluster = cluster.clone();
        if let Some(fields) = cluster.as_object_mut() {
            fields.remove("status");
        }
        if let Some(metadata) = cluster.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("managedFields");
            if let Some(annotations) = metadata.get_mut("annotations").and_then(Value::as_object_mut) {
                for key in LEFT_OUT_ANNOTATIONS {
                    annotations.remove(key);
                }
            }
        }
        Self {
            cluster,
            ..Self::default()
        }
    }
}

/// The answer of a lifecycle hook. A non-zero `retryAfterSeconds` blocks what the hook guards
/// (blocking hooks only) and asks to be called again after that many seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleResponse {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `<Hook>Response`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Success or failure of the call.
    pub status: ResponseStatus,
    /// The extension's message (why it blocks, or why it failed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Seconds until the hook is to be called again; 0 lets the operation proceed.
    #[serde(default)]
    pub retry_after_seconds: i32,
}

/// The request of the GenerateUpgradePlan hook.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateUpgradePlanRequest {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `GenerateUpgradePlanRequest`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The ExtensionConfig's settings (filled in per handler by the client).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// The Cluster (v1beta2), without managedFields.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub cluster: Value,
    /// The version the control plane runs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub from_control_plane_kubernetes_version: String,
    /// The oldest version the workers run.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub from_workers_kubernetes_version: String,
    /// `spec.topology.version`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub to_kubernetes_version: String,
}

/// The answer of the GenerateUpgradePlan hook: the steps, in order, the last one the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateUpgradePlanResponse {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `GenerateUpgradePlanResponse`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Success or failure of the call.
    pub status: ResponseStatus,
    /// Why the call failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The control plane's steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub control_plane_upgrades: Vec<UpgradeStep>,
    /// The workers' steps (optional: when empty the skew policy decides).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers_upgrades: Vec<UpgradeStep>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_hook_request_carries_the_cluster_without_status_managed_fields_or_bulky_annotations() {
        let cluster = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "dev", "namespace": "default", "managedFields": [{"manager": "kubectl"}],
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}",
                    CONVERSION_DATA: "{}", "team": "blue"}},
            "spec": {"topology": {"version": "v1.33.0"}},
            "status": {"phase": "Provisioned"},
        });
        let request = LifecycleRequest::for_cluster(&cluster);
        assert_eq!(
            request.cluster,
            json!({
                "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                "metadata": {"name": "dev", "namespace": "default", "annotations": {"team": "blue"}},
                "spec": {"topology": {"version": "v1.33.0"}},
            })
        );
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({"cluster": request.cluster}),
            "the client fills in apiVersion and kind"
        );
    }
}
