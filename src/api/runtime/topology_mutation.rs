//! The topology mutation hooks: GeneratePatches (patches for a Cluster's templates),
//! ValidateTopology (a verdict on the patched templates) and DiscoverVariables (the variable
//! definitions an external patch reads).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{HolderReference, ResponseStatus, Variable};
use crate::api::common::null_as_default;
use crate::api::ClusterClassVariable;

/// The request of the GeneratePatches hook: every template of a Cluster topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GeneratePatchesRequest {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `GeneratePatchesRequest`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The ExtensionConfig's settings, as overridden by the ClusterClass.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// Variables of every template.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variables: Vec<Variable>,
    /// The templates to patch.
    #[serde(default, deserialize_with = "null_as_default")]
    pub items: Vec<GeneratePatchesRequestItem>,
}

/// One template to patch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GeneratePatchesRequestItem {
    /// Correlates the template with its patches in the response.
    #[serde(default)]
    pub uid: String,
    /// Where the template is used.
    #[serde(default)]
    pub holder_reference: HolderReference,
    /// The template, whole.
    #[serde(default)]
    pub object: Value,
    /// Variables of this template only (e.g. the builtins of its MachineDeployment).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variables: Vec<Variable>,
}

/// The answer of the GeneratePatches hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GeneratePatchesResponse {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `GeneratePatchesResponse`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Success or failure of the call.
    pub status: ResponseStatus,
    /// Why the call failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The patches, applied in this order.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub items: Vec<GeneratePatchesResponseItem>,
}

/// A patch of one template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GeneratePatchesResponseItem {
    /// The uid of the template in the request.
    #[serde(default)]
    pub uid: String,
    /// How `patch` is to be read.
    pub patch_type: PatchType,
    /// The patch document (JSON), base64-encoded on the wire as Go encodes `[]byte`.
    #[serde(default, with = "base64_bytes")]
    pub patch: Vec<u8>,
}

/// The kinds of patch a GeneratePatches response may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PatchType {
    /// An RFC 6902 JSON patch.
    #[serde(rename = "JSONPatch")]
    JsonPatch,
    /// An RFC 7386 JSON merge patch.
    #[serde(rename = "JSONMergePatch")]
    JsonMergePatch,
}

/// The request of the ValidateTopology hook: the patched templates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidateTopologyRequest {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `ValidateTopologyRequest`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The ExtensionConfig's settings, as overridden by the ClusterClass.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// Variables of every template.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variables: Vec<Variable>,
    /// The templates to validate.
    #[serde(default, deserialize_with = "null_as_default")]
    pub items: Vec<ValidateTopologyRequestItem>,
}

/// One template to validate (as a GeneratePatches item, without a uid).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidateTopologyRequestItem {
    /// Where the template is used.
    #[serde(default)]
    pub holder_reference: HolderReference,
    /// The template, whole.
    #[serde(default)]
    pub object: Value,
    /// Variables of this template only.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variables: Vec<Variable>,
}

/// The answer of the ValidateTopology hook: only a status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidateTopologyResponse {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `ValidateTopologyResponse`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Success when the topology is valid.
    pub status: ResponseStatus,
    /// Why the topology is invalid, or the call failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// The request of the DiscoverVariables hook: only settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverVariablesRequest {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `DiscoverVariablesRequest`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The ExtensionConfig's settings, as overridden by the ClusterClass.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

/// The answer of the DiscoverVariables hook: variable definitions, as a ClusterClass writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverVariablesResponse {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `DiscoverVariablesResponse`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Success or failure of the call.
    pub status: ResponseStatus,
    /// Why the call failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The definitions.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variables: Vec<ClusterClassVariable>,
}

/// Go's JSON encoding of `[]byte`: standard base64 in a string; `null` reads as empty.
mod base64_bytes {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = Option::<String>::deserialize(deserializer)?.unwrap_or_default();
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}
