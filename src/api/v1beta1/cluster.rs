//! Cluster (cluster.x-k8s.io/v1beta1), with the managed topology it may carry.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::cluster_status::ClusterStatus;
use super::common::{
    ClusterAvailabilityGate, MachineDeploymentStrategy, MachineHealthCheckClass, MachineReadinessGate,
    ObjectMeta, ObjectReference, Time, TopologyMetadata,
};
use super::variables::{ClusterVariable, VariableOverrides};
use crate::api::MachineTaint;

/// A Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    /// `cluster.x-k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `Cluster`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: ClusterSpec,
    /// The observed state. Admission never reads it, so it is kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ClusterStatus>")]
    pub status: Option<Value>,
}

impl Cluster {
    /// The status decoded into [`ClusterStatus`]; `Ok(None)` when the Cluster has none.
    pub fn typed_status(&self) -> Result<Option<ClusterStatus>, serde_json::Error> {
        self.status.as_ref().map(ClusterStatus::deserialize).transpose()
    }
}

/// The desired state of a Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// Stops reconciliation of the Cluster and its objects.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    /// Cluster networking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_network: Option<ClusterNetwork>,
    /// Where the API server is reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_endpoint: Option<ApiEndpoint>,
    /// The control plane object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_ref: Option<ObjectReference>,
    /// The infrastructure cluster object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_ref: Option<ObjectReference>,
    /// The managed topology, when the Cluster is built from a ClusterClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// Conditions that gate the Cluster's availability.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_condition_type)]
    pub availability_gates: Vec<ClusterAvailabilityGate>,
}

/// Host and port of an API server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiEndpoint {
    /// The host name or IP.
    #[serde(default)]
    pub host: String,
    /// The port.
    #[serde(default)]
    pub port: i32,
}

/// Cluster networking.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterNetwork {
    /// The API server port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_server_port: Option<i32>,
    /// Service CIDRs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<NetworkRanges>,
    /// Pod CIDRs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<NetworkRanges>,
    /// The service DNS domain.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub service_domain: String,
}

/// A list of CIDR blocks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkRanges {
    /// The CIDR blocks.
    #[serde(default)]
    pub cidr_blocks: Vec<String>,
}

/// A Cluster's managed topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    /// The ClusterClass's name.
    #[serde(default)]
    pub class: String,
    /// The ClusterClass's namespace; empty means the Cluster's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_namespace: Option<String>,
    /// The Kubernetes version.
    #[serde(default)]
    pub version: String,
    /// Machines created before this time are rolled out (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_after: Option<Time>,
    /// The control plane.
    #[serde(default, skip_serializing_if = "ControlPlaneTopology::is_unset")]
    pub control_plane: ControlPlaneTopology,
    /// The worker pools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkersTopology>,
    /// Values of the class's variables. Not a list map, unlike Cluster API v1.14's: seed 003 lets
    /// a Cluster set one value per definition of a name (`definitionFrom`), so names may repeat.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<ClusterVariable>,
}

/// MachineHealthCheck settings of a topology part.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckTopology {
    /// Whether to create the MachineHealthCheck (default: when the class defines one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable: Option<bool>,
    /// Settings that replace the class's.
    #[serde(flatten)]
    pub class: MachineHealthCheckClass,
}

/// When the Machines of a control plane or a MachineDeployment are rolled out (`rollout`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyRolloutSpec {
    /// Machines created before this time are rolled out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Time>,
}

impl TopologyRolloutSpec {
    /// True when nothing is set (serialised as absent).
    pub fn is_unset(&self) -> bool {
        self.after.is_none()
    }
}

/// The control plane of a topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneTopology {
    /// Labels and annotations for the control plane.
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub metadata: TopologyMetadata,
    /// Control plane machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// When Machines are rolled out (backported from v1beta2 in Cluster API v1.13).
    #[serde(default, skip_serializing_if = "TopologyRolloutSpec::is_unset")]
    pub rollout: TopologyRolloutSpec,
    /// The control plane's MachineHealthCheck.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheckTopology>,
    /// How long to drain a Node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout: Option<String>,
    /// How long to wait for volumes to detach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout: Option<String>,
    /// How long to wait for a Node to be deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout: Option<String>,
    /// Taints put on the Nodes (backported from v1beta2 in Cluster API v1.13).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 64))]
    #[schemars(transform = crate::api::list_map::by_key_and_effect)]
    pub taints: Vec<MachineTaint>,
    /// Conditions that gate Machine readiness.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_condition_type)]
    pub readiness_gates: Vec<MachineReadinessGate>,
    /// Variable overrides for the control plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<VariableOverrides>,
}

impl ControlPlaneTopology {
    /// True when nothing is set (serialised as absent).
    pub fn is_unset(&self) -> bool {
        *self == Self::default()
    }
}

/// The worker pools of a topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkersTopology {
    /// MachineDeployments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_name)]
    pub machine_deployments: Vec<MachineDeploymentTopology>,
    /// MachinePools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_name)]
    pub machine_pools: Vec<MachinePoolTopology>,
}

/// A MachineDeployment of a topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentTopology {
    /// Labels and annotations for the MachineDeployment.
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub metadata: TopologyMetadata,
    /// The MachineDeployment class.
    #[serde(default)]
    pub class: String,
    /// The name, unique in the topology.
    #[serde(default)]
    pub name: String,
    /// The failure domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    /// Machines; unset leaves it to the autoscaler or the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Its MachineHealthCheck.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheckTopology>,
    /// How long to drain a Node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout: Option<String>,
    /// How long to wait for volumes to detach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout: Option<String>,
    /// How long to wait for a Node to be deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout: Option<String>,
    /// Taints put on the Nodes (backported from v1beta2 in Cluster API v1.13).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 64))]
    #[schemars(transform = crate::api::list_map::by_key_and_effect)]
    pub taints: Vec<MachineTaint>,
    /// Seconds a Machine must be ready to count as available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Conditions that gate Machine readiness.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_condition_type)]
    pub readiness_gates: Vec<MachineReadinessGate>,
    /// When Machines are rolled out (backported from v1beta2 in Cluster API v1.13).
    #[serde(default, skip_serializing_if = "TopologyRolloutSpec::is_unset")]
    pub rollout: TopologyRolloutSpec,
    /// The rollout strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<MachineDeploymentStrategy>,
    /// Variable overrides for this MachineDeployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<VariableOverrides>,
}

/// A MachinePool of a topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolTopology {
    /// Labels and annotations for the MachinePool.
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub metadata: TopologyMetadata,
    /// The MachinePool class.
    #[serde(default)]
    pub class: String,
    /// The name, unique in the topology.
    #[serde(default)]
    pub name: String,
    /// The failure domains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_domains: Vec<String>,
    /// How long to drain a Node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout: Option<String>,
    /// How long to wait for volumes to detach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout: Option<String>,
    /// How long to wait for a Node to be deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout: Option<String>,
    /// Taints put on the Nodes (backported from v1beta2 in Cluster API v1.13).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 64))]
    #[schemars(transform = crate::api::list_map::by_key_and_effect)]
    pub taints: Vec<MachineTaint>,
    /// Seconds a Machine must be ready to count as available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Machines; unset leaves it to the autoscaler or the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Variable overrides for this MachinePool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<VariableOverrides>,
}
