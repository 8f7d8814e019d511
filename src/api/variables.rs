//! ClusterClass variable definitions, their reconciled status, and the values Clusters set.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::TopologyMetadata;
use super::json_schema::VariableSchema;

/// A variable a ClusterClass defines inline (`spec.variables[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassVariable {
    /// The variable's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// Whether every Cluster must set it (unset: false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Labels and annotations for runtime extensions, as v1beta1 `metadata` held them; new
    /// classes use the schema's `x-metadata`.
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub deprecated_v1_beta1_metadata: TopologyMetadata,
    /// The schema of its value.
    #[serde(default)]
    pub schema: VariableSchema,
}

impl ClusterClassVariable {
    /// Whether every Cluster must set it.
    pub fn is_required(&self) -> bool {
        self.required.unwrap_or(false)
    }
}

/// A variable as the ClusterClass reconciler reports it (`status.variables[]`): every definition
/// from inline variables and from external patches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatusVariable {
    /// The variable's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// True when the definitions differ, so the class cannot be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definitions_conflict: Option<bool>,
    /// The definitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<ClusterClassStatusVariableDefinition>,
}

impl ClusterClassStatusVariable {
    /// True when the definitions differ.
    pub fn has_conflict(&self) -> bool {
        self.definitions_conflict.unwrap_or(false)
    }
}

/// One definition of a variable in the ClusterClass status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatusVariableDefinition {
    /// Where the definition comes from: `inline` or an external patch's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub from: String,
    /// Whether every Cluster must set it (unset: false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Labels and annotations for runtime extensions (v1beta1 `metadata`).
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub deprecated_v1_beta1_metadata: TopologyMetadata,
    /// The schema of its value.
    #[serde(default)]
    pub schema: VariableSchema,
}

/// A value a Cluster sets for a variable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVariable {
    /// The variable's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 256))]
    pub name: String,
    /// The definition the value is for, when the class's definitions of the variable conflict:
    /// `inline` or an external patch's name (seed 003; `""` when not set). v1beta2 has no such
    /// field: it is not serialised, a hub Cluster keeps it in its
    /// [`V1BETA1_FIELDS`](super::convert::V1BETA1_FIELDS) annotation, read and written with the
    /// Cluster (see [`Cluster`](super::Cluster)'s serde implementations).
    #[serde(skip)]
    pub definition_from: String,
    /// The value, any JSON.
    #[serde(default)]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub value: Value,
}

/// Variable overrides of a topology part (`variables.overrides`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariableOverrides {
    /// Values that replace the Cluster-level ones for this part.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 1000))]
    #[schemars(transform = crate::api::list_map::by_name)]
    pub overrides: Vec<ClusterVariable>,
}

impl VariableOverrides {
    /// True when no override is set.
    pub fn is_empty(&self) -> bool {
        self.overrides.is_empty()
    }
}
