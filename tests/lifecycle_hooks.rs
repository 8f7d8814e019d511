//! The lifecycle hooks over our runtime client ([`LifecycleHooks`] on `RuntimeExtensions`),
//! against the test extension built on Cluster API v1.14's Runtime SDK, registered twice (two
//! ExtensionConfigs, told apart by their `id` setting): every handler of a hook that serves the
//! Cluster's namespace is called, their answers merged as v1.14 merges them, a blocking answer
//! kept per Cluster and hook until it passes, a Failure answer or a server that is gone an error
//! naming the handler; GenerateUpgradePlan brings the extension's plan.
//!
//! Needs Go, as tests/runtime_extension.rs.

#[path = "common/extension.rs"]
mod extension;

use std::collections::BTreeMap;

use base64::Engine;
use capi_topology::api::runtime::{
    ExtensionConfig, GenerateUpgradePlanRequest, LifecycleRequest, ResponseStatus, UpgradeStep,
};
use capi_topology::runtime::{NamespaceLabels, RuntimeExtensions};
use capi_topology::topology::hooks::{HookOutcome, LifecycleHook, LifecycleHooks};
use serde_json::{json, Value};

use extension::{Extension, HookCall};

/// An ExtensionConfig `name` of `extension` with the setting `id`, for namespaces matching
/// `selector` (all when `None`).
fn config(extension: &Extension, name: &str, selector: Option<Value>) -> ExtensionConfig {
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&extension.ca_pem);
    let mut config = json!({"apiVersion": "runtime.cluster.x-k8s.io/v1beta2", "kind": "ExtensionConfig",
        "metadata": {"name": name},
        "spec": {"clientConfig": {"url": format!("https://{}", extension.addr), "caBundle": ca_bundle},
                 "settings": {"id": name}}});
    if let Some(selector) = selector {
        config["spec"]["namespaceSelector"] = selector;
    }
    serde_json::from_value(config).expect("an ExtensionConfig")
}

fn request(namespace: &str, name: &str) -> LifecycleRequest {
    LifecycleRequest::for_cluster(
        &json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace}, "spec": {"topology": {"version": "v1.33.0"}}}),
    )
}

fn called(calls: &[HookCall]) -> Vec<(String, String, String)> {
    calls
        .iter()
        .map(|c| (c.hook.clone(), c.id.clone(), c.cluster.clone()))
        .collect()
}

fn call(hook: &str, id: &str, cluster: &str) -> (String, String, String) {
    (hook.to_owned(), id.to_owned(), cluster.to_owned())
}

#[test]
fn lifecycle_hooks_are_called_merged_and_held_as_cluster_api_does() {
    let control = extension::tempdir::Dir::new("lifecycle-control");
    let extension = Extension::with_lifecycle_hooks(control.path());
    // `b` serves only namespaces labelled hooks=b.
    let configs = vec![
        config(&extension, "a", None),
        config(&extension, "b", Some(json!({"matchLabels": {"hooks": "b"}}))),
    ];
    let namespaces: NamespaceLabels = BTreeMap::from([
        (
            "both".to_owned(),
            BTreeMap::from([("hooks".to_owned(), "b".to_owned())]),
        ),
        ("only-a".to_owned(), BTreeMap::new()),
    ]);
    let hooks = RuntimeExtensions::new(configs, namespaces);
    let upgrade = LifecycleHook::BeforeClusterUpgrade;
    assert!(hooks.registered(upgrade, "only-a"));

    // Both handlers hold: the lowest retry holds, with both messages in handler-name order.
    extension.answer(&json!({
        "BeforeClusterUpgrade/a": {"retryAfterSeconds": 30, "message": "a drains"},
        "BeforeClusterUpgrade/b": {"retryAfterSeconds": 10, "message": "b backs up"},
    }));
    assert_eq!(
        hooks.call(upgrade, "both", &request("both", "one")),
        Ok(HookOutcome::Retry {
            after_seconds: 10,
            message: "a drains, b backs up".to_owned()
        })
    );
    assert_eq!(
        called(&extension.calls()),
        [
            call("BeforeClusterUpgrade", "a", "both/one"),
            call("BeforeClusterUpgrade", "b", "both/one")
        ]
    );

    // Kept for that Cluster and hook: no call until it passes, the seconds left reported.
    let again = hooks.call(upgrade, "both", &request("both", "one"));
    assert!(
        matches!(&again, Ok(HookOutcome::Retry { after_seconds, message })
            if (9..=10).contains(after_seconds) && message == "a drains, b backs up"),
        "{again:?}"
    );
    assert_eq!(extension.calls().len(), 2, "a kept answer calls nobody");

    // Another Cluster, in a namespace only `a` serves, is called; `a` alone holds it.
    assert_eq!(
        hooks.call(upgrade, "only-a", &request("only-a", "two")),
        Ok(HookOutcome::Retry {
            after_seconds: 30,
            message: "a drains".to_owned()
        })
    );
    assert_eq!(
        called(&extension.calls()[2..]),
        [call("BeforeClusterUpgrade", "a", "only-a/two")]
    );

    // Every handler lets go: proceed. A hook that does not block proceeds whatever it answers.
    extension
        .answer(&json!({"AfterControlPlaneInitialized": {"retryAfterSeconds": 5, "message": "ignored"}}));
    let delete = LifecycleHook::BeforeClusterDelete;
    assert_eq!(
        hooks.call(delete, "both", &request("both", "one")),
        Ok(HookOutcome::Proceed)
    );
    assert_eq!(
        hooks.call(
            LifecycleHook::AfterControlPlaneInitialized,
            "both",
            &request("both", "one")
        ),
        Ok(HookOutcome::Proceed)
    );

    // A Failure answer is an error naming the hook and the handler; the first failure ends the call.
    extension.answer(&json!({"BeforeClusterCreate/a": {"status": "Failure", "message": "no quota"}}));
    let before = extension.calls().len();
    let failed = hooks
        .call(
            LifecycleHook::BeforeClusterCreate,
            "both",
            &request("both", "three"),
        )
        .unwrap_err();
    assert!(
        failed.starts_with(
            "failed to call extension handlers for hook \"BeforeClusterCreate.hooks.runtime.cluster.x-k8s.io\": \
             failed to call extension handler \"before-cluster-create.a\": got failure response"
        ) && failed.contains("no quota"),
        "{failed}"
    );
    assert_eq!(
        extension.calls().len(),
        before + 1,
        "b is not called after a failed"
    );

    // GenerateUpgradePlan: the extension's steps.
    extension.answer(&json!({"GenerateUpgradePlan": {
        "controlPlaneUpgrades": [{"version": "v1.34.2"}, {"version": "v1.35.0"}],
        "workersUpgrades": [{"version": "v1.35.0"}]}}));
    let plan = hooks
        .generate_upgrade_plan(
            "generate-upgrade-plan.a",
            "only-a",
            &GenerateUpgradePlanRequest {
                cluster: request("only-a", "two").cluster,
                from_control_plane_kubernetes_version: "v1.33.0".into(),
                from_workers_kubernetes_version: "v1.33.0".into(),
                to_kubernetes_version: "v1.35.0".into(),
                ..GenerateUpgradePlanRequest::default()
            },
        )
        .unwrap();
    assert_eq!(plan.status, ResponseStatus::Success);
    let step = |version: &str| UpgradeStep {
        version: version.to_owned(),
    };
    assert_eq!(plan.control_plane_upgrades, [step("v1.34.2"), step("v1.35.0")]);
    assert_eq!(plan.workers_upgrades, [step("v1.35.0")]);
    let last = extension.calls().pop().unwrap();
    assert_eq!(
        (last.hook.as_str(), last.from.as_str(), last.to.as_str()),
        ("GenerateUpgradePlan", "v1.33.0", "v1.35.0")
    );

    // The server gone: with failurePolicy Fail (the default), the hook fails, naming the handler.
    drop(extension);
    let gone = hooks
        .call(delete, "only-a", &request("only-a", "two"))
        .unwrap_err();
    assert!(
        gone.contains("failed to call extension handler \"before-cluster-delete.a\""),
        "{gone}"
    );
}
