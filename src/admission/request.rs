//! Building an AdmissionRequest from plain objects, as the API server would send it: for the
//! offline CLI and for tests.

use kube::core::admission::{AdmissionResponse, Operation};
use serde_json::{json, Value};

use super::webhook::{Kind, Webhook};

use crate::store::ObjectSource;

/// The AdmissionReview JSON the API server would send for `operation` on `object` (`old` for
/// UPDATE and DELETE), with `kind` and `requestKind` in the version the object is written in.
pub fn review_json(kind: Kind, operation: &Operation, object: Option<&Value>, old: Option<&Value>) -> Value {
    let named = object.or(old);
    let name = named
        .and_then(|o| o.pointer("/metadata/name"))
        .cloned()
        .unwrap_or(json!(""));
    // A cluster-scoped object's request has no namespace.
    let namespace = named
        .and_then(|o| o.pointer("/metadata/namespace"))
        .cloned()
        .unwrap_or(json!(if kind.namespaced() { "default" } else { "" }));
    // The version the object is written in, when it is one the kind serves (else the hub's).
    let version = named
        .and_then(|o| o.get("apiVersion"))
        .and_then(Value::as_str)
        .and_then(|v| v.strip_prefix(kind.group())?.strip_prefix('/'))
        .filter(|v| kind.spoke_version() == Some(*v))
        .unwrap_or(kind.version());
    let gvk = json!({"group": kind.group(), "version": version, "kind": kind.name()});
    let gvr = json!({"group": kind.group(), "version": version, "resource": kind.resource()});
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": format!("{}-{}", kind.name().to_lowercase(), name.as_str().unwrap_or_default()),
            "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
            "name": name, "namespace": namespace, "operation": operation,
            "userInfo": {"username": "capi-topology"},
            "object": object, "oldObject": old, "dryRun": false,
        }
    })
}

/// Runs `webhook` on `operation` of `object` (`old` for UPDATE and DELETE), as if the API server
/// had sent the request.
pub fn admit_value(
    webhook: Webhook,
    operation: &Operation,
    object: Option<&Value>,
    old: Option<&Value>,
    source: &dyn ObjectSource,
) -> AdmissionResponse {
    let review = review_json(webhook.kind, operation, object, old);
    let body = serde_json::to_vec(&review).unwrap_or_default();
    let answer = super::review(webhook.path(), &body, source);
    answer
        .response
        .unwrap_or_else(|| AdmissionResponse::invalid("no response"))
}
