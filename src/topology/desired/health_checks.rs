//! The desired MachineHealthChecks of the control plane and of the MachineDeployments.

use serde_json::{json, Map, Value};

use super::owned_labels;
use crate::api::{MachineHealthCheckClass, MachineHealthCheckTopology};

/// Seconds Cluster API's MachineHealthCheck defaulting gives `checks.nodeStartupTimeoutSeconds`.
const DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS: i32 = 600;

/// The health check settings in force, as Cluster API v1.14 picks them: none when the topology
/// disables it or neither the class nor the topology defines one; else the topology's checks and
/// remediation when it defines some, otherwise the class's. `remediation.maxInFlight` belongs to
/// the MachineDeployment, not to the check, so it is left out.
pub fn effective(
    class: &MachineHealthCheckClass,
    topology: &MachineHealthCheckTopology,
) -> Option<MachineHealthCheckClass> {
    if topology.enabled == Some(false) || (class.is_unset() && !topology.is_defined()) {
        return None;
    }
    let mut check = if topology.is_defined() {
        MachineHealthCheckClass {
            checks: topology.checks.clone(),
            remediation: topology.remediation.clone(),
        }
    } else {
        class.clone()
    };
    check.remediation.max_in_flight = None;
    Some(check)
}

/// A MachineHealthCheck named after its target, selecting its machines by `match_labels`, with
/// Cluster API's defaults (`checks.nodeStartupTimeoutSeconds` 600).
pub fn desired(
    name: &str,
    namespace: &str,
    cluster: &str,
    match_labels: Map<String, Value>,
    check: &MachineHealthCheckClass,
) -> Value {
    let mut checks = check.checks.clone();
    checks
        .node_startup_timeout_seconds
        .get_or_insert(DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS);
    let mut spec = Map::new();
    spec.insert("clusterName".to_owned(), json!(cluster));
    spec.insert("selector".to_owned(), json!({"matchLabels": match_labels}));
    spec.insert(
        "checks".to_owned(),
        serde_json::to_value(&checks).unwrap_or_else(|_| json!({})),
    );
    let remediation = serde_json::to_value(&check.remediation).unwrap_or(Value::Null);
    if remediation.as_object().is_some_and(|r| !r.is_empty()) {
        spec.insert("remediation".to_owned(), remediation);
    }
    json!({
        "apiVersion": super::CAPI_API_VERSION,
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
            serde_yaml_ng::from_str("{remediation: {templateRef: {apiVersion: r/v1, kind: T, name: t}}}")
                .unwrap();
        let check = desired("cp", "ns", "c1", Map::new(), &bare);
        assert_eq!(check["apiVersion"], "cluster.x-k8s.io/v1beta2");
        assert_eq!(check["spec"]["checks"]["nodeStartupTimeoutSeconds"], 600);
        assert_eq!(check["spec"]["remediation"]["templateRef"]["name"], "t");
        let set: MachineHealthCheckClass = serde_yaml_ng::from_str(
            "{checks: {nodeStartupTimeoutSeconds: 300}, remediation: {triggerIf: {unhealthyLessThanOrEqualTo: 2}}}",
        )
        .unwrap();
        let check = desired("cp", "ns", "c1", Map::new(), &set);
        assert_eq!(
            check["spec"]["remediation"]["triggerIf"]["unhealthyLessThanOrEqualTo"],
            2
        );
        assert_eq!(check["spec"]["checks"]["nodeStartupTimeoutSeconds"], 300);
    }

    #[test]
    fn topology_can_disable_or_replace_the_class_check() {
        let class: MachineHealthCheckClass = serde_yaml_ng::from_str(
            "{checks: {nodeStartupTimeoutSeconds: 600}, remediation: {maxInFlight: 1}}",
        )
        .unwrap();
        let off: MachineHealthCheckTopology = serde_yaml_ng::from_str("{enabled: false}").unwrap();
        let own: MachineHealthCheckTopology =
            serde_yaml_ng::from_str("{checks: {nodeStartupTimeoutSeconds: 300}}").unwrap();
        let none = MachineHealthCheckTopology::default();
        let from_class = effective(&class, &none).unwrap();
        assert_eq!(from_class.checks, class.checks);
        assert_eq!(from_class.remediation.max_in_flight, None);
        assert_eq!(effective(&class, &off), None);
        assert_eq!(effective(&MachineHealthCheckClass::default(), &none), None);
        assert_eq!(
            effective(&class, &own).and_then(|c| c.checks.node_startup_timeout_seconds),
            Some(300)
        );
    }
}
