//! The fields of a provider object the Cluster takes, read by the contract its CRD implements:
//! v1beta2 (`status.initialization.*`, a failure domain list) or the deprecated v1beta1 one
//! (`status.ready`, `status.initialized`, a failure domain map).

use serde_json::{json, Value};

use super::versions::CONTRACT;

/// Whether an InfraCluster reports itself provisioned under its contract.
pub fn provisioned(object: &Value, contract: &str) -> bool {
    let pointer = if contract == CONTRACT {
        "/status/initialization/provisioned"
    } else {
        "/status/ready"
    };
    object.pointer(pointer).and_then(Value::as_bool).unwrap_or(false)
}

/// Whether a control plane reports itself initialized under its contract.
pub fn control_plane_initialized(object: &Value, contract: &str) -> bool {
    let pointer = if contract == CONTRACT {
        "/status/initialization/controlPlaneInitialized"
    } else {
        "/status/initialized"
    };
    object.pointer(pointer).and_then(Value::as_bool).unwrap_or(false)
}

/// An InfraCluster's failure domains as the Cluster's list (`{name, controlPlane, attributes}`),
/// from the list of the v1beta2 contract or the map of the v1beta1 one (sorted by name); `None`
/// when it reports none.
pub fn failure_domains(object: &Value, contract: &str) -> Option<Value> {
    let domains = object.pointer("/status/failureDomains")?;
    let list: Vec<Value> = if contract == CONTRACT {
        domains.as_array()?.clone()
    } else {
        let mut names: Vec<(&String, &Value)> = domains.as_object()?.iter().collect();
        names.sort_by(|a, b| a.0.cmp(b.0));
        names
            .into_iter()
            .map(|(name, domain)| {
                let mut entry = json!({"name": name, "controlPlane": domain.get("controlPlane").cloned().unwrap_or(json!(false))});
                if let Some(attributes) = domain.get("attributes").filter(|a| a.as_object().is_some_and(|m| !m.is_empty())) {
                    entry["attributes"] = attributes.clone();
                }
                entry
            })
            .collect()
    };
    (!list.is_empty()).then_some(Value::Array(list))
}

/// The kind a Cluster's `spec.<key>` names ("" when unset).
pub fn reference_kind<'a>(cluster: &'a Value, key: &str) -> &'a str {
    cluster
        .pointer(&format!("/spec/{key}/kind"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A control plane endpoint with a host and a non-zero port.
pub fn endpoint_is_valid(endpoint: &Value) -> bool {
    endpoint
        .get("host")
        .and_then(Value::as_str)
        .is_some_and(|h| !h.is_empty())
        && endpoint
            .get("port")
            .and_then(Value::as_i64)
            .is_some_and(|p| p != 0)
}
