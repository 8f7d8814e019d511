//! Machine (cluster.x-k8s.io/v1beta1): one node of a Cluster, with its bootstrap and
//! infrastructure objects.

use k8s_openapi::api::core::v1::NodeSystemInfo;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Condition, MachineReadinessGate, ObjectMeta, ObjectReference, Time, V1Beta2Conditions};

/// A Machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    /// `cluster.x-k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `Machine`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: MachineSpec,
    /// The observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MachineStatus>,
}

/// The desired state of a Machine (also the template of MachineSets, MachineDeployments and
/// MachinePools).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineSpec {
    /// The Cluster the Machine belongs to.
    #[serde(default)]
    pub cluster_name: String,
    /// How the Machine's node is bootstrapped.
    #[serde(default)]
    pub bootstrap: Bootstrap,
    /// The provider's machine object.
    #[serde(default)]
    pub infrastructure_ref: ObjectReference,
    /// The Kubernetes version the node runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The provider's ID of the machine, matching the Node's `spec.providerID`.
    #[serde(default, rename = "providerID", skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// The failure domain the Machine is placed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    /// Conditions that gate the Machine's readiness.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readiness_gates: Vec<MachineReadinessGate>,
    /// How long to drain the Node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout: Option<String>,
    /// How long to wait for volumes to detach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout: Option<String>,
    /// How long to wait for the Node to be deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout: Option<String>,
}

/// Where a Machine's bootstrap data comes from: a config object or a ready Secret.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bootstrap {
    /// The bootstrap provider's config object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_ref: Option<ObjectReference>,
    /// The Secret holding the bootstrap data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_secret_name: Option<String>,
}

/// What the Machine controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineStatus {
    /// The Node backing the Machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_ref: Option<ObjectReference>,
    /// The Node's system information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_info: Option<NodeSystemInfo>,
    /// When the phase last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<Time>,
    /// A terminal problem, machine-readable (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// A terminal problem, human-readable (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    /// The Machine's addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<MachineAddress>,
    /// `Pending`, `Provisioning`, `Provisioned`, `Running`, `Deleting`, `Deleted`, `Failed` or
    /// `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// When the node's certificates expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificates_expiry_date: Option<Time>,
    /// Whether the bootstrap data is ready.
    #[serde(default)]
    pub bootstrap_ready: bool,
    /// Whether the infrastructure machine is ready.
    #[serde(default)]
    pub infrastructure_ready: bool,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// v1beta1 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Progress of the Machine's deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionStatus>,
    /// v1beta2 conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

/// One address of a Machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineAddress {
    /// `Hostname`, `ExternalIP`, `InternalIP`, `ExternalDNS` or `InternalDNS`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The address.
    pub address: String,
}

/// When the steps of a Machine's deletion started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeletionStatus {
    /// When draining the Node started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_drain_start_time: Option<Time>,
    /// When waiting for volumes to detach started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_node_volume_detach_start_time: Option<Time>,
}
