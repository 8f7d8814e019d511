//! The handlers of the Runtime Extensions, by their registered name `<handler>.<ExtensionConfig>`:
//! found by calling each ExtensionConfig's Discovery hook, with what a call to each needs.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::client::ExtensionClient;
use super::response::HookResponse;
use crate::addons::selector::Selector;
use crate::admission::cluster::metadata::dns1123_label_problems;
use crate::api::runtime::{
    DiscoveryResponse, ExtensionConfig, ExtensionHandler, FailurePolicy, HOOKS_API_VERSION,
};

/// How long a Discovery call may take.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// A handler's timeout when discovery gives none.
const DEFAULT_TIMEOUT_SECONDS: i32 = 10;
/// The longest timeout a handler may ask for.
const MAX_TIMEOUT_SECONDS: i32 = 30;
/// The hooks of hooks.runtime.cluster.x-k8s.io/v1alpha1 in Cluster API's Runtime SDK catalog.
const CATALOG: [&str; 10] = [
    "Discovery",
    "BeforeClusterCreate",
    "AfterControlPlaneInitialized",
    "BeforeClusterUpgrade",
    "AfterControlPlaneUpgrade",
    "AfterClusterUpgrade",
    "BeforeClusterDelete",
    "GeneratePatches",
    "ValidateTopology",
    "DiscoverVariables",
];

/// One discovered handler and how to call it.
#[derive(Debug, Clone)]
pub struct Registration {
    /// `<handler>.<ExtensionConfig>`.
    pub name: String,
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
            match discover(config).await {
                Ok(handlers) => registry
                    .handlers
                    .extend(handlers.into_iter().map(|r| (r.name.clone(), r))),
                Err(reason) => {
                    registry.undiscovered.insert(config.name().to_owned(), reason);
                }
            }
        }
        registry
    }

    /// The handler registered as `name`, or why there is none.
    pub fn get(&self, name: &str) -> Result<&Registration, String> {
        if let Some(registration) = self.handlers.get(name) {
            return Ok(registration);
        }
        let failed = name
            .split_once('.')
            .and_then(|(_, config)| Some((config, self.undiscovered.get(config)?)));
        Err(match failed {
            Some((_, reason)) => format!("failed to get extension handler {name:?} from registry: {reason}"),
            None => format!(
                "failed to get extension handler {name:?} from registry: handler with name {name:?} has not been registered"
            ),
        })
    }
}

/// The handlers `config`'s server lists, validated and defaulted as Cluster API does.
async fn discover(config: &ExtensionConfig) -> Result<Vec<Registration>, String> {
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
        .map_err(|message| failed(format!("got failure response: {message}")))?;
    let handlers: Vec<ExtensionHandler> = response.handlers.into_iter().map(defaulted).collect();
    validate(&handlers)
        .map_err(|errors| failed(format!("failed to validate discovery response: [{errors}]")))?;
    Ok(handlers
        .into_iter()
        .map(|handler| Registration {
            name: format!("{}.{name}", handler.name),
            timeout: Duration::from_secs(
                handler
                    .timeout_seconds
                    .unwrap_or(DEFAULT_TIMEOUT_SECONDS)
                    .unsigned_abs()
                    .into(),
            ),
            failure_policy: handler.failure_policy.unwrap_or(FailurePolicy::Fail),
            handler: handler.name,
            hook: handler.request_hook.hook,
            settings: config.spec.settings.clone(),
            namespace_selector: Arc::clone(&selector),
            client: Arc::clone(&client),
        })
        .collect())
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
