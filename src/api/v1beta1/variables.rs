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
    pub name: String,
    /// Whether every Cluster must set it.
    #[serde(default)]
    pub required: bool,
    /// Labels and annotations for runtime extensions (deprecated in favour of `x-metadata`).
    #[serde(
        default,
        deserialize_with = "super::common::null_as_default",
        skip_serializing_if = "TopologyMetadata::is_empty"
    )]
    pub metadata: TopologyMetadata,
    /// The schema of its value.
    pub schema: VariableSchema,
}

/// A variable as the ClusterClass reconciler reports it (`status.variables[]`): every definition
/// from inline variables and from external patches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatusVariable {
    /// The variable's name.
    pub name: String,
    /// True when the definitions differ, so Clusters must say which one a value is for.
    #[serde(default)]
    pub definitions_conflict: bool,
    /// The definitions.
    #[serde(default)]
    pub definitions: Vec<ClusterClassStatusVariableDefinition>,
}

/// One definition of a variable in the ClusterClass status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassStatusVariableDefinition {
    /// Where the definition comes from: `inline` or an external patch's name.
    pub from: String,
    /// Whether every Cluster must set it.
    #[serde(default)]
    pub required: bool,
    /// Labels and annotations for runtime extensions.
    #[serde(default, skip_serializing_if = "TopologyMetadata::is_empty")]
    pub metadata: TopologyMetadata,
    /// The schema of its value.
    pub schema: VariableSchema,
}

/// A value a Cluster sets for a variable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVariable {
    /// The variable's name.
    pub name: String,
    /// Which definition the value is for, when the class's definitions conflict.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub definition_from: String,
    /// The value, any JSON.
    #[serde(default)]
    #[schemars(schema_with = "crate::api::crd::preserve_unknown_fields")]
    pub value: Value,
}

/// Variable overrides of a topology part (`variables.overrides`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariableOverrides {
    /// Values that replace the Cluster-level ones for this part (names may repeat, one value
    /// per `definitionFrom`, as at the Cluster level).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<ClusterVariable>,
}
