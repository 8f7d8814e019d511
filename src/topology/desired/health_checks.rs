//! The desired MachineHealthChecks of the control plane and of the MachineDeployments.

use serde_json::{json, Map, Value};

use super::owned_labels;
use crate::api::{MachineHealthCheckClass, MachineHealthCheckTopology};

/// The health check settings in force: the topology's class when enabled and given, else the
/// class's; none when the topology disables it or neither defines one.
pub fn effective<'a>(
    class: Option<&'a MachineHealthCheckClass>,
    topology: Option<&'a MachineHealthCheckTopology>,
) -> Option<&'a MachineHealthCheckClass> {
    match topology {
        Some(t) if t.enable == Some(false) => None,
        Some(t) if t.class != MachineHealthCheckClass::default() => Some(&t.class),
        Some(t) if t.enable == Some(true) => class,
        _ => class,
    }
}

/// What Cluster API's MachineHealthCheck defaulting sets on a desired check, so it equals the
/// stored one: `maxUnhealthy` 100%, `nodeStartupTimeout` 10m0s, and the remediation template's
/// namespace.
fn set_defaults(spec: &mut Map<String, Value>, namespace: &str) {
    spec.entry("maxUnhealthy").or_insert_with(|| json!("100%"));
    spec.entry("nodeStartupTimeout").or_insert_with(|| json!("10m0s"));
    if let Some(Value::Object(template)) = spec.get_mut("remediationTemplate") {
        let empty = template
            .get("namespace")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if empty {
            template.insert("namespace".to_owned(), json!(namespace));
        }
    }
}

/// A MachineHealthCheck named after its target, selecting its machines by `match_labels`, with
/// Cluster API's defaults.
pub fn desired(
    name: &str,
    namespace: &str,
    cluster: &str,
    match_labels: Map<String, Value>,
    check: &MachineHealthCheckClass,
) -> Value {
    let mut spec = serde_json::to_value(check).unwrap_or_else(|_| json!({}));
    if let Some(map) = spec.as_object_mut() {
        map.insert("clusterName".to_owned(), json!(cluster));
        map.insert("selector".to_owned(), json!({"matchLabels": match_labels}));
        set_defaults(map, namespace);
    }
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachineHealthCheck",
        "metadata": {"name": name, "namespace": namespace, "labels": owned_labels(cluster)},
        "spec": spec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn desired_checks_carry_the_defaults_of_the_webhook() {
        let bare: MachineHealthCheckClass =
            serde_yaml_ng::from_str("{remediationTemplate: {kind: T, name: t}}").unwrap();
        let check = desired("cp", "ns", "c1", Map::new(), &bare);
        assert_eq!(check["spec"]["maxUnhealthy"], "100%");
        assert_eq!(check["spec"]["nodeStartupTimeout"], "10m0s");
        assert_eq!(check["spec"]["remediationTemplate"]["namespace"], "ns");
        let set: MachineHealthCheckClass =
            serde_yaml_ng::from_str("{maxUnhealthy: 2, nodeStartupTimeout: 5m}").unwrap();
        let check = desired("cp", "ns", "c1", Map::new(), &set);
        assert_eq!(check["spec"]["maxUnhealthy"], 2);
        assert_eq!(check["spec"]["nodeStartupTimeout"], "5m");
    }

    #[test]
    fn topology_can_disable_or_replace_the_class_check() {
        let class: MachineHealthCheckClass = serde_yaml_ng::from_str("{nodeStartupTimeout: 10m}").unwrap();
        let off: MachineHealthCheckTopology = serde_yaml_ng::from_str("{enable: false}").unwrap();
        let own: MachineHealthCheckTopology = serde_yaml_ng::from_str("{nodeStartupTimeout: 5m}").unwrap();
        assert_eq!(effective(Some(&class), None), Some(&class));
        assert_eq!(effective(Some(&class), Some(&off)), None);
        assert_eq!(
            effective(Some(&class), Some(&own)).and_then(|c| c.node_startup_timeout.clone()),
            Some("5m".to_owned())
        );
    }
}
