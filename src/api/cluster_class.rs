//! ClusterClass (cluster.x-k8s.io/v1beta2): the blueprint a managed topology is built from.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster_class_patches::ClusterClassPatch;
use super::common::{
    is_default, ClassTemplate, ClusterAvailabilityGate, ClusterClassTemplateReference, DeprecatedConditions,
    MachineDeletionSpec, MachineDeploymentRolloutStrategy, MachineHealthCheckClass, MachineReadinessGate,
    MachineTaint, MetaCondition, NamingSpec, ObjectMeta, TopologyMetadata,
};
use super::variables::{ClusterClassStatusVariable, ClusterClassVariable};

/// A ClusterClass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClass {
    /// `cluster.x-k8s.io/v1beta2`.
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
    #[schemars(length(min = 1, max = 32))]
    #[schemars(transform = crate::api::list_map::by_condition_type)]
    pub availability_gates: Vec<ClusterAvailabilityGate>,
    /// The infrastructure cluster template and how infrastructure clusters are named.
    #[serde(default, skip_serializing_if = "is_default")]
    pub infrastructure: InfrastructureClass,
    /// The control plane.
    #[serde(default, skip_serializing_if = "is_default")]
    pub control_plane: ControlPlaneClass,
    /// Worker classes.
    #[serde(default, skip_serializing_if = "is_default")]
    pub workers: WorkersClass,
    /// Variables Clusters of this class may set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 1000))]
    pub variables: Vec<ClusterClassVariable>,
    /// Patches applied to the templates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 1000))]
    pub patches: Vec<ClusterClassPatch>,
    /// How Clusters of this class are upgraded.
    #[serde(default, skip_serializing_if = "is_default")]
    pub upgrade: ClusterClassUpgrade,
    /// The Kubernetes versions Clusters of this class may use, in upgrade order; a topology may
    /// then jump several minors, stepping through these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 100))]
    pub kubernetes_versions: Vec<String>,
}

/// How Clusters of a class are upgraded (`spec.upgrade`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassUpgrade {
    /// Upgrade plans computed by a runtime extension.
    #[serde(default, skip_serializing_if = "is_default")]
    pub external: ClusterClassUpgradeExternal,
}

/// Runtime extensions that take part in upgrades.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassUpgradeExternal {
    /// The extension that computes the upgrade plan (GenerateUpgradePlan hook).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 512))]
    pub generate_upgrade_plan_extension: String,
}

/// The infrastructure cluster of a ClusterClass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfrastructureClass {
    /// The infrastructure cluster template.
    #[serde(default, skip_serializing_if = "ClusterClassTemplateReference::is_unset")]
    pub template_ref: ClusterClassTemplateReference,
    /// How infrastructure clusters are named.
    #[serde(default, skip_serializing_if = "is_default")]
    pub naming: NamingSpec,
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
    #[serde(default, skip_serializing_if = "ClusterClassTemplateReference::is_unset")]
    pub template_ref: ClusterClassTemplateReference,
    /// The infrastructure machine template of control plane machines, when the provider uses one.
    #[serde(default, skip_serializing_if = "is_default")]
    pub machine_infrastructure: ClassTemplate,
    /// The control plane's MachineHealthCheck (`remediation.maxInFlight` is not allowed here).
    #[serde(default, skip_serializing_if = "MachineHealthCheckClass::is_unset")]
    #[schemars(transform = crate::api::narrowed::health_check_without_max_in_flight)]
    pub health_check: MachineHealthCheckClass,
    /// How control plane objects are named.
    #[serde(default, skip_serializing_if = "is_default")]
    pub naming: NamingSpec,
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
    #[schemars(length(min = 1, max = 32))]
    #[schemars(transform = crate::api::list_map::by_condition_type)]
    pub readiness_gates: Vec<MachineReadinessGate>,
}

impl ControlPlaneClass {
    /// The machine infrastructure template, when the control plane uses one.
    pub fn machine_infrastructure_ref(&self) -> Option<&ClusterClassTemplateReference> {
        (!self.machine_infrastructure.template_ref.is_unset())
            .then_some(&self.machine_infrastructure.template_ref)
    }
}

/// The worker classes of a ClusterClass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkersClass {
    /// MachineDeployment classes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 100))]
    #[schemars(transform = crate::api::list_map::by_class)]
    pub machine_deployments: Vec<MachineDeploymentClass>,
    /// MachinePool classes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 100))]
    #[schemars(transform = crate::api::list_map::by_class)]
    pub machine_pools: Vec<MachinePoolClass>,
}

impl WorkersClass {
    /// The names of the MachineDeployment classes.
    pub fn machine_deployment_classes(&self) -> BTreeSet<&str> {
        self.machine_deployments
            .iter()
            .map(|c| c.class.as_str())
            .collect()
    }

    /// The names of the MachinePool classes.
    pub fn machine_pool_classes(&self) -> BTreeSet<&str> {
        self.machine_pools.iter().map(|c| c.class.as_str()).collect()
    }
}

/// How MachineDeployments of a class are rolled out (`rollout`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentClassRolloutSpec {
    /// The rollout strategy.
    #[serde(default, skip_serializing_if = "is_default")]
    pub strategy: MachineDeploymentRolloutStrategy,
}

/// A MachineDeployment class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentClass {
    /// Labels and annotations for the generated objects.
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub metadata: TopologyMetadata,
    /// The class's name, referenced by topologies.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 256))]
    pub class: String,
    /// The bootstrap config template.
    #[serde(default, skip_serializing_if = "is_default")]
    pub bootstrap: ClassTemplate,
    /// The infrastructure machine template.
    #[serde(default, skip_serializing_if = "is_default")]
    pub infrastructure: ClassTemplate,
    /// Its MachineHealthCheck.
    #[serde(default, skip_serializing_if = "MachineHealthCheckClass::is_unset")]
    pub health_check: MachineHealthCheckClass,
    /// The default failure domain.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 256))]
    pub failure_domain: String,
    /// How MachineDeployments are named.
    #[serde(default, skip_serializing_if = "is_default")]
    pub naming: NamingSpec,
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
    #[schemars(length(min = 1, max = 32))]
    #[schemars(transform = crate::api::list_map::by_condition_type)]
    pub readiness_gates: Vec<MachineReadinessGate>,
    /// How Machines are rolled out.
    #[serde(default, skip_serializing_if = "is_default")]
    pub rollout: MachineDeploymentClassRolloutSpec,
}

/// A MachinePool class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachinePoolClass {
    /// Labels and annotations for the generated objects.
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub metadata: TopologyMetadata,
    /// The class's name, referenced by topologies.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 256))]
    pub class: String,
    /// The bootstrap config template.
    #[serde(default, skip_serializing_if = "is_default")]
    pub bootstrap: ClassTemplate,
    /// The infrastructure machine pool template.
    #[serde(default, skip_serializing_if = "is_default")]
    pub infrastructure: ClassTemplate,
    /// The default failure domains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub failure_domains: Vec<String>,
    /// How MachinePools are named.
    #[serde(default, skip_serializing_if = "is_default")]
    pub naming: NamingSpec,
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
}

/// What the ClusterClass reconciler observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatus {
    /// Conditions: `VariablesReady`, `RefVersionsUpToDate`, `Paused`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_type)]
    pub conditions: Vec<MetaCondition>,
    /// Every variable with its definitions (inline and external).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<ClusterClassStatusVariable>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// What v1beta1 reported (its conditions, e.g. `VariablesReconciled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<DeprecatedConditions>,
}
