//! The engine's [`ExternalPatches`] over HTTPS, as Cluster API's `CallExtension`: the handler
//! must serve the hook and select the object's namespace, the ExtensionConfig's settings go under
//! the request's, a failed call is ignored under `failurePolicy: Ignore`. Beyond it: a server
//! that does not answer is not called again for a while ([`ServerBackoff`]), and the answers of
//! the deterministic topology hooks are kept by request ([`ResponseCache`]).
//!
//! The engine is synchronous: its calls run on a tokio runtime, either one of its own (the
//! offline `plan`, which discovers its ExtensionConfigs on the first call, so a plan without
//! external patches never touches the network) or the controller's, through a [`Handle`].

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio::runtime::{Handle, Runtime};

use super::backoff::ServerBackoff;
use super::cache::{CacheKey, ResponseCache};
use super::hook_cache::HookCache;
use super::registry::{Registration, Registry, SharedRegistry};
use super::response::{echoed, IgnorableResponse};
use crate::api::runtime::{
    DiscoverVariablesRequest, DiscoverVariablesResponse, ExtensionConfig, FailurePolicy,
    GeneratePatchesRequest, GeneratePatchesResponse, ValidateTopologyRequest, ValidateTopologyResponse,
};
use crate::metrics::Metrics;
use crate::patches::external::ExternalPatches;

/// Labels of namespaces by name: what a handler's namespace selector is matched against.
pub type NamespaceLabels = BTreeMap<String, BTreeMap<String, String>>;

/// The labels of a namespace by its name, `None` when there is no such namespace: the caller's
/// view of the namespaces (a watch cache, a file).
pub type NamespaceLookup = Arc<dyn Fn(&str) -> Option<BTreeMap<String, String>> + Send + Sync>;

/// The Runtime Extensions of a registry, and what their calls share: connections, backoff,
/// cached answers, metrics.
pub struct RuntimeExtensions {
    pub(super) core: Arc<Core>,
    executor: Executor,
}

/// Where calls run.
enum Executor {
    /// A runtime of our own, started on the first call, which then discovers `configs`.
    Own {
        configs: Vec<ExtensionConfig>,
        started: OnceLock<Result<Runtime, String>>,
    },
    /// The caller's runtime; the registry is kept up to date by someone else.
    Shared(Handle),
}

/// What every call reads and updates.
pub(super) struct Core {
    pub(super) registry: SharedRegistry,
    namespaces: NamespaceLookup,
    backoff: ServerBackoff,
    cache: ResponseCache,
    /// Blocking lifecycle hook answers, per Cluster and hook.
    pub(super) hooks: HookCache,
    pub(super) metrics: Option<Metrics>,
}

/// A call ready to go: the handler and the request as it is sent.
pub(super) struct Prepared {
    pub(super) name: String,
    pub(super) registration: Registration,
    pub(super) request: Value,
}

impl fmt::Debug for RuntimeExtensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeExtensions")
            .field("cached_answers", &self.core.cache.len())
            .field("held_hook_answers", &self.core.hooks.len())
            .finish_non_exhaustive()
    }
}

impl RuntimeExtensions {
    /// The extensions of `configs`, called for objects whose namespaces have the labels of
    /// `namespaces` (a namespace not listed matches only an empty selector): the offline
    /// `plan`'s, discovered on first use on a runtime of their own.
    pub fn new(configs: Vec<ExtensionConfig>, namespaces: NamespaceLabels) -> Self {
        let lookup: NamespaceLookup = Arc::new(move |name: &str| namespaces.get(name).cloned());
        Self {
            core: Arc::new(Core::new(SharedRegistry::default(), lookup, None)),
            executor: Executor::Own {
                configs,
                started: OnceLock::new(),
            },
        }
    }

    /// The extensions `registry` holds (as another task keeps it), called on the runtime of
    /// `runtime`, for objects whose namespace labels `namespaces` gives: the controller's, built
    /// once and shared by every reconcile, counting calls, errors, latency and cache hits per
    /// handler in `metrics`. Its synchronous calls ([`ExternalPatches`]) block, so make them from
    /// a blocking thread (`spawn_blocking`), never from an async task.
    pub fn shared(
        registry: SharedRegistry,
        runtime: Handle,
        namespaces: NamespaceLookup,
        metrics: Option<Metrics>,
    ) -> Self {
        Self {
            core: Arc::new(Core::new(registry, namespaces, metrics)),
            executor: Executor::Shared(runtime),
        }
    }

    /// Calls the DiscoverVariables handler `name` for a ClusterClass in `namespace`; the
    /// ExtensionConfig's settings are merged under the request's as for every hook, a failed
    /// call is ignored under `failurePolicy: Ignore` (no variables), answers are not cached.
    pub async fn discover_variables(
        &self,
        name: &str,
        namespace: &str,
        request: &DiscoverVariablesRequest,
    ) -> Result<DiscoverVariablesResponse, String> {
        self.ready()?;
        let prepared = self.core.prepare("DiscoverVariables", name, namespace, request)?;
        self.core.send(prepared, None).await
    }

    /// The runtime calls run on: the offline one is started, and its configs discovered, once.
    pub(super) fn ready(&self) -> Result<Handle, String> {
        match &self.executor {
            Executor::Shared(handle) => Ok(handle.clone()),
            Executor::Own { configs, started } => started
                .get_or_init(|| {
                    let runtime = tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(1)
                        .thread_name("runtime-extensions")
                        .enable_all()
                        .build()
                        .map_err(|e| format!("cannot start the Runtime Extension client: {e}"))?;
                    let configs = configs.clone();
                    let registry = run(
                        runtime.handle(),
                        async move { Registry::discover(&configs).await },
                    )?;
                    self.core.registry.replace(registry);
                    Ok(runtime)
                })
                .as_ref()
                .map(|runtime| runtime.handle().clone())
                .map_err(Clone::clone),
        }
    }

    /// Calls the handler `name` of `hook` for an object in `namespace` and waits for the answer,
    /// kept by request for the next identical call (which then does not leave this thread).
    pub(super) fn call_one<Q: Serialize, R: IgnorableResponse + DeserializeOwned + Send + 'static>(
        &self,
        hook: &str,
        name: &str,
        namespace: &str,
        request: &Q,
    ) -> Result<R, String> {
        let handle = self.ready()?;
        let prepared = self.core.prepare(hook, name, namespace, request)?;
        let key = CacheKey::new(&prepared.name, &prepared.request);
        if let Some(response) = self.core.cached(&prepared.name, &key) {
            return Ok(response);
        }
        let core = Arc::clone(&self.core);
        run(&handle, async move { core.send(prepared, Some(key)).await }).and_then(|answer| answer)
    }
}

impl Core {
    fn new(registry: SharedRegistry, namespaces: NamespaceLookup, metrics: Option<Metrics>) -> Self {
        Self {
            registry,
            namespaces,
            backoff: ServerBackoff::default(),
            cache: ResponseCache::default(),
            hooks: HookCache::default(),
            metrics,
        }
    }

    /// Finds the handler `name`, checks it serves `hook` for objects of `namespace`, and builds
    /// the request it is sent.
    fn prepare<Q: Serialize>(
        &self,
        hook: &str,
        name: &str,
        namespace: &str,
        request: &Q,
    ) -> Result<Prepared, String> {
        let failed = |reason: String| format!("failed to call extension handler {name:?}: {reason}");
        let registration = self.registry.get(name).map_err(failed)?;
        if registration.hook != hook {
            return Err(failed(format!(
                "handler does not match GroupHook \"hooks.runtime.cluster.x-k8s.io/{hook}\""
            )));
        }
        self.check_namespace(&registration, namespace).map_err(failed)?;
        let request = with_settings(request, &registration.settings).map_err(failed)?;
        Ok(Prepared {
            name: name.to_owned(),
            registration,
            request,
        })
    }

    /// Whether the handler is called for objects of `namespace`.
    fn check_namespace(&self, registration: &Registration, namespace: &str) -> Result<(), String> {
        if self.selects(registration, namespace)? {
            Ok(())
        } else {
            Err(format!("namespaceSelector did not match namespace {namespace}"))
        }
    }

    /// Whether the handler's namespace selector selects `namespace`; why it cannot tell (a
    /// namespace that is not known) when it has a selector.
    pub(super) fn selects(&self, registration: &Registration, namespace: &str) -> Result<bool, String> {
        let selector = &registration.namespace_selector;
        if selector.is_empty() {
            return Ok(true);
        }
        let labels = (self.namespaces)(namespace).ok_or_else(|| {
            format!("failed to match namespace: failed to get namespace {namespace}: not found")
        })?;
        Ok(selector.matches(&labels))
    }

    /// The answer kept for the request `key` to the handler `name`, if any.
    fn cached<R: DeserializeOwned>(&self, name: &str, key: &CacheKey) -> Option<R> {
        let response = serde_json::from_value(self.cache.get(key, Instant::now())?).ok()?;
        if let Some(metrics) = &self.metrics {
            metrics.record_extension_cache_hit(name);
        }
        Some(response)
    }

    /// Sends a prepared call, unless its server is backing off; an answer with `status: Failure`
    /// is an error whatever the policy. A successful answer is kept under `key`, if given.
    pub(super) async fn send<R: IgnorableResponse + DeserializeOwned>(
        &self,
        prepared: Prepared,
        key: Option<CacheKey>,
    ) -> Result<R, String> {
        let Prepared {
            name,
            registration,
            request,
        } = prepared;
        let failed = |reason: String| format!("failed to call extension handler {name:?}: {reason}");
        let answer = match self.exchange::<R>(&name, &registration, request).await {
            Ok(answer) => answer,
            Err(_) if registration.failure_policy == FailurePolicy::Ignore => {
                tracing::warn!(
                    handler = name,
                    "ignoring a failed call because of failurePolicy Ignore"
                );
                return Ok(R::ignored());
            }
            Err(error) => return Err(failed(error)),
        };
        let (response, raw) = answer;
        response
            .success()
            .map_err(|message| failed(format!("got failure response: {}", echoed(message))))?;
        if let Some(key) = key {
            self.cache.put(key, raw, Instant::now());
        }
        Ok(response)
    }

    /// The decoded answer to `request` and its JSON, or why there is none: the network is not
    /// touched while the server backs off, and a call that gets no answer opens its window.
    async fn exchange<R: IgnorableResponse + DeserializeOwned>(
        &self,
        name: &str,
        registration: &Registration,
        request: Value,
    ) -> Result<(R, Value), String> {
        let server = &registration.config;
        self.backoff.check(server, Instant::now())?;
        let start = Instant::now();
        let answer = registration
            .client
            .call::<Value>(
                &registration.hook,
                Some(&registration.handler),
                request,
                registration.timeout,
            )
            .await;
        match &answer {
            Err(error) if error.is_transport() => {
                self.backoff.failed(server, &error.to_string(), Instant::now());
            }
            _ => self.backoff.succeeded(server),
        }
        let decoded = answer.map_err(|e| e.to_string()).and_then(|mut raw| {
            R::upgrade(&mut raw);
            serde_json::from_value::<R>(raw.clone())
                .map(|response| (response, raw))
                .map_err(|e| {
                    format!(
                        "http call failed: failed to decode response: {}",
                        echoed(&e.to_string())
                    )
                })
        });
        if let Some(metrics) = &self.metrics {
            let succeeded = matches!(&decoded, Ok((response, _)) if response.success().is_ok());
            metrics.record_extension_call(name, start.elapsed(), succeeded);
        }
        decoded
    }
}

impl ExternalPatches for RuntimeExtensions {
    fn generate(
        &self,
        extension: &str,
        namespace: &str,
        request: &GeneratePatchesRequest,
    ) -> Result<GeneratePatchesResponse, String> {
        self.call_one("GeneratePatches", extension, namespace, request)
    }

    fn validate(
        &self,
        extension: &str,
        namespace: &str,
        request: &ValidateTopologyRequest,
    ) -> Result<ValidateTopologyResponse, String> {
        self.call_one("ValidateTopology", extension, namespace, request)
    }
}

impl Drop for RuntimeExtensions {
    /// Stops an own runtime without waiting: dropping it from async code would panic.
    fn drop(&mut self) {
        if let Executor::Own { started, .. } = &mut self.executor {
            if let Some(Ok(runtime)) = started.take() {
                runtime.shutdown_background();
            }
        }
    }
}

/// Runs `future` on `runtime` from synchronous code (a blocking thread, or another runtime's),
/// waiting for it.
pub(super) fn run<T: Send + 'static>(
    runtime: &Handle,
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
pub(super) fn with_settings<Q: Serialize>(
    request: &Q,
    settings: &BTreeMap<String, String>,
) -> Result<Value, String> {
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
