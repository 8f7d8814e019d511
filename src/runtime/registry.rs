//! The handlers of the Runtime Extensions, by their registered name `<handler>.<ExtensionConfig>`:
//! found by calling each ExtensionConfig's Discovery hook, with what a call to each needs.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use serde_json::json;

use super::client::ExtensionClient;
use super::response::{echoed, HookResponse};
use crate::api::names::dns1123_label_problems;
use crate::api::runtime::{
    DiscoveryResponse, ExtensionConfig, ExtensionHandler, FailurePolicy, HOOKS_API_VERSION,
};
use crate::api::selector::Selector;

/// How long a Discovery call may take.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// A handler's timeout when discovery gives none.
const DEFAULT_TIMEOUT_SECONDS: i32 = 10;
/// The longest timeout a handler may ask for.
const MAX_TIMEOUT_SECONDS: i32 = 30;
/// The hooks of hooks.runtime.cluster.x-k8s.io/v1alpha1 in Cluster API v1.14's Runtime SDK
/// catalog.
const CATALOG: [&str; 14] = [
    "Discovery",
    "BeforeClusterCreate",
    "AfterControlPlaneInitialized",
    "BeforeClusterUpgrade",
    "BeforeControlPlaneUpgrade",
    "AfterControlPlaneUpgrade",
    "BeforeWorkersUpgrade",
    "AfterWorkersUpgrade",
    "AfterClusterUpgrade",
    "BeforeClusterDelete",
    "GeneratePatches",
    "ValidateTopology",
    "DiscoverVariables",
    "GenerateUpgradePlan",
];

/// One discovered handler and how to call it.
#[derive(Debug, Clone)]
pub struct Registration {
    /// `<handler>.<ExtensionConfig>`.
    pub name: String,
    /// The ExtensionConfig that registered it.
    pub config: String,
    /// The handler's own name, as its server knows it.
    pub handler: String,
    /// The hook it serves, e.g. `GeneratePatches`.
    pub hook: String,
    /// How long a call may take.
    pub timeout: Duration,
    /// What a failed call means.
    pub failure_policy: FailurePolicy,
    /// The ExtensionConfig's settings, under those of each request.
    pub settings: BTreeMap<String, String>,
    /// The namespaces of the objects it is called for.
    pub namespace_selector: Arc<Selector>,
    /// Its server's client, shared by the server's handlers.
    pub client: Arc<ExtensionClient>,
}

/// Every handler of some ExtensionConfigs, and why the others could not be discovered.
#[derive(Debug, Default)]
pub struct Registry {
    handlers: BTreeMap<String, Registration>,
    /// ExtensionConfig name -> why its discovery failed.
    undiscovered: BTreeMap<String, String>,
}

impl Registry {
    /// Discovers the handlers of every ExtensionConfig in `configs`, one after the other; a
    /// config whose discovery fails is remembered with the reason.
    pub async fn discover(configs: &[ExtensionConfig]) -> Registry {
        let mut registry = Registry::default();
        for config in configs {
            registry.set(config.name(), discover_config(config).await);
        }
        registry
    }

    /// Replaces the handlers of the ExtensionConfig `config_name` with `outcome`'s. A failed
    /// discovery keeps the handlers found last, as Cluster API keeps the last registration (a
    /// rediscovery that times out must not stop Clusters whose calls still succeed); a config
    /// never discovered records why.
    pub fn set(&mut self, config_name: &str, outcome: Result<Vec<Registration>, String>) {
        match outcome {
            Ok(handlers) => {
                self.remove(config_name);
                self.handlers
                    .extend(handlers.into_iter().map(|r| (r.name.clone(), r)));
            }
            Err(_) if self.handlers.values().any(|r| r.config == config_name) => {}
            Err(reason) => {
                self.undiscovered.insert(config_name.to_owned(), reason);
            }
        }
    }

    /// Forgets the ExtensionConfig `config_name`: its handlers and any discovery failure.
    pub fn remove(&mut self, config_name: &str) {
        self.handlers.retain(|_, r| r.config != config_name);
        self.undiscovered.remove(config_name);
    }

    /// The handlers the ExtensionConfig `config_name` registered, by name; why its discovery
    /// failed if it did.
    pub fn registrations(&self, config_name: &str) -> Result<Vec<Registration>, String> {
        if let Some(reason) = self.undiscovered.get(config_name) {
            return Err(reason.clone());
        }
        Ok(self
            .handlers
            .values()
            .filter(|r| r.config == config_name)
            .cloned()
            .collect())
    }

    /// Every handler of `hook`, by name.
    pub fn serving(&self, hook: &str) -> Vec<Registration> {
        self.handlers
            .values()
            .filter(|r| r.hook == hook)
            .cloned()
            .collect()
    }

    /// The handler registered as `name`, or why there is none.
    pub fn get(&self, name: &str) -> Result<&Registration, String> {
        if let Some(registration) = self.handlers.get(name) {
            return Ok(registration);
        }
        // Handler names are DNS labels: the ExtensionConfig's name is all after the first dot.
        let failed = name
            .split_once('.')
            .and_then(|(_, config)| self.undiscovered.get(config));
        Err(match failed {
            Some(reason) => format!("failed to get extension handler {name:?} from registry: {reason}"),
            None => format!(
                "failed to get extension handler {name:?} from registry: handler with name {name:?} has not been registered"
            ),
        })
    }
}

/// A [`Registry`] shared by the controllers and updated in place: the ExtensionConfig controller
/// sets each config's discovered handlers, the topology and ClusterClass controllers read them.
/// Clones share one registry.
#[derive(Debug, Clone, Default)]
pub struct SharedRegistry(Arc<RwLock<Registry>>);

impl SharedRegistry {
    /// Replaces every handler with those of `registry`.
    pub fn replace(&self, registry: Registry) {
        *self.write() = registry;
    }

    /// Replaces the handlers of the ExtensionConfig `config_name` with `outcome`'s, or records
    /// why its discovery failed.
    pub fn set(&self, config_name: &str, outcome: Result<Vec<Registration>, String>) {
        self.write().set(config_name, outcome);
    }

    /// Forgets the ExtensionConfig `config_name`.
    pub fn remove(&self, config_name: &str) {
        self.write().remove(config_name);
    }

    /// The handler registered as `name`, or why there is none.
    pub fn get(&self, name: &str) -> Result<Registration, String> {
        self.read().get(name).cloned()
    }

    /// Every handler of `hook`, by name.
    pub fn serving(&self, hook: &str) -> Vec<Registration> {
        self.read().serving(hook)
    }

    /// The handlers the ExtensionConfig `config_name` registered (for its `status.handlers`), or
    /// why its discovery failed.
    pub fn registrations(&self, config_name: &str) -> Result<Vec<Registration>, String> {
        self.read().registrations(config_name)
    }

    /// The registry for reading; a writer that panicked left it whole (each write is one
    /// map update), so a poisoned lock is still read.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Registry> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The registry for writing.
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Calls `config`'s Discovery hook: the handlers its server lists, validated and defaulted as
/// Cluster API does, or why there are none (the text [`Registry::get`] then reports).
pub async fn discover_config(config: &ExtensionConfig) -> Result<Vec<Registration>, String> {
    let name = config.name();
    let failed = |reason: String| format!("failed to discover extension {name:?}: {reason}");
    let selector = config.spec.namespace_selector.clone().unwrap_or_default();
    let selector = Arc::new(
        Selector::parse(&selector).map_err(|e| failed(format!("failed to create namespaceSelector: {e}")))?,
    );
    let client = Arc::new(ExtensionClient::new(&config.spec.client_config).map_err(failed)?);
    let response: DiscoveryResponse = client
        .call("Discovery", None, json!({}), DISCOVERY_TIMEOUT)
        .await
        .map_err(|e| failed(e.to_string()))?;
    response
        .success()
        .map_err(|message| failed(format!("got failure response: {}", echoed(message))))?;
    let handlers: Vec<ExtensionHandler> = response.handlers.into_iter().map(defaulted).collect();
    validate(&handlers).map_err(|errors| {
        failed(format!(
            "failed to validate discovery response: [{}]",
            echoed(&errors)
        ))
    })?;
    Ok(handlers
        .into_iter()
        .map(|handler| Registration {
            name: format!("{}.{name}", handler.name),
            config: name.to_owned(),
            timeout: handler_timeout(handler.timeout_seconds),
            failure_policy: handler.failure_policy.unwrap_or(FailurePolicy::Fail),
            handler: handler.name,
            hook: handler.request_hook.hook,
            settings: config.spec.settings.clone(),
            namespace_selector: Arc::clone(&selector),
            client: Arc::clone(&client),
        })
        .collect())
}

/// How long a call to a handler may take: its `timeoutSeconds`, where 0 (or none) means the
/// default 10 seconds, as Cluster API's client reads it.
fn handler_timeout(seconds: Option<i32>) -> Duration {
    let seconds = seconds
        .filter(|seconds| *seconds != 0)
        .unwrap_or(DEFAULT_TIMEOUT_SECONDS);
    Duration::from_secs(seconds.unsigned_abs().into())
}

/// `handler` with Cluster API's defaults: failure policy `Fail`, timeout 10 seconds.
fn defaulted(mut handler: ExtensionHandler) -> ExtensionHandler {
    handler.failure_policy.get_or_insert(FailurePolicy::Fail);
    handler.timeout_seconds.get_or_insert(DEFAULT_TIMEOUT_SECONDS);
    handler
}

/// What is wrong with a discovery answer's handlers, `, `-separated as Go aggregates errors.
fn validate(handlers: &[ExtensionHandler]) -> Result<(), String> {
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for handler in handlers {
        let name = &handler.name;
        if !names.insert(name.as_str()) {
            errors.push(format!("duplicate name for handler {name} found"));
        }
        let problems = dns1123_label_problems(name);
        if !problems.is_empty() {
            errors.push(format!(
                "handler name {name} is not valid: [{}]",
                problems.join(" ")
            ));
        }
        let timeout = handler.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS);
        if !(0..=MAX_TIMEOUT_SECONDS).contains(&timeout) {
            errors.push(format!(
                "handler {name} timeoutSeconds {timeout} must be between 0 and {MAX_TIMEOUT_SECONDS}"
            ));
        }
        let hook = &handler.request_hook;
        if hook.api_version != HOOKS_API_VERSION || !CATALOG.contains(&hook.hook.as_str()) {
            errors.push(format!(
                "handler {name} requestHook {}/{} is not in the Runtime SDK catalog",
                hook.api_version, hook.hook
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::runtime::GroupVersionHook;

    fn handler(name: &str, hook: &str, timeout: Option<i32>) -> ExtensionHandler {
        ExtensionHandler {
            name: name.to_owned(),
            request_hook: GroupVersionHook {
                api_version: HOOKS_API_VERSION.to_owned(),
                hook: hook.to_owned(),
            },
            timeout_seconds: timeout,
            failure_policy: None,
        }
    }

    /// Issue 26: `timeoutSeconds: 0` is the default, as Cluster API's client reads it, never a
    /// call that times out at once.
    #[test]
    fn a_zero_timeout_is_the_default() {
        assert_eq!(handler_timeout(Some(0)), Duration::from_secs(10));
        assert_eq!(handler_timeout(None), Duration::from_secs(10));
        assert_eq!(handler_timeout(Some(3)), Duration::from_secs(3));
    }

    #[test]
    fn discovery_answers_are_validated_as_cluster_api_does() {
        assert_eq!(
            validate(&[handler("generate-patches", "GeneratePatches", None)]),
            Ok(())
        );
        let errors = validate(&[
            handler("a", "GeneratePatches", Some(31)),
            handler("a", "Unknown", None),
            handler("Bad.Name", "ValidateTopology", None),
        ])
        .unwrap_err();
        assert!(
            errors.contains("handler a timeoutSeconds 31 must be between 0 and 30"),
            "{errors}"
        );
        assert!(errors.contains("duplicate name for handler a found"), "{errors}");
        assert!(
            errors.contains(&format!(
                "handler a requestHook {HOOKS_API_VERSION}/Unknown is not in the Runtime SDK catalog"
            )),
            "{errors}"
        );
        assert!(errors.contains("handler name Bad.Name is not valid"), "{errors}");
    }

    /// A handler `name` of the ExtensionConfig `config` (its client is never called).
    fn registration(name: &str, config: &str) -> Registration {
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let client = ExtensionClient::new(&crate::api::runtime::ClientConfig {
            url: Some("https://localhost:9443".into()),
            ca_bundle: Some(base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                cert.cert.pem(),
            )),
            ..Default::default()
        })
        .unwrap();
        Registration {
            name: format!("{name}.{config}"),
            config: config.to_owned(),
            handler: name.to_owned(),
            hook: "GeneratePatches".into(),
            timeout: Duration::from_secs(10),
            failure_policy: FailurePolicy::Fail,
            settings: BTreeMap::new(),
            namespace_selector: Arc::default(),
            client: Arc::new(client),
        }
    }

    #[test]
    fn setting_a_config_replaces_only_its_own_handlers() {
        let shared = SharedRegistry::default();
        shared.set(
            "ext",
            Ok(vec![registration("a", "ext"), registration("b", "ext")]),
        );
        shared.set("other", Ok(vec![registration("a", "other")]));
        shared.set("ext", Ok(vec![registration("c", "ext")]));
        let names = |config| {
            shared
                .registrations(config)
                .unwrap()
                .into_iter()
                .map(|r| r.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(names("ext"), ["c.ext"]);
        assert_eq!(names("other"), ["a.other"]);
        assert!(shared.get("a.ext").is_err());
        assert_eq!(shared.get("c.ext").unwrap().handler, "c");

        // A failed rediscovery keeps the last handlers.
        shared.set("ext", Err("failed to discover extension \"ext\": refused".into()));
        assert_eq!(shared.get("c.ext").unwrap().handler, "c");
        assert_eq!(names("ext"), ["c.ext"]);

        shared.remove("ext");
        // A config that was never discovered says why.
        shared.set("ext", Err("failed to discover extension \"ext\": refused".into()));
        assert!(shared.get("c.ext").unwrap_err().ends_with("refused"));
        assert_eq!(
            shared.registrations("ext").unwrap_err(),
            "failed to discover extension \"ext\": refused"
        );
        shared.set("ext", Ok(vec![registration("c", "ext")]));
        assert!(shared.get("c.ext").is_ok());
        shared.remove("ext");
        assert!(shared
            .get("c.ext")
            .unwrap_err()
            .ends_with("handler with name \"c.ext\" has not been registered"));
        assert_eq!(names("ext"), Vec::<String>::new());
        assert_eq!(names("other"), ["a.other"]);
    }

    #[test]
    fn a_missing_handler_says_whether_its_config_failed_discovery() {
        let mut registry = Registry::default();
        registry.undiscovered.insert(
            "ext".into(),
            "failed to discover extension \"ext\": refused".into(),
        );
        assert_eq!(
            registry.get("generate.ext").unwrap_err(),
            "failed to get extension handler \"generate.ext\" from registry: failed to discover extension \"ext\": refused"
        );
        assert!(registry
            .get("generate.other")
            .unwrap_err()
            .ends_with("handler with name \"generate.other\" has not been registered"));
    }
}
