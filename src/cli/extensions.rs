//! The Runtime Extensions of the files `plan` and `check` read: the ExtensionConfigs among them
//! are discovered and called as the controllers would, so a class whose variables come from an
//! extension's DiscoverVariables hook can be checked and planned offline.

use serde_json::Value;

use crate::api::runtime::{DiscoverVariablesRequest, ExtensionConfig};
use crate::api::ClusterClass;
use crate::decode::decode_value;
use crate::runtime::{NamespaceLabels, RuntimeExtensions};
use crate::topology::class_status::{class_status, discovering_patches, VARIABLE_DISCOVERY_FAILED_REASON};

/// The object `class`, when a ClusterClass, with the definitions its external patches' DiscoverVariables hooks
/// answer listed in `status.variables`, as the ClusterClass controller lists them (the offline
/// store then keeps them); unchanged when it has no such patch; why not when a hook fails.
pub fn with_discovered_variables(
    mut class: Value,
    extensions: &RuntimeExtensions,
    now: &str,
) -> Result<Value, String> {
    if class["apiVersion"] != "cluster.x-k8s.io/v1beta1" || class["kind"] != "ClusterClass" {
        return Ok(class);
    }
    let Ok(typed) = decode_value::<ClusterClass>(class.clone()) else {
        return Ok(class);
    };
    let patches: Vec<_> = discovering_patches(&typed).collect();
    if patches.is_empty() {
        return Ok(class);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the Runtime Extension client: {e}"))?;
    let namespace = typed.metadata.namespace.clone().unwrap_or_default();
    let discoveries: Vec<_> = patches
        .into_iter()
        .map(|(patch, handler, settings)| {
            let request = DiscoverVariablesRequest {
                settings: settings.clone(),
                ..DiscoverVariablesRequest::default()
            };
            let outcome = runtime.block_on(extensions.discover_variables(handler, &namespace, &request));
            (patch.to_owned(), outcome)
        })
        .collect();
    let status = class_status(&typed, 0, &discoveries, now);
    let condition = &status["conditions"][0];
    if condition["reason"] == VARIABLE_DISCOVERY_FAILED_REASON {
        return Err(condition["message"].as_str().unwrap_or_default().to_owned());
    }
    class["status"]["variables"] = status["variables"].clone();
    Ok(class)
}

/// The Runtime Extensions the ExtensionConfigs among `objects` register, called for objects in
/// the namespaces among them (with their labels).
pub fn runtime_extensions(objects: &[Value]) -> RuntimeExtensions {
    let of_kind = |api_version: &'static str, kind: &'static str| {
        objects
            .iter()
            .filter(move |o| o["apiVersion"] == api_version && o["kind"] == kind)
    };
    let configs = of_kind("runtime.cluster.x-k8s.io/v1alpha1", "ExtensionConfig")
        .filter_map(|o| decode_value::<ExtensionConfig>(o.clone()).ok())
        .collect();
    let namespaces: NamespaceLabels = of_kind("v1", "Namespace")
        .filter_map(|o| {
            let name = o["metadata"]["name"].as_str()?.to_owned();
            let labels = serde_json::from_value(o["metadata"]["labels"].clone()).unwrap_or_default();
            Some((name, labels))
        })
        .collect();
    RuntimeExtensions::new(configs, namespaces)
}
