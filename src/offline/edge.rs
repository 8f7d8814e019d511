//! The version edge of the offline API server. As an API server with our CRDs, it accepts every
//! served version of our kinds (v1beta1 or v1beta2; ExtensionConfig v1alpha1 or v1beta2), converts
//! an object to the stored version (the hub) before the webhooks see it, and refuses a version
//! no CRD serves (`cluster.x-k8s.io/v1alpha3`) before anything is applied.

use serde_json::Value;

use crate::api::convert::{is_convertible, to_hub, ConvertError};
use crate::store::group_of;

/// An object of one of our groups in a version no CRD serves: kubectl's mapping error, naming
/// the file and the versions served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "resource mapping not found for name: {name:?} namespace: {namespace:?} from {file:?}: no \
     matches for kind {kind:?} in version {api_version:?} ({group} serves {served})"
)]
pub struct UnknownVersion {
    /// The object's name.
    pub name: String,
    /// The object's namespace, as written.
    pub namespace: String,
    /// The file it came from.
    pub file: String,
    /// Its kind.
    pub kind: String,
    /// Its apiVersion.
    pub api_version: String,
    /// Its group.
    pub group: String,
    /// The versions the group serves.
    pub served: String,
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether `object` (from `source`) is in a served version, or of a group that is not ours; an
/// error for an unknown version of our groups.
pub fn check_served(object: &Value, source: &str) -> Result<(), Box<UnknownVersion>> {
    let api_version = text(object, "/apiVersion");
    let kind = text(object, "/kind");
    match is_convertible(api_version, kind) {
        Ok(_) => Ok(()),
        Err(err) => Err(Box::new(UnknownVersion {
            name: text(object, "/metadata/name").to_owned(),
            namespace: text(object, "/metadata/namespace").to_owned(),
            file: source.to_owned(),
            kind: kind.to_owned(),
            api_version: api_version.to_owned(),
            group: group_of(api_version).to_owned(),
            served: match err {
                ConvertError::UnknownVersion { served, .. } => served,
                other => other.to_string(),
            },
        })),
    }
}

/// `object` in the hub version when it is one of our kinds in a spoke version and converts;
/// otherwise as given (reading only: [`to_stored`] says why a conversion fails).
pub fn hub_view(object: &Value) -> Value {
    to_hub(object.clone()).unwrap_or_else(|_| object.clone())
}

/// `object` converted to the stored version, as the API server does before admission; for an
/// object the conversion webhook cannot convert, the message kubectl prints (`verb` is
/// `creating` or `patching`).
pub fn to_stored(object: Value, source: &str, verb: &str) -> Result<Value, String> {
    let api_version = text(&object, "/apiVersion").to_owned();
    let kind = text(&object, "/kind").to_owned();
    to_hub(object).map_err(|err| {
        format!(
            "Error from server (InternalError): error when {verb} {source:?}: Internal error \
             occurred: conversion webhook for {api_version}, Kind={kind} failed: {err}"
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_unknown_version_of_our_groups_is_refused_with_kubectls_words() {
        let object = json!({"apiVersion": "cluster.x-k8s.io/v1alpha3", "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": "ns"}});
        let err = check_served(&object, "c.yaml").unwrap_err();
        assert_eq!(
            err.to_string(),
            "resource mapping not found for name: \"c1\" namespace: \"ns\" from \"c.yaml\": no \
             matches for kind \"Cluster\" in version \"cluster.x-k8s.io/v1alpha3\" \
             (cluster.x-k8s.io serves v1beta1, v1beta2)"
        );
        let other = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha9", "kind": "X"});
        assert_eq!(check_served(&other, "x.yaml"), Ok(()));
        let md = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment"});
        assert_eq!(check_served(&md, "x.yaml"), Ok(()));
    }

    #[test]
    fn a_spoke_object_is_stored_as_the_hub() {
        let object = json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta1",
            "kind": "ClusterResourceSet", "metadata": {"name": "s", "namespace": "ns"},
            "spec": {"clusterSelector": {}}});
        let stored = to_stored(object, "s.yaml", "creating").unwrap_or_default();
        assert_eq!(stored["apiVersion"], "addons.cluster.x-k8s.io/v1beta2");
        let bad = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"topology": {"class": "k", "version": "v1.30.0",
                "controlPlane": {"nodeDrainTimeout": "forever"}}}});
        let message = to_stored(bad, "c.yaml", "creating").unwrap_err();
        assert!(
            message.starts_with(
                "Error from server (InternalError): error when creating \"c.yaml\": Internal error \
                 occurred: conversion webhook for cluster.x-k8s.io/v1beta1, Kind=Cluster failed: "
            ),
            "{message}"
        );
    }
}
