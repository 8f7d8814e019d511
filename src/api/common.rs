//! Types shared by several cluster.x-k8s.io/v1beta2 kinds: metadata, references, conditions,
//! taints, health checks and the serde helpers the wire types use.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use k8s_openapi::api::core::v1::ObjectReference;
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as MetaCondition, ObjectMeta, Time};

/// Decodes `null` as the type's default (Go decodes `labels: null` as an empty map).
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// True for a value equal to its type's default: how a Go `omitzero` struct field is left out.
pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// Labels and annotations a topology propagates to generated objects (Cluster API's
/// `clusterv1.ObjectMeta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopologyMetadata {
    /// Labels to set.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub labels: BTreeMap<String, String>,
    /// Annotations to set.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub annotations: BTreeMap<String, String>,
}

impl TopologyMetadata {
    /// True when neither labels nor annotations are set.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.annotations.is_empty()
    }
}

/// A reference to an object whose apiVersion follows the provider's contract version: only the
/// group is stored, the version is looked up from the CRD's contract label.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContractVersionedObjectReference {
    /// The kind, e.g. `DockerCluster`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The name, in the referrer's namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The API group, e.g. `infrastructure.cluster.x-k8s.io`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_group: String,
}

impl ContractVersionedObjectReference {
    /// True when no field is set (the reference is absent).
    pub fn is_unset(&self) -> bool {
        self.kind.is_empty() && self.name.is_empty() && self.api_group.is_empty()
    }
}

/// A reference to a template a ClusterClass uses, in the ClusterClass's namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassTemplateReference {
    /// The template's kind.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The template's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The template's apiVersion, e.g. `infrastructure.cluster.x-k8s.io/v1beta2`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
}

impl ClusterClassTemplateReference {
    /// True when no field is set (the reference is absent).
    pub fn is_unset(&self) -> bool {
        self.kind.is_empty() && self.name.is_empty() && self.api_version.is_empty()
    }
}

/// A reference to an external remediation template of a MachineHealthCheck (same shape as a
/// [`ClusterClassTemplateReference`]).
pub type MachineHealthCheckRemediationTemplateReference = ClusterClassTemplateReference;

/// A template of a ClusterClass (`{templateRef: ...}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClassTemplate {
    /// The template.
    #[serde(default, skip_serializing_if = "ClusterClassTemplateReference::is_unset")]
    pub template_ref: ClusterClassTemplateReference,
}

/// A v1beta1 condition, kept under `status.deprecated.v1beta1.conditions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition's type, e.g. `VariablesReconciled`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// `Error`, `Warning` or `Info` when the status is False.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// A CamelCase reason for the last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The `status.deprecated.v1beta1` of kinds that only kept their v1beta1 conditions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct V1Beta1DeprecatedConditions {
    /// v1beta1 conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// `status.deprecated` of kinds that only kept their v1beta1 conditions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeprecatedConditions {
    /// What v1beta1 reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta1: Option<V1Beta1DeprecatedConditions>,
}

/// Whether a gate's condition must be true (`Positive`) or false (`Negative`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ConditionPolarity {
    /// The condition must be true.
    #[default]
    Positive,
    /// The condition must be false.
    Negative,
}

/// A condition that gates a Machine's readiness.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineReadinessGate {
    /// The condition type to look for on the Machine.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub condition_type: String,
    /// `Positive` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polarity: Option<ConditionPolarity>,
}

/// A condition that gates the Cluster's availability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAvailabilityGate {
    /// The condition type to look for on the Cluster.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub condition_type: String,
    /// `Positive` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polarity: Option<ConditionPolarity>,
}

/// What a taint does to Pods that do not tolerate it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum TaintEffect {
    /// New Pods are not scheduled.
    #[default]
    NoSchedule,
    /// The scheduler avoids the Node.
    PreferNoSchedule,
    /// Running Pods are evicted too.
    NoExecute,
}

/// When a Machine's taint is put on its Node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum MachineTaintPropagation {
    /// Kept on the Node for the Machine's whole life.
    #[default]
    Always,
    /// Only set when the Node is created.
    OnInitialization,
}

/// A taint Machines put on their Nodes (at most 64 per topology part).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineTaint {
    /// The taint key.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
    /// The taint value.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// The effect.
    pub effect: TaintEffect,
    /// When the taint is propagated.
    pub propagation: MachineTaintPropagation,
}

/// A Node condition that, held for `timeout_seconds`, makes a Machine unhealthy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnhealthyNodeCondition {
    /// The Node condition type.
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// The Node condition status (`True`, `False`, `Unknown`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// Seconds the condition must hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
}

/// A Machine condition that, held for `timeout_seconds`, makes the Machine unhealthy.
pub type UnhealthyMachineCondition = UnhealthyNodeCondition;

/// What makes a Machine unhealthy (`healthCheck.checks`), in a class or a topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckChecks {
    /// Seconds a Machine may take to get a Node (0 disables the check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_startup_timeout_seconds: Option<i32>,
    /// Node conditions that make a Machine unhealthy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 100))]
    pub unhealthy_node_conditions: Vec<UnhealthyNodeCondition>,
    /// Machine conditions that make a Machine unhealthy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 100))]
    pub unhealthy_machine_conditions: Vec<UnhealthyMachineCondition>,
}

/// When remediation may happen (`remediation.triggerIf`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckRemediationTriggerIf {
    /// Only when at most this many Machines (count or percentage) are unhealthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_less_than_or_equal_to: Option<IntOrString>,
    /// Only when the number of unhealthy Machines is in this range (`[1-3]`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unhealthy_in_range: String,
}

/// How unhealthy Machines are remediated (`healthCheck.remediation`). `max_in_flight` is only
/// allowed for MachineDeployments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckRemediation {
    /// Machines remediated at the same time (MachineDeployments only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<IntOrString>,
    /// When remediation may happen.
    #[serde(default, skip_serializing_if = "is_default")]
    pub trigger_if: MachineHealthCheckRemediationTriggerIf,
    /// A template for external remediation.
    #[serde(default, skip_serializing_if = "ClusterClassTemplateReference::is_unset")]
    pub template_ref: MachineHealthCheckRemediationTemplateReference,
}

/// A health check of a class part (`healthCheck`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineHealthCheckClass {
    /// What makes a Machine unhealthy.
    #[serde(default, skip_serializing_if = "is_default")]
    pub checks: MachineHealthCheckChecks,
    /// How unhealthy Machines are remediated.
    #[serde(default, skip_serializing_if = "is_default")]
    pub remediation: MachineHealthCheckRemediation,
}

impl MachineHealthCheckClass {
    /// True when nothing is set: the class defines no health check.
    pub fn is_unset(&self) -> bool {
        is_default(self)
    }
}

/// How Machines are deleted (`deletion`); `order` is only allowed for MachineDeployments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeletionSpec {
    /// Which Machines go first when scaling down (MachineDeployments only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<MachineSetDeletionOrder>,
    /// Seconds to drain a Node (0: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_drain_timeout_seconds: Option<i32>,
    /// Seconds to wait for volumes to detach (0: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_volume_detach_timeout_seconds: Option<i32>,
    /// Seconds to wait for a Node to be deleted (0: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_deletion_timeout_seconds: Option<i32>,
}

/// Which Machines a MachineSet deletes first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum MachineSetDeletionOrder {
    /// Any Machine (the default).
    #[default]
    Random,
    /// The newest first.
    Newest,
    /// The oldest first.
    Oldest,
}

/// How a MachineDeployment replaces Machines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum MachineDeploymentRolloutStrategyType {
    /// Replace Machines progressively (the default).
    #[default]
    RollingUpdate,
    /// Replace a Machine only when it is deleted.
    OnDelete,
}

/// The rollout strategy of a MachineDeployment (`rollout.strategy`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentRolloutStrategy {
    /// `RollingUpdate` or `OnDelete`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<MachineDeploymentRolloutStrategyType>,
    /// Rolling update parameters.
    #[serde(default, skip_serializing_if = "is_default")]
    pub rolling_update: MachineRollingUpdate,
}

/// Rolling update parameters of a MachineDeployment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineRollingUpdate {
    /// Machines that may be unavailable during the update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Machines that may be created above the desired count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

/// A Go template for generated names (`{{ .cluster.name }}-{{ .random }}`), `naming`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamingSpec {
    /// The template.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub template: String,
}

/// The name Cluster API v1beta1 gave [`NamingSpec`].
pub type NamingStrategy = NamingSpec;
