//! The Runtime Extensions of the files `plan` and `check` read: the ExtensionConfigs among them
//! are discovered and called as the controllers would, so a class whose variables come from an
//! extension's DiscoverVariables hook can be checked and planned offline.

use serde_json::Value;

use crate::api::runtime::{DiscoverVariablesRequest, ExtensionConfig};
use crate::api::ClusterClass;
use crate::decode::decode_value;
use crate::offline::edge::hub_view;
use crate::runtime::{NamespaceLabels, RuntimeExtensions};
use crate::topology::class_status::{class_status, discovering_patches, VARIABLE_DISCOVERY_FAILED_REASON};

/// The object `class`, when a ClusterClass (of any served version), in v1beta2 with the
/// definitions its external patches' DiscoverVariables hooks answer listed in
/// `status.variables`, as the ClusterClass controller lists them (the offline store then keeps
/// them); unchanged when it has no such patch; why not when a hook fails.
pub fn with_discovered_variables(
    class: Value,
    extensions: &RuntimeExtensions,
    now: &str,
) -> Result<Value, String> {
    if class["kind"] != "ClusterClass"
        || !class["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("cluster.x-k8s.io/"))
    {
        return Ok(class);
    }
    let mut class = hub_view(&class);
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
    let of_kind = |group: &'static str, kind: &'static str| {
        objects.iter().filter(move |o| {
            o["kind"] == kind && crate::store::group_of(o["apiVersion"].as_str().unwrap_or_default()) == group
        })
    };
    let configs = of_kind("runtime.cluster.x-k8s.io", "ExtensionConfig")
        .filter_map(|o| decode_value::<ExtensionConfig>(hub_view(o)).ok())
        .collect();
    let namespaces: NamespaceLabels = of_kind("", "Namespace")
        .filter_map(|o| {
            let name = o["metadata"]["name"].as_str()?.to_owned();
            let labels = serde_json::from_value(o["metadata"]["labels"].clone()).unwrap_or_default();
            Some((name, labels))
        })
        .collect();
    RuntimeExtensions::new(configs, namespaces)
}
