//! The Runtime Extensions of the files `plan` and `check` read: the ExtensionConfigs among them
//! are discovered and called as the controllers would, so a class whose variables come from an
//! extension's DiscoverVariables hook can be checked and planned offline.

use serde_json::Value;

use crate::api::runtime::{
    DiscoverVariablesRequest, ExtensionConfig, GenerateUpgradePlanRequest, GenerateUpgradePlanResponse,
    LifecycleRequest,
};
use crate::api::ClusterClass;
use crate::decode::decode_value;
use crate::offline::edge::hub_view;
use crate::runtime::{NamespaceLabels, RuntimeExtensions};
use crate::topology::class_status::{class_status, discovering_patches, VARIABLE_DISCOVERY_FAILED_REASON};
use crate::topology::hooks::{HookOutcome, LifecycleHook, LifecycleHooks, ProceedingHooks};

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
    with_condition(&mut class["status"], condition);
    Ok(class)
}

/// `status` with `condition` in its `conditions`, in place of one of the same type: the
/// offline store then knows the discovery succeeded, even when the hooks answered no variables.
fn with_condition(status: &mut Value, condition: &Value) {
    let mut conditions = match status["conditions"].take() {
        Value::Array(conditions) => conditions,
        _ => Vec::new(),
    };
    conditions.retain(|c| c["type"] != condition["type"]);
    conditions.push(condition.clone());
    status["conditions"] = Value::Array(conditions);
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

/// The lifecycle hooks of an offline plan: lifecycle hooks as `hooks` answers them (the offline
/// plan never waits on one), and a class's GenerateUpgradePlan extension asked for real, through
/// the ExtensionConfigs of the files, as the controller asks it.
pub struct OfflineHooks<'a> {
    /// How the lifecycle hooks answer.
    pub hooks: ProceedingHooks,
    /// The extensions the files register.
    pub extensions: &'a RuntimeExtensions,
}

impl LifecycleHooks for OfflineHooks<'_> {
    fn registered(&self, hook: LifecycleHook, namespace: &str) -> bool {
        self.hooks.registered(hook, namespace)
    }

    fn call(
        &self,
        hook: LifecycleHook,
        namespace: &str,
        request: &LifecycleRequest,
    ) -> Result<HookOutcome, String> {
        self.hooks.call(hook, namespace, request)
    }

    fn generate_upgrade_plan(
        &self,
        extension: &str,
        namespace: &str,
        request: &GenerateUpgradePlanRequest,
    ) -> Result<GenerateUpgradePlanResponse, String> {
        self.extensions
            .generate_upgrade_plan(extension, namespace, request)
    }
}
