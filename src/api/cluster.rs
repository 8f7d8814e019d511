//! Cluster (cluster.x-k8s.io/v1beta2), with the managed topology it may carry.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::cluster_status::ClusterStatus;
use super::common::{
    is_default, ClusterAvailabilityGate, ContractVersionedObjectReference, MachineDeletionSpec,
    MachineDeploymentRolloutStrategy, MachineHealthCheckChecks, MachineHealthCheckRemediation,
    MachineReadinessGate, MachineTaint, ObjectMeta, Time, TopologyMetadata,
};
use super::variables::{ClusterVariable, VariableOverrides};

/// A Cluster. Its serde implementations (in `cluster_definition_from.rs`) also carry each
/// variable's `definitionFrom` to and from the `V1BETA1_FIELDS` annotation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct Cluster {
    /// `cluster.x-k8s.io/v1beta2`.
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Cluster networking.
    #[serde(default, skip_serializing_if = "is_default")]
    pub cluster_network: ClusterNetwork,
    /// Where the API server is reached.
    #[serde(default, skip_serializing_if = "is_default")]
    pub control_plane_endpoint: ApiEndpoint,
    /// The control plane object.
    #[serde(default, skip_serializing_if = "ContractVersionedObjectReference::is_unset")]
    pub control_plane_ref: ContractVersionedObjectReference,
    /// The infrastructure cluster object.
    #[serde(default, skip_serializing_if = "ContractVersionedObjectReference::is_unset")]
    pub infrastructure_ref: ContractVersionedObjectReference,
    /// The managed topology, when the Cluster is built from a ClusterClass.
    #[serde(default, skip_serializing_if = "Topology::is_unset")]
    pub topology: Topology,
    /// Conditions that gate the Cluster's availability.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_condition_type)]
    pub availability_gates: Vec<ClusterAvailabilityGate>,
}

impl ClusterSpec {
    /// True when the Cluster is paused.
    pub fn is_paused(&self) -> bool {
        self.paused.unwrap_or(false)
    }

    /// The topology, when the Cluster is built from a ClusterClass (a class name is set).
    pub fn managed_topology(&self) -> Option<&Topology> {
        (!self.topology.class_ref.name.is_empty()).then_some(&self.topology)
    }
}

/// Host and port of an API server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiEndpoint {
    /// The host name or IP.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    /// The port.
    #[serde(default, skip_serializing_if = "is_default")]
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
    #[serde(default, skip_serializing_if = "is_default")]
    pub services: NetworkRanges,
    /// Pod CIDRs.
    #[serde(default, skip_serializing_if = "is_default")]
    pub pods: NetworkRanges,
    /// The service DNS domain.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub service_domain: String,
}

/// A list of CIDR blocks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkRanges {
    /// The CIDR blocks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cidr_blocks: Vec<String>,
}

/// The ClusterClass a topology is built from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassRef {
    /// The ClusterClass's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// The ClusterClass's namespace; empty means the Cluster's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 63))]
    pub namespace: String,
}

/// A Cluster's managed topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    /// The ClusterClass.
    #[serde(default, skip_serializing_if = "is_default")]
    pub class_ref: ClusterClassRef,
    /// The Kubernetes version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// The control plane.
    #[serde(default, skip_serializing_if = "ControlPlaneTopology::is_unset")]
    pub control_plane: ControlPlaneTopology,
    /// The worker pools.
    #[serde(default, skip_serializing_if = "is_default")]
    pub workers: WorkersTopology,
    /// The v1beta1 topology-wide `rolloutAfter` the Cluster was written with: v1beta2 has no
    /// such field. Decoding fills it from the `V1BETA1_FIELDS` annotation the conversion keeps it
    /// in; it is never serialised (the annotation stays as written).
    #[serde(skip)]
    pub v1beta1_rollout_after: Option<String>,
    /// Values of the class's variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_name)]
    pub variables: Vec<ClusterVariable>,
}

impl Topology {
    /// True when nothing is set (serialised as absent: the Cluster has no managed topology).
    pub fn is_unset(&self) -> bool {
        is_default(self)
    }
}

/// The health check of a topology part: the class's, switched on or off, with settings that
/// replace the class's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckTopology {
    /// Whether to create the MachineHealthCheck (default: when the class or the topology defines
    /// checks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// What makes a Machine unhealthy.
    #[serde(default, skip_serializing_if = "is_default")]
    pub checks: MachineHealthCheckChecks,
    /// How unhealthy Machines are remediated.
    #[serde(default, skip_serializing_if = "is_default")]
    pub remediation: MachineHealthCheckRemediation,
}

impl MachineHealthCheckTopology {
    /// True when nothing is set.
    pub fn is_unset(&self) -> bool {
        is_default(self)
    }

    /// True when checks or remediation are set, replacing the class's.
    pub fn is_defined(&self) -> bool {
        !is_default(&self.checks) || !is_default(&self.remediation)
    }
}

/// How the control plane is rolled out (`rollout`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneTopologyRolloutSpec {
    /// Machines created before this time are rolled out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Time>,
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
    /// When Machines are rolled out.
    #[serde(default, skip_serializing_if = "is_default")]
    pub rollout: ControlPlaneTopologyRolloutSpec,
    /// The control plane's MachineHealthCheck.
    #[serde(default, skip_serializing_if = "MachineHealthCheckTopology::is_unset")]
    #[schemars(transform = crate::api::narrowed::health_check_without_max_in_flight)]
    pub health_check: MachineHealthCheckTopology,
    /// How Machines are deleted (`order` is not allowed here).
    #[serde(default, skip_serializing_if = "is_default")]
    #[schemars(transform = crate::api::narrowed::deletion_without_order)]
    pub deletion: MachineDeletionSpec,
    /// Taints put on the Nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 64))]
    #[schemars(transform = crate::api::list_map::by_key_and_effect)]
    pub taints: Vec<MachineTaint>,
    /// Conditions that gate Machine readiness.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_condition_type)]
    pub readiness_gates: Vec<MachineReadinessGate>,
    /// Variable overrides for the control plane.
    #[serde(default, skip_serializing_if = "VariableOverrides::is_empty")]
    pub variables: VariableOverrides,
}

impl ControlPlaneTopology {
    /// True when nothing is set (serialised as absent).
    pub fn is_unset(&self) -> bool {
        is_default(self)
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

/// How a MachineDeployment of a topology is rolled out (`rollout`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentTopologyRolloutSpec {
    /// Machines created before this time are rolled out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Time>,
    /// The rollout strategy, replacing the class's.
    #[serde(default, skip_serializing_if = "is_default")]
    pub strategy: MachineDeploymentRolloutStrategy,
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
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub class: String,
    /// The name, unique in the topology.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The failure domain; empty means the class's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub failure_domain: String,
    /// Machines; unset leaves it to the autoscaler or the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Its MachineHealthCheck.
    #[serde(default, skip_serializing_if = "MachineHealthCheckTopology::is_unset")]
    pub health_check: MachineHealthCheckTopology,
    /// How Machines are deleted.
    #[serde(default, skip_serializing_if = "is_default")]
    pub deletion: MachineDeletionSpec,
    /// Taints put on the Nodes.
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
    /// When and how Machines are rolled out.
    #[serde(default, skip_serializing_if = "is_default")]
    pub rollout: MachineDeploymentTopologyRolloutSpec,
    /// Variable overrides for this MachineDeployment.
    #[serde(default, skip_serializing_if = "VariableOverrides::is_empty")]
    pub variables: VariableOverrides,
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
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub class: String,
    /// The name, unique in the topology.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The failure domains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_domains: Vec<String>,
    /// How Machines are deleted (`order` is not allowed here).
    #[serde(default, skip_serializing_if = "is_default")]
    #[schemars(transform = crate::api::narrowed::deletion_without_order)]
    pub deletion: MachineDeletionSpec,
    /// Taints put on the Nodes.
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
    #[serde(default, skip_serializing_if = "VariableOverrides::is_empty")]
    pub variables: VariableOverrides,
}
