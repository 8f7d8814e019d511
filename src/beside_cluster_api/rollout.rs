//! When a Deployment's rollout is complete with no old Pod left: what `kubectl rollout status`
//! waits for, and that no Pod runs the old command line or is still shutting down (a manager
//! that is terminating may still write until it exits).

use serde_json::Value;

/// What a rollout still waits for; `None` when it is complete.
pub fn rollout_waiting(deployment: &Value, pods: &[Value]) -> Option<String> {
    let number = |pointer: &str| deployment.pointer(pointer).and_then(Value::as_i64);
    let generation = number("/metadata/generation").unwrap_or(0);
    let observed = number("/status/observedGeneration").unwrap_or(0);
    if observed < generation {
        return Some(format!(
            "the Deployment controller has not seen generation {generation} yet (observed {observed})"
        ));
    }
    let wanted = number("/spec/replicas").unwrap_or(1);
    let updated = number("/status/updatedReplicas").unwrap_or(0);
    let total = number("/status/replicas").unwrap_or(0);
    let available = number("/status/availableReplicas").unwrap_or(0);
    if updated < wanted {
        return Some(format!("{updated} of {wanted} updated replicas"));
    }
    if total > updated {
        return Some(format!("{} old replicas pending termination", total - updated));
    }
    if available < wanted {
        return Some(format!("{available} of {wanted} updated replicas available"));
    }
    if let Some(terminating) = number("/status/terminatingReplicas").filter(|n| *n > 0) {
        return Some(format!("{terminating} replicas terminating"));
    }
    let template = &deployment["spec"]["template"]["spec"]["containers"];
    for pod in pods {
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        if pod["metadata"]["deletionTimestamp"].is_string() {
            return Some(format!("Pod {name} is terminating"));
        }
        if !same_command_lines(template, &pod["spec"]["containers"]) {
            return Some(format!("Pod {name} runs the old command line"));
        }
    }
    None
}

/// Whether each container of `template` has the same command and args in `running`.
fn same_command_lines(template: &Value, running: &Value) -> bool {
    template.as_array().into_iter().flatten().all(|wanted| {
        running
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["name"] == wanted["name"])
            .is_some_and(|c| c["args"] == wanted["args"] && c["command"] == wanted["command"])
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn deployment(status: Value) -> Value {
        json!({"metadata": {"generation": 3}, "spec": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "manager", "args": ["--feature-gates=ClusterTopology=false"]}]}}}, "status": status})
    }

    fn pod(args: &[&str], terminating: bool) -> Value {
        let mut pod = json!({"metadata": {"name": "capi-controller-manager-x"},
                             "spec": {"containers": [{"name": "manager", "args": args}]}});
        if terminating {
            pod["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        pod
    }

    const DONE: &str =
        r#"{"observedGeneration": 3, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1}"#;

    #[test]
    fn a_complete_rollout_with_only_new_pods_is_done() {
        let done: Value = serde_json::from_str(DONE).unwrap();
        assert_eq!(
            rollout_waiting(
                &deployment(done),
                &[pod(&["--feature-gates=ClusterTopology=false"], false)]
            ),
            None
        );
    }

    #[test]
    fn each_unfinished_state_says_what_it_waits_for() {
        let waiting =
            |status: Value, pods: &[Value]| rollout_waiting(&deployment(status), pods).unwrap_or_default();
        assert!(waiting(json!({"observedGeneration": 2}), &[]).contains("generation 3"));
        assert!(waiting(
            json!({"observedGeneration": 3, "replicas": 2, "updatedReplicas": 0}),
            &[]
        )
        .contains("0 of 1 updated"));
        assert!(waiting(
            json!({"observedGeneration": 3, "replicas": 2, "updatedReplicas": 1}),
            &[]
        )
        .contains("1 old replicas"));
        assert!(waiting(
            json!({"observedGeneration": 3, "replicas": 1, "updatedReplicas": 1}),
            &[]
        )
        .contains("0 of 1 updated replicas available"));
        let mut terminating: Value = serde_json::from_str(DONE).unwrap();
        terminating["terminatingReplicas"] = json!(1);
        assert!(waiting(terminating, &[]).contains("1 replicas terminating"));
        let done: Value = serde_json::from_str(DONE).unwrap();
        let new = ["--feature-gates=ClusterTopology=false"];
        assert!(waiting(done.clone(), &[pod(&new, true)]).contains("is terminating"));
        assert!(
            waiting(done, &[pod(&["--feature-gates=ClusterTopology=true"], false)])
                .contains("old command line")
        );
    }
}
