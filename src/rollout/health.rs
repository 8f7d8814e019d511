//! When a Cluster counts as healthy at its revision, for a rollout's health gate: its topology
//! applied at that revision, the Cluster `Available`, no remediation in flight, and its control
//! plane and every MachineDeployment caught up with their latest spec, every replica up to date
//! and available.

use serde_json::Value;

use crate::api::conditions::find;

/// A Cluster's health at its revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Everything the gate asks for holds.
    Healthy,
    /// What the gate still waits for.
    Waiting(String),
}

impl Health {
    /// True when healthy.
    pub fn is_healthy(&self) -> bool {
        matches!(self, Health::Healthy)
    }
}

/// The health of `cluster` (its control plane and MachineDeployments given), where `applied`
/// says whether the topology controller has applied the Cluster's revision.
pub fn health(
    cluster: &Value,
    control_plane: Option<&Value>,
    machine_deployments: &[&Value],
    applied: bool,
) -> Health {
    if !applied {
        return Health::Waiting("its topology is not applied at the revision yet".to_owned());
    }
    let conditions = cluster.pointer("/status/conditions");
    let available = find(conditions, "Available");
    if available.and_then(|c| c["status"].as_str()) != Some("True") {
        let why = available.and_then(|c| c["message"].as_str()).unwrap_or_default();
        return Health::Waiting(format!("the Cluster is not Available{}", detail(why)));
    }
    if find(conditions, "Remediating").and_then(|c| c["status"].as_str()) == Some("True") {
        return Health::Waiting("a MachineHealthCheck remediation is in flight".to_owned());
    }
    if let Some(control_plane) = control_plane {
        if let Some(waiting) = rolled_out(control_plane, "the control plane") {
            return Health::Waiting(waiting);
        }
    }
    for md in machine_deployments {
        let name = md
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(waiting) = rolled_out(md, &format!("MachineDeployment {name}")) {
            return Health::Waiting(waiting);
        }
    }
    Health::Healthy
}

fn detail(message: &str) -> String {
    match message.lines().next() {
        Some(line) if !line.is_empty() => format!(": {line}"),
        _ => String::new(),
    }
}

/// What a scalable object (control plane, MachineDeployment) still waits for, if anything: its
/// controller has seen its latest generation and every wanted replica is up to date and
/// available (v1beta2 status fields; a provider that reports no such count is not held on it).
fn rolled_out(object: &Value, what: &str) -> Option<String> {
    let number = |pointer: &str| object.pointer(pointer).and_then(Value::as_i64);
    let generation = number("/metadata/generation").unwrap_or(0);
    let observed = number("/status/observedGeneration").unwrap_or(0);
    if observed < generation {
        return Some(format!(
            "{what} has not been reconciled at generation {generation} yet"
        ));
    }
    let wanted = number("/spec/replicas")?;
    for (field, adjective) in [
        ("upToDateReplicas", "up to date"),
        ("availableReplicas", "available"),
    ] {
        if let Some(count) = number(&format!("/status/{field}")) {
            if count < wanted {
                return Some(format!("{what}: {count} of {wanted} replicas {adjective}"));
            }
        }
    }
    let total = number("/status/replicas").unwrap_or(wanted);
    (total > wanted).then(|| format!("{what}: {} old replicas still there", total - wanted))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cluster(available: &str) -> Value {
        json!({"status": {"conditions": [{"type": "Available", "status": available, "message": "* ControlPlaneAvailable: waiting"}]}})
    }

    fn scaled(generation: i64, observed: i64, replicas: i64, up_to_date: i64, available: i64) -> Value {
        json!({"metadata": {"name": "md-0", "generation": generation},
               "spec": {"replicas": replicas},
               "status": {"observedGeneration": observed, "replicas": replicas,
                          "upToDateReplicas": up_to_date, "availableReplicas": available}})
    }

    #[test]
    fn healthy_only_when_applied_available_and_every_replica_up_to_date() {
        let good = scaled(2, 2, 3, 3, 3);
        assert_eq!(
            health(&cluster("True"), Some(&good), &[&good], true),
            Health::Healthy
        );
        assert!(!health(&cluster("True"), Some(&good), &[&good], false).is_healthy());
        assert_eq!(
            health(&cluster("False"), None, &[], true),
            Health::Waiting("the Cluster is not Available: * ControlPlaneAvailable: waiting".into())
        );
        let stale = scaled(3, 2, 3, 3, 3);
        assert_eq!(
            health(&cluster("True"), Some(&stale), &[], true),
            Health::Waiting("the control plane has not been reconciled at generation 3 yet".into())
        );
        let rolling = scaled(2, 2, 3, 1, 3);
        assert_eq!(
            health(&cluster("True"), None, &[&rolling], true),
            Health::Waiting("MachineDeployment md-0: 1 of 3 replicas up to date".into())
        );
    }

    #[test]
    fn a_remediation_in_flight_holds_the_gate() {
        let mut remediating = cluster("True");
        remediating["status"]["conditions"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "Remediating", "status": "True"}));
        assert!(!health(&remediating, None, &[], true).is_healthy());
    }
}
