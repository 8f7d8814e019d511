//! The engine's [`ExternalPatches`] over HTTPS: the engine is synchronous, so calls run on a
//! runtime of their own (one thread) that also keeps the extensions' pooled connections; the
//! ExtensionConfigs are discovered on the first call, so a plan without external patches never
//! touches the network.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::mpsc;
use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio::runtime::Runtime;

use super::registry::{Registration, Registry};
use super::response::IgnorableResponse;
use crate::api::runtime::{
    ExtensionConfig, FailurePolicy, GeneratePatchesRequest, GeneratePatchesResponse, ValidateTopologyRequest,
    ValidateTopologyResponse,
};
use crate::patches::external::ExternalPatches;

/// Labels of namespaces by name: what a handler's namespace selector is matched against.
pub type NamespaceLabels = BTreeMap<String, BTreeMap<String, String>>;

/// The Runtime Extensions some ExtensionConfigs register.
#[derive(Debug)]
pub struct RuntimeExtensions {
    configs: Vec<ExtensionConfig>,
    namespaces: NamespaceLabels,
    connected: OnceLock<Result<Connected, String>>,
}

/// The runtime calls run on, and the handlers discovery found.
#[derive(Debug)]
struct Connected {
    runtime: Runtime,
    registry: Registry,
}

impl RuntimeExtensions {
    /// The extensions of `configs`, called for objects whose namespaces have the labels of
    /// `namespaces` (a namespace not listed matches only an empty selector).
    pub fn new(configs: Vec<ExtensionConfig>, namespaces: NamespaceLabels) -> Self {
        Self {
            configs,
            namespaces,
            connected: OnceLock::new(),
        }
    }

    /// The runtime and the registry, made and discovered on first use.
    fn connected(&self) -> Result<&Connected, String> {
        self.connected
            .get_or_init(|| {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("runtime-extensions")
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot start the Runtime Extension client: {e}"))?;
                let configs = self.configs.clone();
                let registry = run(&runtime, async move { Registry::discover(&configs).await })?;
                Ok(Connected { runtime, registry })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Calls the handler `name` of `hook` for an object in `namespace`, as Cluster API's
    /// `CallExtension` does: the hook and the namespace selector must match; the
    /// ExtensionConfig's settings go under the request's; a failed call is ignored under
    /// `failurePolicy: Ignore`, an answer with `status: Failure` never is.
    fn call<Q: Serialize, R: IgnorableResponse + DeserializeOwned + Send + 'static>(
        &self,
        hook: &str,
        name: &str,
        namespace: &str,
        request: &Q,
    ) -> Result<R, String> {
        let failed = |reason: String| format!("failed to call extension handler {name:?}: {reason}");
        let connected = self.connected()?;
        let registration = connected.registry.get(name).map_err(failed)?;
        if registration.hook != hook {
            return Err(failed(format!(
                "handler does not match GroupHook \"hooks.runtime.cluster.x-k8s.io/{hook}\""
            )));
        }
        self.check_namespace(registration, namespace).map_err(failed)?;
        let request = with_settings(request, &registration.settings).map_err(failed)?;
        let (client, hook_name, handler, timeout) = (
            registration.client.clone(),
            hook.to_owned(),
            registration.handler.clone(),
            registration.timeout,
        );
        let outcome = run(&connected.runtime, async move {
            client
                .call::<R>(&hook_name, Some(&handler), request, timeout)
                .await
        })
        .map_err(failed)?;
        let response = match outcome {
            Ok(response) => response,
            Err(_) if registration.failure_policy == FailurePolicy::Ignore => {
                tracing::warn!(
                    handler = name,
                    "ignoring a failed call because of failurePolicy Ignore"
                );
                return Ok(R::ignored());
            }
            Err(error) => return Err(failed(error.to_string())),
        };
        response
            .success()
            .map_err(|message| failed(format!("got failure response: {message}")))?;
        Ok(response)
    }

    /// Whether the handler is called for objects of `namespace`.
    fn check_namespace(&self, registration: &Registration, namespace: &str) -> Result<(), String> {
        let selector = &registration.namespace_selector;
        if selector.is_empty() {
            return Ok(());
        }
        let labels = self.namespaces.get(namespace).ok_or_else(|| {
            format!("failed to match namespace: failed to get namespace {namespace}: not found")
        })?;
        if selector.matches(labels) {
            Ok(())
        } else {
            Err(format!("namespaceSelector did not match namespace {namespace}"))
        }
    }
}

impl ExternalPatches for RuntimeExtensions {
    fn generate(
        &self,
        extension: &str,
        namespace: &str,
        request: &GeneratePatchesRequest,
    ) -> Result<GeneratePatchesResponse, String> {
        self.call("GeneratePatches", extension, namespace, request)
    }

    fn validate(
        &self,
        extension: &str,
        namespace: &str,
        request: &ValidateTopologyRequest,
    ) -> Result<ValidateTopologyResponse, String> {
        self.call("ValidateTopology", extension, namespace, request)
    }
}

impl Drop for RuntimeExtensions {
    /// Stops the runtime without waiting: dropping it from async code would panic.
    fn drop(&mut self) {
        if let Some(Ok(connected)) = self.connected.take() {
            connected.runtime.shutdown_background();
        }
    }
}

/// Runs `future` on `runtime` from synchronous code (inside another runtime too), waiting for it.
fn run<T: Send + 'static>(
    runtime: &Runtime,
    future: impl Future<Output = T> + Send + 'static,
) -> Result<T, String> {
    let (sender, receiver) = mpsc::sync_channel(1);
    runtime.spawn(async move {
        let _ = sender.send(future.await);
    });
    receiver
        .recv()
        .map_err(|_| "the Runtime Extension client stopped".to_owned())
}

/// `request` as JSON with `settings` under its own: the request's settings win.
fn with_settings<Q: Serialize>(request: &Q, settings: &BTreeMap<String, String>) -> Result<Value, String> {
    let mut value = serde_json::to_value(request).map_err(|e| e.to_string())?;
    if settings.is_empty() {
        return Ok(value);
    }
    let mut merged: serde_json::Map<String, Value> = settings
        .iter()
        .map(|(key, value)| (key.clone(), Value::from(value.as_str())))
        .collect();
    if let Some(own) = value.get("settings").and_then(Value::as_object) {
        merged.extend(own.clone());
    }
    if let Some(fields) = value.as_object_mut() {
        fields.insert("settings".to_owned(), Value::Object(merged));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_request_settings_win_over_the_extension_config() {
        let request = GeneratePatchesRequest {
            settings: BTreeMap::from([("a".to_owned(), "request".to_owned())]),
            ..GeneratePatchesRequest::default()
        };
        let config = BTreeMap::from([
            ("a".to_owned(), "config".to_owned()),
            ("b".to_owned(), "config".to_owned()),
        ]);
        let value = with_settings(&request, &config).unwrap();
        assert_eq!(value["settings"], json!({"a": "request", "b": "config"}));
    }

    #[test]
    fn an_unknown_handler_is_an_error_without_any_extension() {
        let extensions = RuntimeExtensions::new(Vec::new(), NamespaceLabels::new());
        let err = extensions
            .generate("generate.ext", "default", &GeneratePatchesRequest::default())
            .unwrap_err();
        assert!(
            err.ends_with("handler with name \"generate.ext\" has not been registered"),
            "{err}"
        );
    }
}
