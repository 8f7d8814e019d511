//! What `admit` says on stderr beside the review it answers: the answer as kubectl prints it
//! (`Warning: ...`, `Error from server (Reason): admission webhook "..." denied the request: ...`),
//! and a warning when the verdict depends on state the `--objects` do not hold (a ClusterClass
//! missing or not reconciled, the control plane a version change is checked against), so the API
//! server could answer otherwise.

use kube::api::DynamicObject;
use kube::core::admission::AdmissionReview;
use serde_json::Value;

use crate::admission::Webhook;
use crate::api::labels::VARIABLES_READY_CONDITION;
use crate::store::{group_of, ObjectSource};

/// The lines kubectl would print for `answer` to a request sent to `webhook`.
pub fn kubectl_lines(webhook: Webhook, answer: &AdmissionReview<DynamicObject>) -> Vec<String> {
    let Some(response) = &answer.response else {
        return Vec::new();
    };
    let mut lines: Vec<String> = response
        .warnings
        .iter()
        .flatten()
        .map(|warning| format!("Warning: {warning}"))
        .collect();
    if !response.allowed {
        let reason = match response.result.reason.as_str() {
            "" => "Forbidden",
            reason => reason,
        };
        lines.push(format!(
            "Error from server ({reason}): admission webhook {:?} denied the request: {}",
            webhook.configuration_name(),
            response.result.message
        ));
    }
    lines
}

/// Warnings for a review (`body`, as sent) whose verdict depends on objects `source` does not hold
/// or holds unreconciled; `as_applied` when the objects went through the webhooks first.
pub fn state_warnings(body: &[u8], source: &dyn ObjectSource, as_applied: bool) -> Vec<String> {
    let Ok(review) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    let request = &review["request"];
    let object = &request["object"];
    let mut warnings = Vec::new();
    if request["kind"]["kind"] != "Cluster" || object["spec"]["topology"].is_null() {
        return warnings;
    }
    let namespace = match object["metadata"]["namespace"]
        .as_str()
        .or(request["namespace"].as_str())
    {
        Some(ns) if !ns.is_empty() => ns.to_owned(),
        _ => "default".to_owned(),
    };
    let topology = &object["spec"]["topology"];
    let (class, class_namespace) = match topology.get("classRef") {
        Some(class_ref) => (&class_ref["name"], &class_ref["namespace"]),
        None => (&topology["class"], &topology["classNamespace"]),
    };
    let class = class.as_str().unwrap_or_default();
    let class_namespace = class_namespace
        .as_str()
        .filter(|ns| !ns.is_empty())
        .unwrap_or(&namespace);
    match source.get("cluster.x-k8s.io", "ClusterClass", class_namespace, class) {
        None => warnings.push(format!(
            "ClusterClass {class_namespace}/{class} is not in --objects: the API server would check this \
             Cluster against it (on create it admits a Cluster whose class is missing with a warning, \
             on update it refuses it); give the class with --objects"
        )),
        Some(stored) if !reconciled(&stored) => {
            warnings.push(format!(
            "ClusterClass {class_namespace}/{class} in --objects has no reconciled status, so the Cluster's \
             variables were {}; the API server checks them once the ClusterClass controller has written \
             the class's status: give --as-applied, or the class as stored (kubectl get clusterclass {class} \
             -n {class_namespace} -o yaml)",
            if as_applied { "not checked" } else { "admitted unchecked" }
        ))
        }
        Some(_) => {}
    }
    warnings.extend(version_warning(request, &namespace, source));
    warnings
}

/// Whether a stored class counts as reconciled: its status observed its generation and says its
/// variables are ready.
fn reconciled(class: &Value) -> bool {
    let status = &class["status"];
    let observed = status["observedGeneration"].as_i64();
    let generation = class["metadata"]["generation"].as_i64();
    let ready = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == VARIABLES_READY_CONDITION && c["status"] == "True");
    observed.is_some() && observed == generation && ready
}

/// For an update changing `spec.topology.version`: a warning when the control plane the change is
/// checked against is not in the objects.
fn version_warning(request: &Value, namespace: &str, source: &dyn ObjectSource) -> Option<String> {
    let (object, old) = (&request["object"], &request["oldObject"]);
    let version = |o: &Value| o["spec"]["topology"]["version"].clone();
    if request["operation"] != "UPDATE" || version(object) == version(old) {
        return None;
    }
    let reference = &old["spec"]["controlPlaneRef"];
    let kind = reference["kind"].as_str().unwrap_or_default();
    let name = reference["name"].as_str().unwrap_or_default();
    // v1beta2 references name a group, v1beta1 ones an apiVersion.
    let group = reference["apiGroup"]
        .as_str()
        .unwrap_or_else(|| group_of(reference["apiVersion"].as_str().unwrap_or_default()));
    if !name.is_empty() && source.get(group, kind, namespace, name).is_some() {
        return None;
    }
    let missing = if name.is_empty() {
        "the oldObject has no spec.controlPlaneRef".to_owned()
    } else {
        format!("{kind} {namespace}/{name} (spec.controlPlaneRef) is not in --objects")
    };
    Some(format!(
        "the version change is checked against the Cluster's control plane as it runs, and {missing}: \
         the API server's answer depends on its spec.version and status"
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::MemoryStore;

    fn review(operation: &str, class: Value, old: Value) -> Vec<u8> {
        let object = json!({"kind": "Cluster", "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"topology": {"classRef": class, "version": "v1.31.0"}}});
        serde_json::to_vec(
            &json!({"request": {"kind": {"kind": "Cluster"}, "operation": operation,
            "object": object, "oldObject": old}}),
        )
        .unwrap_or_default()
    }

    #[test]
    fn a_verdict_that_depends_on_missing_state_is_said_so() {
        let store = MemoryStore::default();
        let body = review("CREATE", json!({"name": "k"}), Value::Null);
        let warnings = state_warnings(&body, &store, false);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("ClusterClass ns/k is not in --objects"),
            "{warnings:?}"
        );
        let old = json!({"spec": {"topology": {"version": "v1.30.0"}}});
        let body = review("UPDATE", json!({"name": "k"}), old);
        let warnings = state_warnings(&body, &store, false);
        assert!(warnings[1].contains("no spec.controlPlaneRef"), "{warnings:?}");
    }

    #[test]
    fn an_unreconciled_class_is_said_so() {
        let store = MemoryStore::from_yaml(
            "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata: {name: k, namespace: ns}\nspec: {}\n",
        )
        .unwrap_or_default();
        let body = review("CREATE", json!({"name": "k"}), Value::Null);
        let warnings = state_warnings(&body, &store, false);
        assert!(warnings[0].contains("has no reconciled status"), "{warnings:?}");
    }
}
