//! Cluster API's own admission webhooks for the resources capi-topology serves, switched off and
//! on again without deleting them: a `matchConditions` entry that is always false, named so it is
//! found again. Deleting entries would be undone by the next `clusterctl upgrade` as silently as
//! this is; a named condition can be told apart from the provider's own and removed exactly.

use serde_json::{json, Value};

/// The label selector of the webhook configurations `clusterctl init` installs for Cluster API's
/// core provider.
pub const CLUSTER_API_PROVIDER_SELECTOR: &str = "cluster.x-k8s.io/provider=cluster-api";

/// The name of the always-false match condition that switches an entry off.
pub const MATCH_CONDITION_NAME: &str = "capi-topology.cluster.x-k8s.io/serves-this";

/// The resources whose admission capi-topology takes over from Cluster API's core manager (whose
/// webhooks for them refuse topologies while its `ClusterTopology` / `RuntimeSDK` gates are off).
/// ClusterResourceSets stay Cluster API's: its core manager always runs their controller.
pub const TAKEN_RESOURCES: [&str; 3] = ["clusters", "clusterclasses", "extensionconfigs"];

/// Which way entries are switched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// Cluster API's entries for [`TAKEN_RESOURCES`] never match (capi-topology serves them).
    Off,
    /// Cluster API's entries match as installed (uninstall).
    On,
}

/// The first of [`TAKEN_RESOURCES`] a webhook entry's rules name, if any.
pub fn served_resource(webhook: &Value) -> Option<&'static str> {
    let rules = webhook.get("rules")?.as_array()?;
    rules
        .iter()
        .filter_map(|rule| rule.get("resources")?.as_array())
        .flatten()
        .filter_map(Value::as_str)
        .find_map(|resource| TAKEN_RESOURCES.iter().copied().find(|taken| *taken == resource))
}

fn our_condition() -> Value {
    json!({"name": MATCH_CONDITION_NAME, "expression": "false"})
}

/// The JSON Patch that switches the entries of one Validating- or MutatingWebhookConfiguration
/// (as JSON) `switch`; empty when nothing is to change, so applying it again is a no-op. Each
/// change is guarded by a `test` of the entry's name, so a configuration rewritten meanwhile
/// (entries reordered by an upgrade) makes the patch fail instead of switching the wrong entry.
pub fn switch_ops(configuration: &Value, switch: Switch) -> Vec<Value> {
    let Some(webhooks) = configuration.get("webhooks").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut ops = Vec::new();
    for (index, webhook) in webhooks.iter().enumerate() {
        if served_resource(webhook).is_none() {
            continue;
        }
        let name = webhook.get("name").cloned().unwrap_or(Value::Null);
        let conditions = webhook
            .get("matchConditions")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let ours: Vec<usize> = conditions
            .iter()
            .enumerate()
            .filter(|(_, c)| c.get("name").and_then(Value::as_str) == Some(MATCH_CONDITION_NAME))
            .map(|(i, _)| i)
            .collect();
        let guard = json!({"op": "test", "path": format!("/webhooks/{index}/name"), "value": name});
        match switch {
            Switch::Off if ours.is_empty() => {
                ops.push(guard);
                if webhook.get("matchConditions").and_then(Value::as_array).is_some() {
                    ops.push(json!({"op": "add", "path": format!("/webhooks/{index}/matchConditions/-"), "value": our_condition()}));
                } else {
                    ops.push(json!({"op": "add", "path": format!("/webhooks/{index}/matchConditions"), "value": [our_condition()]}));
                }
            }
            Switch::On if !ours.is_empty() => {
                ops.push(guard);
                if ours.len() == conditions.len() {
                    ops.push(json!({"op": "remove", "path": format!("/webhooks/{index}/matchConditions")}));
                } else {
                    // Highest index first, so each removal leaves the next index valid.
                    for position in ours.iter().rev() {
                        ops.push(json!({"op": "remove", "path": format!("/webhooks/{index}/matchConditions/{position}")}));
                    }
                }
            }
            _ => {}
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configuration() -> Value {
        serde_yaml_ng::from_str(include_str!(
            "testdata/capi-validating-webhook-configuration.yaml"
        ))
        .expect("fixture")
    }

    fn apply(configuration: &Value, ops: &[Value]) -> Value {
        let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops.to_vec())).unwrap();
        let mut patched = configuration.clone();
        json_patch::patch(&mut patched, &patch).expect("the ops apply");
        patched
    }

    fn switched_off(configuration: &Value) -> Vec<String> {
        configuration["webhooks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| {
                w["matchConditions"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c["name"] == MATCH_CONDITION_NAME))
            })
            .map(|w| w["name"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn off_switches_exactly_the_taken_resources_and_is_idempotent() {
        let original = configuration();
        let off = apply(&original, &switch_ops(&original, Switch::Off));
        assert_eq!(
            switched_off(&off),
            [
                "validation.cluster.cluster.x-k8s.io",
                "validation.clusterclass.cluster.x-k8s.io",
                "validation.extensionconfig.runtime.cluster.x-k8s.io"
            ]
        );
        assert!(switch_ops(&off, Switch::Off).is_empty());
        // The provider's own condition on the ExtensionConfig entry is kept, ours appended.
        let ext = &off["webhooks"][2]["matchConditions"];
        assert_eq!(ext[0]["name"], "provider-own");
        assert_eq!(ext[1]["name"], MATCH_CONDITION_NAME);
    }

    #[test]
    fn on_restores_the_configuration_as_installed() {
        let original = configuration();
        let off = apply(&original, &switch_ops(&original, Switch::Off));
        let on = apply(&off, &switch_ops(&off, Switch::On));
        assert_eq!(on, original);
        assert!(switch_ops(&on, Switch::On).is_empty());
    }

    #[test]
    fn a_reordered_configuration_fails_the_guard_instead_of_switching_another_entry() {
        let original = configuration();
        let ops = switch_ops(&original, Switch::Off);
        let mut reordered = original.clone();
        reordered["webhooks"].as_array_mut().unwrap().reverse();
        let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops)).unwrap();
        assert!(json_patch::patch(&mut reordered, &patch).is_err());
    }

    #[test]
    fn configurations_without_webhooks_need_nothing() {
        assert!(switch_ops(&json!({"kind": "ValidatingWebhookConfiguration"}), Switch::Off).is_empty());
        assert!(switch_ops(&json!({"webhooks": "not a list"}), Switch::On).is_empty());
    }
}
