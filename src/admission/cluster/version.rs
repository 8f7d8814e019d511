//! Kubernetes version changes of a managed Cluster: no downgrade, at most one minor ahead, and
//! not while the control plane, MachineDeployments or MachinePools are still upgrading.

use std::cmp::Ordering;
use std::sync::OnceLock;

use regex::Regex;
use semver::Version;
use serde_json::Value;

use crate::api::labels::{CLUSTER_NAME_LABEL, TOPOLOGY_OWNED_LABEL};
use crate::api::Cluster;
use crate::field::{FieldError, FieldPath};
use crate::store::{group_of, ObjectSource};

/// The API group of MachineDeployments, Machines and MachinePools.
const CAPI_GROUP: &str = "cluster.x-k8s.io";

/// Whether `version` is a Kubernetes semantic version (`v1.31.2`, `1.30.0+rke2r1`).
pub fn is_kube_semver(version: &str) -> bool {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN
        .get_or_init(|| {
            Regex::new(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$")
                .unwrap_or_else(|_| unreachable!("fixed pattern"))
        })
        .is_match(version)
}

/// Parses like Go's `semver.ParseTolerant`: a leading `v` and surrounding spaces are allowed.
pub fn parse_tolerant(version: &str) -> Option<Version> {
    Version::parse(version.trim().trim_start_matches('v')).ok()
}

/// The error for a change of `spec.topology.version` from `old_cluster`'s, if it is not allowed.
pub fn check_change(
    path: &FieldPath,
    new: &str,
    old_cluster: &Cluster,
    source: &dyn ObjectSource,
) -> Option<FieldError> {
    let old = old_cluster.spec.topology.as_ref()?.version.as_str();
    let (Some(new_version), Some(old_version)) = (parse_tolerant(new), parse_tolerant(old)) else {
        return None;
    };
    match compare(&new_version, &old_version) {
        Ordering::Equal => return None,
        Ordering::Less => {
            let detail = format!(
                "version cannot be decreased from {:?} to {:?}",
                old_version.to_string(),
                new_version.to_string()
            );
            return Some(FieldError::invalid(path, new, detail));
        }
        Ordering::Greater => {}
    }
    let ceiling = Version::new(old_version.major, old_version.minor + 2, 0);
    if new_version >= ceiling {
        let detail = format!(
            "version cannot be increased from {:?} to {:?}",
            old_version.to_string(),
            new_version.to_string()
        );
        return Some(FieldError::invalid(path, new, detail));
    }
    let problems: Vec<String> = [
        control_plane_problem(old_cluster, &old_version, source),
        workers_problem(old_cluster, &old_version, source, "MachineDeployment"),
        workers_problem(old_cluster, &old_version, source, "MachinePool"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let detail = match problems.as_slice() {
        [] => return None,
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    Some(FieldError::invalid(
        path,
        new,
        format!("version cannot be changed: {detail}"),
    ))
}

/// Versions compare by precedence, then by build metadata.
fn compare(a: &Version, b: &Version) -> Ordering {
    a.cmp_precedence(b).then_with(|| a.build.cmp(&b.build))
}

fn control_plane_problem(
    cluster: &Cluster,
    old_version: &Version,
    source: &dyn ObjectSource,
) -> Option<String> {
    let prefix = "failed to check if control plane is upgrading";
    let Some(reference) = &cluster.spec.control_plane_ref else {
        return Some(format!(
            "{prefix}: failed to get control plane object: Cluster has no spec.controlPlaneRef"
        ));
    };
    let group = group_of(reference.api_version.as_deref().unwrap_or_default());
    let kind = reference.kind.as_deref().unwrap_or_default();
    let namespace = reference.namespace.as_deref().unwrap_or_default();
    let name = reference.name.as_deref().unwrap_or_default();
    let Some(control_plane) = source.get(group, kind, namespace, name) else {
        return Some(format!(
            "{prefix}: failed to get control plane object: {kind} {namespace}/{name} not found"
        ));
    };
    let Some(spec_version) = control_plane.pointer("/spec/version").and_then(Value::as_str) else {
        return Some(format!("{prefix}: failed to get control plane version"));
    };
    let Some(version) = parse_tolerant(spec_version) else {
        return Some(format!(
            "{prefix}: failed to parse control plane version {spec_version}"
        ));
    };
    if compare(&version, old_version) != Ordering::Equal {
        return Some(format!(
            "Cluster.spec.topology.version {old_version} was not propagated to control plane yet (control plane version {version})"
        ));
    }
    match control_plane
        .pointer("/status/version")
        .and_then(Value::as_str)
        .and_then(parse_tolerant)
    {
        None => Some("control plane is currently provisioning".to_owned()),
        Some(status_version) if status_version < version => {
            Some("control plane is still completing a previous upgrade".to_owned())
        }
        Some(_) => None,
    }
}

/// MachineDeployments (or MachinePools) of the topology whose version differs from the old one,
/// or whose Machines are still at another version.
fn workers_problem(
    cluster: &Cluster,
    old_version: &Version,
    source: &dyn ObjectSource,
    kind: &str,
) -> Option<String> {
    let namespace = cluster.metadata.namespace.as_deref().unwrap_or_default();
    let cluster_name = cluster.metadata.name.as_deref().unwrap_or_default();
    let mut upgrading = Vec::new();
    for object in source.list(CAPI_GROUP, kind, namespace) {
        let labels = object.pointer("/metadata/labels");
        let owned = labels.and_then(|l| l.get(TOPOLOGY_OWNED_LABEL)).is_some();
        let ours = labels
            .and_then(|l| l.get(CLUSTER_NAME_LABEL))
            .and_then(Value::as_str)
            == Some(cluster_name);
        if !owned || !ours {
            continue;
        }
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let version = object
            .pointer("/spec/template/spec/version")
            .and_then(Value::as_str);
        let at_old = version
            .and_then(parse_tolerant)
            .is_some_and(|v| compare(&v, old_version) == Ordering::Equal);
        if !at_old
            || (kind == "MachineDeployment" && machines_differ(&object, version.unwrap_or_default(), source))
        {
            upgrading.push(name);
        }
    }
    (!upgrading.is_empty()).then(|| {
        format!(
            "there are still {kind}s completing a previous upgrade: [{}]",
            upgrading.join(", ")
        )
    })
}

/// True when a Machine selected by the MachineDeployment runs another version.
fn machines_differ(deployment: &Value, version: &str, source: &dyn ObjectSource) -> bool {
    let namespace = deployment
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(selector) = deployment
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
    else {
        return false;
    };
    source
        .list(CAPI_GROUP, "Machine", namespace)
        .iter()
        .any(|machine| {
            let labels = machine.pointer("/metadata/labels");
            let selected = selector
                .iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
            selected && machine.pointer("/spec/version").and_then(Value::as_str) != Some(version)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_semver_accepts_build_metadata_and_rejects_junk() {
        assert!(
            is_kube_semver("v1.31.2") && is_kube_semver("1.30.0+rke2r1") && is_kube_semver("v1.31.0-rc.1")
        );
        assert!(!is_kube_semver("1.x") && !is_kube_semver("v1.31") && !is_kube_semver("v01.2.3"));
    }

    #[test]
    fn build_metadata_orders_equal_precedence() {
        let a = parse_tolerant("v1.30.0+rke2r1").unwrap();
        let b = parse_tolerant("v1.30.0+rke2r2").unwrap();
        assert_eq!(compare(&a, &b), Ordering::Less);
        assert_eq!(
            compare(
                &parse_tolerant("1.30.0").unwrap(),
                &parse_tolerant("v1.30.0").unwrap()
            ),
            Ordering::Equal
        );
    }
}
