//! A Cluster's referenced provider objects (InfraCluster, control plane): owning them, reading
//! their failures and their Ready condition, as Cluster API v1.14 does for providers of the
//! v1beta2 contract and of the deprecated v1beta1 one.

use serde_json::{json, Value};

use super::versions::CONTRACT;
use crate::api::conditions::{find, meta_condition, V1BETA1_CONDITIONS};
use crate::api::labels::CLUSTER_NAME_LABEL;

/// The owner references' apiVersion.
const CLUSTER_API_VERSION: &str = "cluster.x-k8s.io/v1beta2";

/// What a reference resolved to.
#[derive(Debug, Clone, Copy)]
pub enum Referenced<'a> {
    /// The object.
    Found(&'a Value),
    /// It is not there; why, in the words the Cluster's condition should say it.
    Missing(&'a str),
}

/// Whether the Cluster still has to become the object's controller owner.
#[derive(Debug, Clone, PartialEq)]
pub enum Adoption {
    /// The object is owned and labelled.
    Done,
    /// A server-side apply body that sets the owner reference and the cluster-name label.
    Needed(Value),
    /// Another controller owns the object; why it is not taken over.
    Refused(String),
}

/// Whether `object` is owned by `cluster` and labelled with its name, and if not, how to get
/// there. As Cluster API: the Cluster becomes the controller owner of the objects of a managed
/// topology (another controller's ownership is never taken over), a plain owner otherwise.
pub fn adoption(cluster: &Value, object: &Value) -> Adoption {
    let text = |value: &Value, pointer: &str| {
        value
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (name, uid) = (text(cluster, "/metadata/name"), text(cluster, "/metadata/uid"));
    let owners = object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array);
    let owners = owners.map(Vec::as_slice).unwrap_or_default();
    let as_controller = cluster
        .pointer("/spec/topology/classRef/name")
        .and_then(Value::as_str)
        .is_some_and(|name| !name.is_empty());
    let controller = owners.iter().find(|o| o["controller"] == true);
    let other = controller.filter(|o| o["uid"] != uid.as_str());
    if let Some(other) = other.filter(|_| as_controller) {
        return Adoption::Refused(format!(
            "{} {} is controlled by {} {}; a Cluster only uses objects it owns",
            text(object, "/kind"),
            text(object, "/metadata/name"),
            other["kind"].as_str().unwrap_or_default(),
            other["name"].as_str().unwrap_or_default(),
        ));
    }
    let labelled = object
        .pointer("/metadata/labels")
        .and_then(|labels| labels.get(CLUSTER_NAME_LABEL))
        .and_then(Value::as_str)
        == Some(name.as_str());
    let owned = owners.iter().any(|o| {
        o["uid"] == uid.as_str() && o["kind"] == "Cluster" && (o["controller"] == true) == as_controller
    });
    if owned && labelled {
        return Adoption::Done;
    }
    Adoption::Needed(json!({
        "apiVersion": object["apiVersion"],
        "kind": object["kind"],
        "metadata": {
            "name": object["metadata"]["name"],
            "namespace": object["metadata"]["namespace"],
            "labels": { CLUSTER_NAME_LABEL: name },
            "ownerReferences": [{
                "apiVersion": CLUSTER_API_VERSION,
                "kind": "Cluster",
                "name": name,
                "uid": uid,
                "controller": as_controller,
                "blockOwnerDeletion": true,
            }],
        },
    }))
}

/// The object's `status.failureReason`, and its `status.failureMessage` worded for the Cluster
/// (naming the object, as Cluster API does).
pub fn external_failures(object: &Value) -> (Option<String>, Option<String>) {
    let status = |key: &str| {
        object
            .pointer(&format!("/status/{key}"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let reason = status("failureReason").map(str::to_owned);
    let message = status("failureMessage").map(|message| {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        format!(
            "Failure detected from referenced resource {group}/{version}, Kind={} with name {:?}: {message}",
            object["kind"].as_str().unwrap_or_default(),
            object["metadata"]["name"].as_str().unwrap_or_default(),
        )
    });
    (reason, message)
}

/// The object's own v1beta1 `Ready` condition copied under `condition_type`, when it has one:
/// from `status.deprecated.v1beta1.conditions` of a provider of the v1beta2 `contract`, from
/// `status.conditions` of one of the v1beta1 contract.
pub fn mirrored_condition(object: &Value, contract: &str, condition_type: &str, now: &str) -> Option<Value> {
    let pointer = if contract == CONTRACT {
        format!("/status{V1BETA1_CONDITIONS}")
    } else {
        "/status/conditions".to_owned()
    };
    let ready = find(object.pointer(&pointer), "Ready")?;
    let mut mirrored = json!({"type": condition_type, "status": ready["status"],
        "lastTransitionTime": ready.get("lastTransitionTime").cloned().unwrap_or_else(|| json!(now))});
    for key in ["reason", "severity", "message"] {
        if let Some(value) = ready.get(key).filter(|v| !v.is_null() && v != &"") {
            mirrored[key] = value.clone();
        }
    }
    Some(mirrored)
}

/// The object's `Ready` condition in `status.conditions` as a metav1 Condition of
/// `condition_type` (its transition time kept), when it has one; a True one that gives no reason
/// says `Ready`, a False one `NoReasonReported`.
pub fn mirrored_meta_condition(object: &Value, condition_type: &str) -> Option<Value> {
    let ready = find(object.pointer("/status/conditions"), "Ready")?;
    let status = ready["status"]
        .as_str()
        .filter(|status| matches!(*status, "True" | "False"))
        .unwrap_or("Unknown");
    let text = |key: &str| ready.get(key).and_then(Value::as_str).unwrap_or_default();
    let reason = match (text("reason"), status) {
        ("", "True") => "Ready",
        ("", _) => "NoReasonReported",
        (reason, _) => reason,
    };
    let mut mirrored = meta_condition(condition_type, status, reason, text("message"));
    if let Some(time) = ready.get("lastTransitionTime").filter(|t| !t.is_null()) {
        mirrored["lastTransitionTime"] = time.clone();
    }
    Some(mirrored)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> Value {
        json!({"metadata": {"name": "dev", "namespace": "ns", "uid": "u1"},
            "spec": {"topology": {"classRef": {"name": "quick-start"}}}})
    }

    fn infra(owners: Value, labels: Value) -> Value {
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster",
            "metadata": {"name": "dev-x", "namespace": "ns", "ownerReferences": owners, "labels": labels}})
    }

    #[test]
    fn an_unowned_object_is_adopted_with_the_label() {
        let Adoption::Needed(body) = adoption(&cluster(), &infra(json!([]), json!({}))) else {
            panic!("adoption expected");
        };
        assert_eq!(body["metadata"]["labels"][CLUSTER_NAME_LABEL], "dev");
        assert_eq!(body["metadata"]["ownerReferences"][0]["controller"], true);
        assert_eq!(body["metadata"]["ownerReferences"][0]["uid"], "u1");
        assert_eq!(
            body["metadata"]["ownerReferences"][0]["apiVersion"],
            "cluster.x-k8s.io/v1beta2"
        );
    }

    #[test]
    fn without_a_topology_the_cluster_is_a_plain_owner_beside_another_controller() {
        let mut plain = cluster();
        plain["spec"] = json!({});
        let other = json!([{"kind": "Cluster", "name": "prod", "uid": "u2", "controller": true}]);
        let Adoption::Needed(body) = adoption(&plain, &infra(other, json!({}))) else {
            panic!("adoption expected");
        };
        assert_eq!(body["metadata"]["ownerReferences"][0]["controller"], false);
        let owned = json!([{"kind": "Cluster", "name": "dev", "uid": "u1", "controller": false}]);
        assert_eq!(
            adoption(&plain, &infra(owned, json!({CLUSTER_NAME_LABEL: "dev"}))),
            Adoption::Done
        );
    }

    #[test]
    fn a_ready_condition_is_mirrored_in_both_shapes() {
        let mut object = infra(json!([]), json!({}));
        object["status"] = json!({"conditions": [{"type": "Ready", "status": "False", "reason": "Waiting",
                "message": "lb", "lastTransitionTime": "T"}],
            "deprecated": {"v1beta1": {"conditions": [{"type": "Ready", "status": "False",
                "severity": "Info", "reason": "WaitingV1"}]}}});
        let meta = mirrored_meta_condition(&object, "InfrastructureReady").unwrap();
        assert_eq!(
            meta,
            json!({"type": "InfrastructureReady", "status": "False", "reason": "Waiting",
                "message": "lb", "lastTransitionTime": "T"})
        );
        let old = mirrored_condition(&object, "v1beta2", "InfrastructureReady", "now").unwrap();
        assert_eq!(old["reason"], "WaitingV1");
        let old = mirrored_condition(&object, "v1beta1", "InfrastructureReady", "now").unwrap();
        assert_eq!(old["reason"], "Waiting");
    }

    #[test]
    fn an_owned_labelled_object_needs_nothing_and_another_controller_is_respected() {
        let owned = json!([{"kind": "Cluster", "name": "dev", "uid": "u1", "controller": true}]);
        assert_eq!(
            adoption(&cluster(), &infra(owned, json!({CLUSTER_NAME_LABEL: "dev"}))),
            Adoption::Done
        );
        let other = json!([{"kind": "Cluster", "name": "prod", "uid": "u2", "controller": true}]);
        let Adoption::Refused(why) = adoption(&cluster(), &infra(other, json!({}))) else {
            panic!("refusal expected");
        };
        assert_eq!(
            why,
            "DockerCluster dev-x is controlled by Cluster prod; a Cluster only uses objects it owns"
        );
    }

    #[test]
    fn failures_name_the_object() {
        let mut object = infra(json!([]), json!({}));
        object["status"] = json!({"failureReason": "InvalidConfiguration", "failureMessage": "no VPC"});
        let (reason, message) = external_failures(&object);
        assert_eq!(reason.as_deref(), Some("InvalidConfiguration"));
        assert_eq!(
            message.as_deref(),
            Some(
                "Failure detected from referenced resource infrastructure.cluster.x-k8s.io/v1beta1, \
                 Kind=DockerCluster with name \"dev-x\": no VPC"
            )
        );
    }
}
