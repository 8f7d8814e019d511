//! The engine's [`LifecycleHooks`] over HTTPS, as Cluster API v1.14's `CallAllExtensions`: every
//! handler of the hook whose namespaceSelector selects the Cluster's namespace is called, one
//! after the other (by name), the first failure ending the call; their answers are merged (the
//! lowest non-zero `retryAfterSeconds` holds, the holding handlers' messages joined in that
//! order). A blocking answer is kept per Cluster and hook until its seconds pass, and stands for
//! the hook meanwhile without a call (v1.14's hook cache); the clock lives here, never in the
//! engine.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::extensions::{run, with_settings, Prepared, RuntimeExtensions};
use super::hook_cache::HookKey;
use super::response::echoed;
use crate::api::runtime::{
    GenerateUpgradePlanRequest, GenerateUpgradePlanResponse, LifecycleRequest, LifecycleResponse,
    HOOKS_API_VERSION,
};
use crate::metrics::HookCallOutcome;
use crate::topology::hooks::{HookOutcome, LifecycleHook, LifecycleHooks};

/// The group of the Runtime SDK's hooks, as Cluster API names a GroupHook in its errors.
const HOOKS_GROUP: &str = "hooks.runtime.cluster.x-k8s.io";

impl LifecycleHooks for RuntimeExtensions {
    /// A handler whose selector cannot be matched (its namespace is not known) counts: the
    /// call then says why.
    fn registered(&self, hook: LifecycleHook, namespace: &str) -> bool {
        if self.ready().is_err() {
            return false;
        }
        self.core
            .registry
            .serving(hook.name())
            .iter()
            .any(|registration| self.core.selects(registration, namespace) != Ok(false))
    }

    fn call(
        &self,
        hook: LifecycleHook,
        namespace: &str,
        request: &LifecycleRequest,
    ) -> Result<HookOutcome, String> {
        let failed = |reason: String| {
            format!(
                "failed to call extension handlers for hook \"{}.{HOOKS_GROUP}\": {reason}",
                hook.name()
            )
        };
        let handle = self.ready().map_err(failed)?;
        let cluster = request
            .cluster
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let key = HookKey::new(namespace, cluster, hook);
        if let Some((left, message)) = self.core.hooks.get(&key, Instant::now()) {
            self.record(hook, HookCallOutcome::Cached, None);
            return Ok(HookOutcome::Retry {
                after_seconds: whole_seconds(left),
                message,
            });
        }
        let calls = self.prepare_calls(hook, namespace, &typed(request, hook), &failed)?;
        if calls.is_empty() {
            return Ok(HookOutcome::Proceed);
        }
        let core = Arc::clone(&self.core);
        let start = Instant::now();
        let answers = run(&handle, async move {
            let mut answers = Vec::with_capacity(calls.len());
            for call in calls {
                answers.push(core.send::<LifecycleResponse>(call, None).await?);
            }
            Ok::<_, String>(answers)
        })
        .and_then(|answers| answers);
        let elapsed = Some(start.elapsed());
        let answers = match answers {
            Ok(answers) => answers,
            Err(error) => {
                self.record(hook, HookCallOutcome::Failed, elapsed);
                return Err(failed(error));
            }
        };
        let outcome = merged(hook, &answers);
        self.remember(hook, key, &outcome, elapsed);
        Ok(outcome)
    }

    /// The answer is kept by request, as the topology hooks' are: the same Cluster, versions and
    /// settings ask the same plan.
    fn generate_upgrade_plan(
        &self,
        extension: &str,
        namespace: &str,
        request: &GenerateUpgradePlanRequest,
    ) -> Result<GenerateUpgradePlanResponse, String> {
        let mut request = request.clone();
        fill(
            &mut request.api_version,
            &mut request.kind,
            "GenerateUpgradePlanRequest",
        );
        self.call_one("GenerateUpgradePlan", extension, namespace, &request)
            .map_err(|error| format!("failed to get upgrade plan from extension: {error}"))
    }
}

impl RuntimeExtensions {
    /// The request to each handler of `hook` whose namespaceSelector selects `namespace`, with
    /// its settings; a selector that cannot be matched fails the call.
    fn prepare_calls(
        &self,
        hook: LifecycleHook,
        namespace: &str,
        request: &LifecycleRequest,
        failed: &dyn Fn(String) -> String,
    ) -> Result<Vec<Prepared>, String> {
        let mut calls = Vec::new();
        for registration in self.core.registry.serving(hook.name()) {
            let selected = self.core.selects(&registration, namespace).map_err(|reason| {
                failed(format!(
                    "failed to get extension handler {:?}: {reason}",
                    registration.name
                ))
            });
            match selected {
                Ok(true) => calls.push(Prepared {
                    name: registration.name.clone(),
                    request: with_settings(request, &registration.settings).map_err(failed)?,
                    registration,
                }),
                Ok(false) => {}
                Err(error) => {
                    self.record(hook, HookCallOutcome::Failed, None);
                    return Err(error);
                }
            }
        }
        Ok(calls)
    }

    /// Keeps a blocking answer for the Cluster and hook until its seconds pass (a proceeding one
    /// forgets it), and counts the call.
    fn remember(&self, hook: LifecycleHook, key: HookKey, outcome: &HookOutcome, elapsed: Option<Duration>) {
        match outcome {
            HookOutcome::Retry {
                after_seconds,
                message,
            } => {
                let now = Instant::now();
                let until = now + Duration::from_secs((*after_seconds).into());
                self.core.hooks.put(key, until, message.clone(), now);
                self.record(hook, HookCallOutcome::Retry, elapsed);
            }
            HookOutcome::Proceed => {
                self.core.hooks.remove(&key);
                self.record(hook, HookCallOutcome::Proceed, elapsed);
            }
        }
    }

    fn record(&self, hook: LifecycleHook, outcome: HookCallOutcome, elapsed: Option<Duration>) {
        if let Some(metrics) = &self.core.metrics {
            metrics.record_lifecycle_hook(hook.name(), outcome, elapsed);
        }
    }
}

/// `request` with its `apiVersion` and `kind` (`<Hook>Request`) set when the caller left them out.
fn typed(request: &LifecycleRequest, hook: LifecycleHook) -> LifecycleRequest {
    let mut request = request.clone();
    let kind = format!("{}Request", hook.name());
    fill(&mut request.api_version, &mut request.kind, &kind);
    request
}

fn fill(api_version: &mut String, kind: &mut String, default_kind: &str) {
    if api_version.is_empty() {
        HOOKS_API_VERSION.clone_into(api_version);
    }
    if kind.is_empty() {
        default_kind.clone_into(kind);
    }
}

/// The handlers' answers as one: for a blocking hook, the lowest non-zero `retryAfterSeconds`
/// (negative ones read as 0) holds, with the messages of the handlers that hold, in the order they
/// were called, joined by `, `; a hook that does not block always proceeds.
fn merged(hook: LifecycleHook, answers: &[LifecycleResponse]) -> HookOutcome {
    if !hook.blocking() {
        return HookOutcome::Proceed;
    }
    let holding: Vec<&LifecycleResponse> = answers
        .iter()
        .filter(|answer| answer.retry_after_seconds > 0)
        .collect();
    let Some(after_seconds) = holding
        .iter()
        .filter_map(|answer| u32::try_from(answer.retry_after_seconds).ok())
        .min()
    else {
        return HookOutcome::Proceed;
    };
    let message = holding
        .iter()
        .filter(|answer| !answer.message.is_empty())
        .map(|answer| echoed(&answer.message))
        .collect::<Vec<_>>()
        .join(", ");
    HookOutcome::Retry {
        after_seconds,
        message,
    }
}

/// The seconds a kept answer still holds, rounded, at least 1 (a held hook never reads as 0,
/// which would let it proceed).
fn whole_seconds(left: Duration) -> u32 {
    let rounded = (left.as_millis() + 500) / 1000;
    u32::try_from(rounded).unwrap_or(u32::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::runtime::ResponseStatus;
    use crate::runtime::NamespaceLabels;
    use serde_json::json;

    fn answer(retry_after_seconds: i32, message: &str) -> LifecycleResponse {
        LifecycleResponse {
            api_version: HOOKS_API_VERSION.to_owned(),
            kind: "BeforeClusterUpgradeResponse".to_owned(),
            status: ResponseStatus::Success,
            message: message.to_owned(),
            retry_after_seconds,
        }
    }

    #[test]
    fn the_lowest_non_zero_retry_holds_with_the_holding_messages_in_order() {
        let hook = LifecycleHook::BeforeClusterUpgrade;
        assert_eq!(merged(hook, &[]), HookOutcome::Proceed);
        assert_eq!(
            merged(hook, &[answer(0, "fine"), answer(-3, "odd")]),
            HookOutcome::Proceed
        );
        assert_eq!(
            merged(
                hook,
                &[
                    answer(30, "draining"),
                    answer(0, "fine"),
                    answer(10, ""),
                    answer(20, "backing up")
                ]
            ),
            HookOutcome::Retry {
                after_seconds: 10,
                message: "draining, backing up".to_owned()
            }
        );
        assert_eq!(
            merged(
                LifecycleHook::AfterControlPlaneInitialized,
                &[answer(30, "ignored")]
            ),
            HookOutcome::Proceed,
            "a hook that does not block always proceeds"
        );
    }

    #[test]
    fn a_kept_answer_holds_at_least_a_second() {
        assert_eq!(whole_seconds(Duration::from_millis(20)), 1);
        assert_eq!(whole_seconds(Duration::from_millis(2_400)), 2);
        assert_eq!(whole_seconds(Duration::from_millis(2_600)), 3);
    }

    #[test]
    fn the_request_is_typed_for_its_hook() {
        let request = typed(
            &LifecycleRequest {
                cluster: json!({"metadata": {"name": "dev"}}),
                ..LifecycleRequest::default()
            },
            LifecycleHook::BeforeClusterDelete,
        );
        assert_eq!(request.api_version, HOOKS_API_VERSION);
        assert_eq!(request.kind, "BeforeClusterDeleteRequest");
    }

    #[test]
    fn without_handlers_nothing_is_registered_and_every_hook_proceeds() {
        let extensions = RuntimeExtensions::new(Vec::new(), NamespaceLabels::new());
        let request = LifecycleRequest {
            cluster: json!({"metadata": {"name": "dev", "namespace": "default"}}),
            ..LifecycleRequest::default()
        };
        for hook in LifecycleHook::ALL {
            assert!(!extensions.registered(hook, "default"));
            assert_eq!(
                extensions.call(hook, "default", &request),
                Ok(HookOutcome::Proceed)
            );
        }
        let err = extensions
            .generate_upgrade_plan("plan.ext", "default", &GenerateUpgradePlanRequest::default())
            .unwrap_err();
        assert!(
            err.starts_with(
                "failed to get upgrade plan from extension: failed to call extension handler \"plan.ext\""
            ),
            "{err}"
        );
    }
}
