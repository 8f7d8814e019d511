//! Kubernetes version changes of a managed Cluster: no downgrade (except taking back a version
//! that reached no object yet), at most one minor ahead without a plan source, and not while the
//! control plane, MachineDeployments or MachinePools are still upgrading.

use semver::Version;
use serde_json::Value;
use std::cmp::Ordering;

use crate::api::labels::TOPOLOGY_UPGRADE_STEP_ANNOTATION;
use crate::api::Cluster;
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::store::ObjectSource;

mod upgrading;

/// The API group of MachineDeployments, Machines and MachinePools.
const CAPI_GROUP: &str = "cluster.x-k8s.io";

/// How two versions compare when build metadata counts: like precedence, then build identifiers
/// (numeric ones by value, before textual ones); two different textual identifiers are not
/// ordered, only `Different`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Less,
    Equal,
    Greater,
    Different,
}

/// The errors of a topology version as Cluster API v1.14 checks its format: it must start with
/// `v`, and the rest must be a strict semantic version (both checks may fire).
pub fn format_errors(path: &FieldPath, version: &str) -> FieldErrors {
    let mut errors = FieldErrors::new();
    if !version.starts_with('v') {
        errors.push(FieldError::invalid(path, version, "must start with v"));
    }
    if Version::parse(version.strip_prefix('v').unwrap_or(version)).is_err() {
        errors.push(FieldError::invalid(
            path,
            version,
            "version must be a valid semantic version",
        ));
    }
    errors
}

/// Parses like Go's `semver.ParseTolerant`: surrounding spaces and one leading `v` are dropped,
/// leading zeros removed, and a missing patch (or minor) number is taken as 0.
pub fn parse_tolerant(version: &str) -> Option<Version> {
    let trimmed = version.trim();
    let trimmed = trimmed.strip_prefix('v').unwrap_or(trimmed);
    let mut parts: Vec<String> = trimmed
        .splitn(3, '.')
        .map(|part| {
            if part.len() < 2 {
                return part.to_owned();
            }
            let stripped = part.trim_start_matches('0');
            if stripped.starts_with(|c: char| c.is_ascii_digit()) {
                stripped.to_owned()
            } else {
                format!("0{stripped}")
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return None;
        }
        parts.resize(3, "0".to_owned());
    }
    Version::parse(&parts.join(".")).ok()
}

/// The versions of an update (zero when they do not parse), with an error for each that does not.
pub fn parse_update(path: &FieldPath, new: &str, old: &str) -> (Version, Version, FieldErrors) {
    let mut errors = FieldErrors::new();
    let mut parse = |text: &str, detail: &str| {
        parse_tolerant(text).unwrap_or_else(|| {
            errors.push(FieldError::invalid(path, text, detail));
            Version::new(0, 0, 0)
        })
    };
    let new_version = parse(new, "version must be a valid semantic version");
    let old_version = parse(old, "old version must be a valid semantic version");
    (new_version, old_version, errors)
}

/// The annotation listing the lifecycle hooks still blocking a Cluster (comma-separated).
const PENDING_HOOKS_ANNOTATION: &str = "runtime.cluster.x-k8s.io/pending-hooks";

/// What a version change is checked against besides the two versions.
pub struct Change<'a> {
    /// The Cluster as it will be (its pending hooks).
    pub cluster: &'a Cluster,
    /// The Cluster as it is (its control plane and workers).
    pub old_cluster: &'a Cluster,
    /// Whether the +1 minor ceiling applies: the class lists no `kubernetesVersions` and names
    /// no GenerateUpgradePlan extension.
    pub ceiling: bool,
}

/// The error for a change of `spec.topology.version` from `old_version` to `new_version`
/// (written `new`), if it is not allowed (Cluster API v1.14's order: no-op, decrease ignoring
/// pre-releases, ceiling, pending AfterClusterUpgrade hook, objects still upgrading).
pub fn check_change(
    path: &FieldPath,
    new: &str,
    new_version: &Version,
    old_version: &Version,
    change: &Change<'_>,
    source: &dyn ObjectSource,
) -> Option<FieldError> {
    if new_version.to_string() == old_version.to_string() {
        return None;
    }
    let zero = Version::new(0, 0, 0);
    let core = |v: &Version| (v.major, v.minor, v.patch);
    if *new_version != zero && *old_version != zero && core(new_version) < core(old_version) {
        let detail = format!("version cannot be decreased from \"{old_version}\" to \"{new_version}\"");
        // Beyond Cluster API: a version that reached nothing may be taken back.
        return match carrier_above(change.old_cluster, new_version, source) {
            Reached::Nothing if !hook_pending(change.cluster, "AfterClusterUpgrade") => None,
            Reached::Nothing | Reached::Unknown => Some(FieldError::invalid(path, new, detail)),
            Reached::Object(carrier) => Some(FieldError::invalid(
                path,
                new,
                format!("{detail}: {carrier} already has a version above it"),
            )),
        };
    }
    let ceiling = (old_version.major, old_version.minor.saturating_add(2), 0);
    if change.ceiling && core(new_version) >= ceiling {
        let detail = format!("version cannot be increased from \"{old_version}\" to \"{new_version}\"");
        return Some(FieldError::invalid(path, new, detail));
    }
    if hook_pending(change.cluster, "AfterClusterUpgrade") {
        return Some(FieldError::invalid(
            path,
            new,
            "version cannot be changed when the \"AfterClusterUpgrade\" hook is still blocking",
        ));
    }
    let old_cluster = change.old_cluster;
    let problems: Vec<String> = [
        upgrading::control_plane_problem(old_cluster, old_version, source),
        upgrading::workers_problem(old_cluster, old_version, source, "MachineDeployment"),
        upgrading::workers_problem(old_cluster, old_version, source, "MachinePool"),
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

/// Whether a version above the one asked for reached an object of the Cluster.
enum Reached {
    /// No object carries a higher version.
    Nothing,
    /// The control plane is not known (no reference yet, or not found): nothing can be said.
    Unknown,
    /// This object (named "Kind name (version)") carries one.
    Object(String),
}

/// The first object of the Cluster (its upgrade step, control plane, MachineDeployments,
/// MachinePools) that carries a version above `version`. Unreadable versions count as above.
fn carrier_above(cluster: &Cluster, version: &Version, source: &dyn ObjectSource) -> Reached {
    let above = |text: &str| parse_tolerant(text).is_none_or(|v| v.cmp_precedence(version).is_gt());
    let annotations = cluster.metadata.annotations.as_ref();
    if let Some(step) = annotations.and_then(|a| a.get(TOPOLOGY_UPGRADE_STEP_ANNOTATION)) {
        if above(step) {
            return Reached::Object(format!("the upgrade step in progress ({step})"));
        }
    }
    let namespace = cluster.metadata.namespace.as_deref().unwrap_or_default();
    let reference = &cluster.spec.control_plane_ref;
    let control_plane = (!reference.is_unset())
        .then(|| source.get(&reference.api_group, &reference.kind, namespace, &reference.name))
        .flatten();
    let Some(control_plane) = control_plane else {
        return Reached::Unknown;
    };
    for pointer in ["/spec/version", "/status/version"] {
        let carried = control_plane.pointer(pointer).and_then(Value::as_str);
        if let Some(carried) = carried.filter(|v| above(v)) {
            return Reached::Object(format!("{} {} ({carried})", reference.kind, reference.name));
        }
    }
    let cluster_name = cluster.metadata.name.as_deref().unwrap_or_default();
    for kind in ["MachineDeployment", "MachinePool"] {
        for object in source.list_of_cluster(CAPI_GROUP, kind, namespace, cluster_name) {
            let carried = object
                .pointer("/spec/template/spec/version")
                .and_then(Value::as_str)
                .filter(|v| above(v));
            if let Some(carried) = carried {
                let name = object
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                return Reached::Object(format!("{kind} {name} ({carried})"));
            }
        }
    }
    Reached::Nothing
}

/// Whether `hook` is listed in the Cluster's pending-hooks annotation.
fn hook_pending(cluster: &Cluster, hook: &str) -> bool {
    cluster
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PENDING_HOOKS_ANNOTATION))
        .is_some_and(|hooks| hooks.split(',').any(|h| h == hook))
}

/// Versions compare by precedence, then by build identifiers.
fn compare(a: &Version, b: &Version) -> Order {
    match a.cmp_precedence(b) {
        Ordering::Less => return Order::Less,
        Ordering::Greater => return Order::Greater,
        Ordering::Equal => {}
    }
    let split = |v: &Version| -> Vec<String> {
        let build = v.build.as_str();
        if build.is_empty() {
            Vec::new()
        } else {
            build.split('.').map(str::to_owned).collect()
        }
    };
    let (left, right) = (split(a), split(b));
    for (l, r) in left.iter().zip(&right) {
        let number = |s: &str| {
            s.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| s.parse::<u64>().unwrap_or(0))
        };
        match (number(l), number(r)) {
            (Some(_), None) => return Order::Less,
            (None, Some(_)) => return Order::Greater,
            (Some(x), Some(y)) if x < y => return Order::Less,
            (Some(x), Some(y)) if x > y => return Order::Greater,
            (None, None) if l != r => return Order::Different,
            _ => {}
        }
    }
    match left.len().cmp(&right.len()) {
        Ordering::Equal => Order::Equal,
        Ordering::Less => Order::Less,
        Ordering::Greater => Order::Greater,
    }
}

#[cfg(test)]
mod tests;
