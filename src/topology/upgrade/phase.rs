//! The control plane's phase as its spec and status tell: new, provisioning, upgrading, scaling
//! or stable.

use serde_json::Value;

/// What the current control plane is doing, as its spec and status tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlPlanePhase {
    /// Not created yet.
    New,
    /// Created, but no version reported yet (first provisioning).
    Provisioning,
    /// Its spec asks for a newer version than its status reports.
    Upgrading {
        /// The version it is upgrading to.
        to: String,
    },
    /// Its replicas are not all updated, ready and available.
    Scaling,
    /// Running its spec's version with every replica up to date.
    Stable,
}

impl ControlPlanePhase {
    /// The phase of `control_plane` (`None` when it does not exist yet).
    pub fn of(control_plane: Option<&Value>) -> Self {
        let Some(cp) = control_plane else {
            return ControlPlanePhase::New;
        };
        let spec_version = cp["spec"]["version"].as_str().unwrap_or_default();
        let versions = status_versions(cp);
        if versions.first().is_none_or(|v| v.is_empty()) {
            return ControlPlanePhase::Provisioning;
        }
        if versions
            .iter()
            .any(|status_version| newer(spec_version, status_version))
        {
            return ControlPlanePhase::Upgrading {
                to: spec_version.to_owned(),
            };
        }
        if scaling(cp) {
            return ControlPlanePhase::Scaling;
        }
        ControlPlanePhase::Stable
    }

    /// A short account for a condition message, `None` when stable or new.
    pub fn describe(&self) -> Option<String> {
        match self {
            ControlPlanePhase::Provisioning => {
                Some("the control plane is completing its initial provisioning".into())
            }
            ControlPlanePhase::Upgrading { to } => Some(format!("the control plane is upgrading to {to}")),
            ControlPlanePhase::Scaling => {
                Some("the control plane is rolling out or scaling its replicas".into())
            }
            ControlPlanePhase::New | ControlPlanePhase::Stable => None,
        }
    }
}

/// The versions a control plane's machines run: v1beta2 `status.versions[].version` when listed,
/// else v1beta1 `status.version` (as v1.14's contract reads either).
fn status_versions(cp: &Value) -> Vec<&str> {
    let status = &cp["status"];
    match status["versions"].as_array().filter(|v| !v.is_empty()) {
        Some(versions) => versions
            .iter()
            .map(|v| v["version"].as_str().unwrap_or_default())
            .collect(),
        None => status["version"].as_str().into_iter().collect(),
    }
}

/// Whether `spec` names a strictly newer version than `status` (tolerant of a leading `v`);
/// unparsable versions compare as different when not equal.
fn newer(spec: &str, status: &str) -> bool {
    let parse = |v: &str| semver::Version::parse(v.trim_start_matches('v')).ok();
    match (parse(spec), parse(status)) {
        (Some(spec), Some(status)) => spec > status,
        _ => spec != status,
    }
}

/// Whether a control plane with `spec.replicas` has replicas that are not yet up to date, ready
/// and available (a missing status field counts as not yet). Control planes without replicas never
/// scale. The v1beta2 contract's counters (`upToDateReplicas`, `availableReplicas`) are read when
/// the status has them, else the v1beta1 ones (`updatedReplicas`, `unavailableReplicas`).
fn scaling(cp: &Value) -> bool {
    let Some(desired) = cp["spec"]["replicas"].as_i64() else {
        return false;
    };
    let status = &cp["status"];
    let v1beta2 = status.get("upToDateReplicas").is_some() || status.get("availableReplicas").is_some();
    let (up_to_date, available) = if v1beta2 {
        (
            status["upToDateReplicas"].as_i64(),
            status["availableReplicas"].as_i64(),
        )
    } else {
        let unavailable = status["unavailableReplicas"].as_i64().unwrap_or(0);
        (status["updatedReplicas"].as_i64(), Some(desired - unavailable))
    };
    [
        status["replicas"].as_i64(),
        up_to_date,
        status["readyReplicas"].as_i64(),
        available,
    ]
    .iter()
    .any(|count| *count != Some(desired))
}
