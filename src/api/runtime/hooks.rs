//! What every hook call shares (the response status, variable values, template holders) and
//! the Discovery hook, which lists an Extension server's handlers.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ExtensionHandler;

/// The API version of every hook request and response.
pub const HOOKS_API_VERSION: &str = "hooks.runtime.cluster.x-k8s.io/v1alpha1";

/// The outcome a hook response reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResponseStatus {
    /// The call succeeded.
    Success,
    /// The call failed; `message` says why.
    Failure,
}

/// The request of the Discovery hook: only its type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveryRequest {
    /// [`HOOKS_API_VERSION`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `DiscoveryRequest`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
}

/// The answer of the Discovery hook: the server's handlers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveryResponse {
    /// [`HOOKS_API_VERSION`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `DiscoveryResponse`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Success or failure of the call.
    pub status: ResponseStatus,
    /// Why the call failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The handlers, each serving one hook.
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub handlers: Vec<ExtensionHandler>,
}

/// A variable's value, as a hook request carries it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Variable {
    /// The variable's name (`builtin` for the builtin variables).
    pub name: String,
    /// The value, any JSON.
    #[serde(default)]
    pub value: Value,
}

/// The object that uses a template, and the field of it that refers to the template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HolderReference {
    /// The holder's apiVersion.
    #[serde(default)]
    pub api_version: String,
    /// The holder's kind.
    #[serde(default)]
    pub kind: String,
    /// The holder's namespace.
    #[serde(default)]
    pub namespace: String,
    /// The holder's name.
    #[serde(default)]
    pub name: String,
    /// The field of the holder that refers to the template, e.g. `spec.infrastructureRef`.
    #[serde(default)]
    pub field_path: String,
}
