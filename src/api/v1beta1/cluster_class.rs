//! ClusterClass (cluster.x-k8s.io/v1beta1): the blueprint a managed topology is built from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster_class_patches::ClusterClassPatch;
use super::common::{
    ClusterAvailabilityGate, Condition, LocalObjectTemplate, MachineDeploymentStrategy,
    MachineHealthCheckClass, MachineReadinessGate, ObjectMeta, ObjectReference, TopologyMetadata,
    V1Beta2Conditions,
};
use super::variables::{ClusterClassStatusVariable, ClusterClassVariable};
use crate::api::MachineTaint;

/// A ClusterClass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClass {
    /// `cluster.x-k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `ClusterClass`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The blueprint.
    #[serde(default)]
    pub spec: ClusterClassSpec,
    /// What the ClusterClass reconciler observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ClusterClassStatus>,
}

/// The blueprint of a ClusterClass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassSpec {
    /// Conditions that gate the availability of Clusters of this class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_condition_type)]
    pub availability_gates: Vec<ClusterAvailabilityGate>,
    /// The infrastructure cluster template.
    #[serde(default)]
    pub infrastructure: LocalObjectTemplate,
    /// How infrastructure clusters are named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_naming_strategy: Option<NamingStrategy>,
    /// The control plane.
    #[serde(default)]
    pub control_plane: ControlPlaneClass,
    /// Worker classes.
    #[serde(default)]
    pub workers: WorkersClass,
    /// Variables Clusters of this class may set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<ClusterClassVariable>,
    /// Patches applied to the templates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<ClusterClassPatch>,
    /// How Clusters of this class are upgraded (backported from v1beta2 in Cluster API v1.14,
    /// same shape).
    #[serde(default, skip_serializing_if = "crate::api::is_default")]
    pub upgrade: crate::api::ClusterClassUpgrade,
    /// The Kubernetes versions Clusters of this class may use, in upgrade order (backported from
    /// v1beta2 in Cluster API v1.14).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 100))]
    pub kubernetes_versions: Vec<String>,
}

/// A Go template for generated names (`{{ .cluster.name }}-{{ .random }}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamingStrategy {
    /// The template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
}

/// The control plane of a ClusterClass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneClass {
    /// Labels and annotations for the control plane object.
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub metadata: TopologyMetadata,
    /// The control plane template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<ObjectReference>,
    /// The infrastructure machine template of control plane machines, when the provider uses one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_infrastructure: Option<LocalObjectTemplate>,
    /// The control plane's MachineHealthCheck.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheckClass>,
    /// How control plane objects are named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub naming_strategy: Option<NamingStrategy>,
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
}

/// The worker classes of a ClusterClass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkersClass {
    /// MachineDeployment classes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_class)]
    pub machine_deployments: Vec<MachineDeploymentClass>,
    /// MachinePool classes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_class)]
    pub machine_pools: Vec<MachinePoolClass>,
}

/// The templates of a worker class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerClassTemplate {
    /// Labels and annotations for the generated objects.
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub metadata: TopologyMetadata,
    /// The bootstrap config template.
    #[serde(default)]
    pub bootstrap: LocalObjectTemplate,
    /// The infrastructure machine (or machine pool) template.
    #[serde(default)]
    pub infrastructure: LocalObjectTemplate,
}

/// A MachineDeployment class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentClass {
    /// The class's name, referenced by topologies.
    pub class: String,
    /// Its templates.
    #[serde(default)]
    pub template: WorkerClassTemplate,
    /// Its MachineHealthCheck.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_health_check: Option<MachineHealthCheckClass>,
    /// The default failure domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_domain: Option<String>,
    /// How MachineDeployments are named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub naming_strategy: Option<NamingStrategy>,
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
    /// The rollout strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<MachineDeploymentStrategy>,
}

/// A MachinePool class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolClass {
    /// The class's name, referenced by topologies.
    pub class: String,
    /// Its templates.
    #[serde(default)]
    pub template: WorkerClassTemplate,
    /// The default failure domains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_domains: Vec<String>,
    /// How MachinePools are named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub naming_strategy: Option<NamingStrategy>,
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
}

/// What the ClusterClass reconciler observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatus {
    /// Every variable with its definitions (inline and external).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<ClusterClassStatusVariable>,
    /// v1beta1 conditions, e.g. `VariablesReconciled`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// v1beta2 conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}
