//! ClusterClass patches: inline JSON patches with selectors, and external patches.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A named patch (`spec.patches[]`): inline definitions or an external extension.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassPatch {
    /// The patch's name, unique in the class.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// What the patch does.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// A Go template; the patch applies only when it renders `true` (empty: always).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub enabled_if: String,
    /// Inline patch definitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<PatchDefinition>,
    /// A patch computed by a runtime extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalPatchDefinition>,
}

/// Which templates to patch, and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchDefinition {
    /// The templates this definition applies to.
    #[serde(default)]
    pub selector: PatchSelector,
    /// The JSON patch operations, applied in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub json_patches: Vec<JSONPatch>,
}

/// Selects templates by apiVersion, kind and role.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchSelector {
    /// The template's apiVersion.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The template's kind.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The roles of the templates to patch.
    #[serde(default, skip_serializing_if = "super::common::is_default")]
    pub match_resources: PatchSelectorMatch,
}

/// The template roles a selector matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchSelectorMatch {
    /// The control plane template (and its machine infrastructure template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<bool>,
    /// The infrastructure cluster template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_cluster: Option<bool>,
    /// Templates of these MachineDeployment classes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_deployment_class: Option<PatchSelectorMatchNames>,
    /// Templates of these MachinePool classes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_pool_class: Option<PatchSelectorMatchNames>,
}

/// Class names a selector matches: exact, `*`, `prefix*` or `*suffix`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchSelectorMatchNames {
    /// The names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
}

/// One JSON patch operation.
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JSONPatch {
    /// `add`, `replace` or `remove`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub op: String,
    /// A JSON pointer at or below `/spec`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// A literal value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub value: Option<Value>,
    /// Where to take the value from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<JSONPatchValue>,
}

/// The source of a patch value: a variable or a Go template.
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JSONPatchValue {
    /// A variable path (`name`, `obj.field`, `list[0]`, `builtin.cluster.name`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub variable: String,
    /// A Go template rendering YAML.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub template: String,
}

/// A patch computed by runtime extensions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalPatchDefinition {
    /// The extension that generates patches (GeneratePatches hook).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub generate_patches_extension: String,
    /// The extension that validates the topology (ValidateTopology hook).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub validate_topology_extension: String,
    /// The extension that declares variables (DiscoverVariables hook).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub discover_variables_extension: String,
    /// Settings passed to the extensions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}
