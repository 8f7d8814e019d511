//! Machine (cluster.x-k8s.io/v1beta2): one node of a Cluster, with its bootstrap and
//! infrastructure objects.

use k8s_openapi::api::core::v1::NodeSystemInfo;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{
    is_default, ContractVersionedObjectReference, MachineDeletionSpec, MachineReadinessGate, MachineTaint,
    MetaCondition, ObjectMeta, Time,
};

/// A Machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    /// `cluster.x-k8s.io/v1beta2`.
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
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
    /// How the Machine's node is bootstrapped.
    #[serde(default, skip_serializing_if = "is_default")]
    pub bootstrap: Bootstrap,
    /// The provider's machine object.
    #[serde(default, skip_serializing_if = "ContractVersionedObjectReference::is_unset")]
    pub infrastructure_ref: ContractVersionedObjectReference,
    /// The Kubernetes version the node runs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// The provider's ID of the machine, matching the Node's `spec.providerID`.
    #[serde(default, rename = "providerID", skip_serializing_if = "String::is_empty")]
    pub provider_id: String,
    /// The failure domain the Machine is placed in.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub failure_domain: String,
    /// Seconds the Machine must be ready to count as available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Conditions that gate the Machine's readiness.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_condition_type)]
    pub readiness_gates: Vec<MachineReadinessGate>,
    /// How the Machine is deleted (`order` does not apply).
    #[serde(default, skip_serializing_if = "is_default")]
    #[schemars(transform = crate::api::narrowed::deletion_without_order)]
    pub deletion: MachineDeletionSpec,
    /// Taints put on the Node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_key_and_effect)]
    pub taints: Vec<MachineTaint>,
}

/// Where a Machine's bootstrap data comes from: a config object or a ready Secret.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bootstrap {
    /// The bootstrap provider's config object.
    #[serde(default, skip_serializing_if = "ContractVersionedObjectReference::is_unset")]
    pub config_ref: ContractVersionedObjectReference,
    /// The Secret holding the bootstrap data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_secret_name: Option<String>,
}

/// What the Machine controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineStatus {
    /// Conditions, e.g. `Ready`, `UpToDate`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_type)]
    pub conditions: Vec<MetaCondition>,
    /// Provisioning milestones.
    #[serde(default, skip_serializing_if = "is_default")]
    pub initialization: MachineInitializationStatus,
    /// The Node backing the Machine.
    #[serde(default, skip_serializing_if = "is_default")]
    pub node_ref: MachineNodeReference,
    /// The Node's system information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::api::narrowed::node_info_of_kubernetes_1_34)]
    pub node_info: Option<NodeSystemInfo>,
    /// When the phase last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<Time>,
    /// The Machine's addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<MachineAddress>,
    /// The failure domain the Machine runs in.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub failure_domain: String,
    /// `Pending`, `Provisioning`, `Provisioned`, `Running`, `Updating`, `Deleting`, `Deleted`,
    /// `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// When the node's certificates expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificates_expiry_date: Option<Time>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Progress of the Machine's deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion: Option<MachineDeletionStatus>,
    /// What v1beta1 reported: its conditions and failure fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<super::MachineDeprecatedStatus>,
}

/// Provisioning milestones of a Machine or MachinePool (`status.initialization`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineInitializationStatus {
    /// The infrastructure machine is provisioned (v1beta1 `infrastructureReady`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_provisioned: Option<bool>,
    /// The bootstrap data Secret exists (v1beta1 `bootstrapReady`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_data_secret_created: Option<bool>,
}

/// The Node of a Machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineNodeReference {
    /// The Node's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
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
    /// When waiting for pre-drain hooks started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_pre_drain_hook_start_time: Option<Time>,
    /// When waiting for pre-terminate hooks started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_pre_terminate_hook_start_time: Option<Time>,
}
