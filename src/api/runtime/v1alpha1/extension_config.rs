//! ExtensionConfig (runtime.cluster.x-k8s.io/v1alpha1, cluster-scoped): where a Runtime
//! Extension server is and how to trust it; its status lists the handlers discovery found.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::v1beta1::{Condition, ObjectMeta, V1Beta2Conditions};

/// The API version of this spoke.
pub const VERSION: &str = "v1alpha1";

/// An ExtensionConfig.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionConfig {
    /// `runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `ExtensionConfig`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata (no namespace: the kind is cluster-scoped).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: ExtensionConfigSpec,
    /// The observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ExtensionConfigStatus>,
}

/// How to reach the Extension server, for which namespaces, with which settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["clientConfig"]), transform = without_defaults)]
pub struct ExtensionConfigSpec {
    /// How to connect to the Extension server.
    #[serde(default)]
    pub client_config: ClientConfig,
    /// Hooks are called only for objects in namespaces this selects; defaulted to `{}`, which
    /// selects every namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Key-value pairs passed to every call of every handler (a ClusterClass may override them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

/// The Extension server's address (exactly one of `url` and `service`) and the CA to trust.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientConfig {
    /// `https://host:port/path`; the path, if any, prefixes every hook's path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub url: Option<String>,
    /// A Service in the management cluster that fronts the Extension server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    /// PEM CA bundle that signs the server's certificate, base64-encoded as Go encodes `[]byte`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 51200), extend("format" = "byte"))]
    pub ca_bundle: Option<String>,
}

/// A Service of the Extension server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = ["name", "namespace"]), transform = without_defaults)]
pub struct ServiceReference {
    /// The Service's namespace.
    #[serde(default)]
    #[schemars(length(min = 1, max = 63))]
    pub namespace: String,
    /// The Service's name.
    #[serde(default)]
    #[schemars(length(min = 1, max = 63))]
    pub name: String,
    /// URL path that prefixes every hook's path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub path: Option<String>,
    /// The Service port; defaulted to 443.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// What discovery found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionConfigStatus {
    /// The handlers the Extension server serves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 512))]
    #[schemars(transform = crate::api::list_map::by_name)]
    pub handlers: Vec<ExtensionHandler>,
    /// v1beta1 conditions (`Discovered`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// v1beta2 conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

/// One handler of an Extension server: in an ExtensionConfig's status, and in a discovery answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionHandler {
    /// The handler's name, unique within its server.
    #[schemars(length(min = 1, max = 512))]
    pub name: String,
    /// The hook, and its version, the handler serves.
    pub request_hook: GroupVersionHook,
    /// Timeout of a call; 10 seconds when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// What a failed call means; `Fail` when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
}

/// A hook and the API version of its request and response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupVersionHook {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[schemars(length(min = 1, max = 512))]
    pub api_version: String,
    /// The hook's name, e.g. `GeneratePatches`.
    #[schemars(length(min = 1, max = 256))]
    pub hook: String,
}

/// How a client treats a call that fails for a reason other than the extension's own answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FailurePolicy {
    /// The failure is ignored.
    Ignore,
    /// The failure is an error.
    Fail,
}

/// Drops the defaults `#[serde(default)]` gives the properties of a schema: the fields that
/// carry it are required (decoded leniently only so the webhook can word the error), and an
/// empty default would fail their own `minLength`. Cluster API's CRD has none either.
fn without_defaults(schema: &mut schemars::Schema) {
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut().filter_map(Value::as_object_mut) {
            property.remove("default");
        }
    }
}

impl ExtensionConfig {
    /// The object's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
}
