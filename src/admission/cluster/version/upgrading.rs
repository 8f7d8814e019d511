//! Whether a managed Cluster's objects are still upgrading, which holds a change of its version:
//! the control plane (its version, or its Machines'), and MachineDeployments or MachinePools at
//! another version than the topology's (a MachineDeployment's Machines too).

use semver::Version;
use serde_json::Value;

use super::{compare, parse_tolerant, Order, CAPI_GROUP};
use crate::api::labels::{CLUSTER_NAME_LABEL, TOPOLOGY_OWNED_LABEL};
use crate::api::Cluster;
use crate::store::ObjectSource;

/// Why the control plane is still upgrading from `old_version` (or cannot be checked), if it is.
pub(super) fn control_plane_problem(
    cluster: &Cluster,
    old_version: &Version,
    source: &dyn ObjectSource,
) -> Option<String> {
    let prefix = "failed to check if control plane is upgrading";
    let reference = &cluster.spec.control_plane_ref;
    if reference.is_unset() {
        return Some(format!(
            "{prefix}: failed to get control plane object: cannot get object - object reference not set"
        ));
    }
    let group = reference.api_group.as_str();
    let kind = reference.kind.as_str();
    let namespace = cluster.metadata.namespace.as_deref().unwrap_or_default();
    let name = reference.name.as_str();
    let Some(control_plane) = source.get(group, kind, namespace, name) else {
        let object = if namespace.is_empty() {
            name.to_owned()
        } else {
            format!("{namespace}/{name}")
        };
        let resource = match group {
            "" => plural(kind),
            group => format!("{}.{group}", plural(kind)),
        };
        return Some(format!(
            "{prefix}: failed to get control plane object: failed to retrieve {kind} {object}: {resource} {name:?} not found"
        ));
    };
    let Some(spec_version) = control_plane.pointer("/spec/version").and_then(Value::as_str) else {
        return Some(format!(
            "{prefix}: failed to get control plane version: path .spec.version: field not found"
        ));
    };
    let Some(version) = parse_tolerant(spec_version) else {
        return Some(format!(
            "{prefix}: failed to parse control plane version {spec_version}"
        ));
    };
    if version.to_string() != old_version.to_string() {
        return Some(format!(
            "Cluster.spec.topology.version {old_version} was not propagated to control plane yet (control plane version {version})"
        ));
    }
    let status_version = control_plane
        .pointer("/status/version")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if status_version.is_empty() {
        return Some("control plane is currently provisioning".to_owned());
    }
    let Some(status_version) = parse_tolerant(status_version) else {
        return Some(format!("{prefix}: failed to parse control plane status version"));
    };
    matches!(
        compare(&version, &status_version),
        Order::Greater | Order::Different
    )
    .then(|| "control plane is still completing a previous upgrade".to_owned())
}

/// The lowercase plural resource name of a kind, as CRDs are usually named.
fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if let Some(stem) = lower
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o', 'u']))
    {
        format!("{stem}ies")
    } else if lower.ends_with(['s', 'x']) || lower.ends_with("ch") || lower.ends_with("sh") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

/// MachineDeployments (or MachinePools) of the topology whose version differs from the old one,
/// or (MachineDeployments) whose Machines are still at another version.
pub(super) fn workers_problem(
    cluster: &Cluster,
    old_version: &Version,
    source: &dyn ObjectSource,
    kind: &str,
) -> Option<String> {
    let namespace = cluster.metadata.namespace.as_deref().unwrap_or_default();
    let cluster_name = cluster.metadata.name.as_deref().unwrap_or_default();
    let mut upgrading = Vec::new();
    for object in source.list_of_cluster(CAPI_GROUP, kind, namespace, cluster_name) {
        let label = |key: &str| {
            object
                .pointer("/metadata/labels")
                .and_then(|l| l.get(key))
                .and_then(Value::as_str)
        };
        if label(TOPOLOGY_OWNED_LABEL) != Some("") || label(CLUSTER_NAME_LABEL) != Some(cluster_name) {
            continue;
        }
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(version) = object
            .pointer("/spec/template/spec/version")
            .and_then(Value::as_str)
        else {
            upgrading.push(name);
            continue;
        };
        let Some(parsed) = parse_tolerant(version) else {
            return Some(format!(
                "failed to check if {kind} {name} is upgrading: failed to parse version {version}"
            ));
        };
        if parsed.to_string() != old_version.to_string() {
            upgrading.push(name);
            continue;
        }
        if kind == "MachineDeployment" {
            match machines_upgrading(&object, &name, version, source) {
                Ok(true) => upgrading.push(name),
                Ok(false) => {}
                Err(problem) => return Some(problem),
            }
        }
    }
    (!upgrading.is_empty()).then(|| {
        format!(
            "there are still {kind}s completing a previous upgrade: [{}]",
            upgrading.join(", ")
        )
    })
}

/// Whether a Machine selected by the MachineDeployment (Machines in name order) runs another
/// version; an error when one has no version.
fn machines_upgrading(
    deployment: &Value,
    name: &str,
    version: &str,
    source: &dyn ObjectSource,
) -> Result<bool, String> {
    let namespace = deployment
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let empty = serde_json::Map::new();
    let selector = deployment
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    // A selector naming the Cluster reads only that Cluster's Machines (indexed by the store).
    let machines = match selector.get(CLUSTER_NAME_LABEL).and_then(Value::as_str) {
        Some(cluster) => source.list_of_cluster(CAPI_GROUP, "Machine", namespace, cluster),
        None => source.list(CAPI_GROUP, "Machine", namespace),
    };
    for machine in machines {
        let labels = machine.pointer("/metadata/labels");
        if !selector
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        {
            continue;
        }
        let Some(machine_version) = machine.pointer("/spec/version").and_then(Value::as_str) else {
            let machine_name = machine
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Err(format!(
                "failed to check if MachineDeployment {name} is upgrading: Machine {machine_name} has no version"
            ));
        };
        // v1.14 also counts a Machine whose kubelet reports another version (an in-place upgrade).
        let kubelet = machine
            .pointer("/status/nodeInfo/kubeletVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if machine_version != version || (!kubelet.is_empty() && kubelet != version) {
            return Ok(true);
        }
    }
    Ok(false)
}
