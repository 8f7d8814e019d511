//! Reads a control plane object of any provider kind through the fields the Cluster API control
//! plane contract defines (`spec.version`, `status.replicas`, ...), and answers whether it is
//! provisioning, upgrading or scaling.

use serde::Deserialize;
use serde_json::Value;
use thiserror::Error;

use super::common::ObjectReference;
use super::version::{compare_with_build, parse_tolerant, VersionOrder};

/// A contract field as a path of keys from the object's root.
type Path = &'static [&'static str];

const SPEC_VERSION: Path = &["spec", "version"];
const STATUS_VERSION: Path = &["status", "version"];
const SPEC_REPLICAS: Path = &["spec", "replicas"];
const STATUS_REPLICAS: Path = &["status", "replicas"];
const UPDATED_REPLICAS: Path = &["status", "updatedReplicas"];
const READY_REPLICAS: Path = &["status", "readyReplicas"];
const UNAVAILABLE_REPLICAS: Path = &["status", "unavailableReplicas"];
const MACHINE_INFRASTRUCTURE_REF: Path = &["spec", "machineTemplate", "infrastructureRef"];

/// Why a contract field could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ContractError {
    /// A field the question needs is absent.
    #[error("path {path}: field not found")]
    NotFound {
        /// The field, `.spec.version` style.
        path: String,
    },
    /// A field holds a value of the wrong JSON type.
    #[error("failed to get {path} from object: expected {expected}, found {found}")]
    WrongType {
        /// The field, `.spec.version` style.
        path: String,
        /// The JSON type the contract wants.
        expected: &'static str,
        /// The value found.
        found: String,
    },
    /// A version field is not a semantic version.
    #[error("failed to parse control plane {path} {value:?}")]
    InvalidVersion {
        /// The field, `.spec.version` style.
        path: String,
        /// The text found.
        value: String,
    },
}

/// A borrowed control plane object, read per the contract.
#[derive(Debug, Clone, Copy)]
pub struct ControlPlane<'a> {
    object: &'a Value,
}

impl<'a> ControlPlane<'a> {
    /// Wraps a control plane object (e.g. a KubeadmControlPlane as JSON).
    pub fn new(object: &'a Value) -> Self {
        Self { object }
    }

    /// `spec.version`: the Kubernetes version wanted.
    pub fn version(&self) -> Result<Option<&'a str>, ContractError> {
        self.string(SPEC_VERSION)
    }

    /// `status.version`: the lowest Kubernetes version its Machines run.
    pub fn status_version(&self) -> Result<Option<&'a str>, ContractError> {
        self.string(STATUS_VERSION)
    }

    /// `spec.replicas`: control plane Machines wanted (absent for hosted control planes).
    pub fn replicas(&self) -> Result<Option<i64>, ContractError> {
        self.integer(SPEC_REPLICAS)
    }

    /// `status.replicas`: control plane Machines that exist.
    pub fn status_replicas(&self) -> Result<Option<i64>, ContractError> {
        self.integer(STATUS_REPLICAS)
    }

    /// `status.updatedReplicas`: Machines with the current spec.
    pub fn updated_replicas(&self) -> Result<Option<i64>, ContractError> {
        self.integer(UPDATED_REPLICAS)
    }

    /// `status.readyReplicas`: Machines that are ready.
    pub fn ready_replicas(&self) -> Result<Option<i64>, ContractError> {
        self.integer(READY_REPLICAS)
    }

    /// `status.unavailableReplicas`: Machines not yet available.
    pub fn unavailable_replicas(&self) -> Result<Option<i64>, ContractError> {
        self.integer(UNAVAILABLE_REPLICAS)
    }

    /// `status.ready`.
    pub fn ready(&self) -> Result<Option<bool>, ContractError> {
        self.boolean(&["status", "ready"])
    }

    /// `status.initialized`: the API server has answered once.
    pub fn initialized(&self) -> Result<Option<bool>, ContractError> {
        self.boolean(&["status", "initialized"])
    }

    /// `status.externalManagedControlPlane`: the control plane has no Machines of its own.
    pub fn external_managed(&self) -> Result<Option<bool>, ContractError> {
        self.boolean(&["status", "externalManagedControlPlane"])
    }

    /// `status.selector`: the label selector of its Machines, as text.
    pub fn selector(&self) -> Result<Option<&'a str>, ContractError> {
        self.string(&["status", "selector"])
    }

    /// `spec.machineTemplate.infrastructureRef`, for providers whose Machines use one.
    pub fn machine_infrastructure_ref(&self) -> Result<Option<ObjectReference>, ContractError> {
        let Some(value) = self.field(MACHINE_INFRASTRUCTURE_REF) else {
            return Ok(None);
        };
        ObjectReference::deserialize(value)
            .map(Some)
            .map_err(|_| wrong_type(MACHINE_INFRASTRUCTURE_REF, "object reference", value))
    }

    /// v1beta2 ready replicas: `status.v1beta2.readyReplicas`, else `status.readyReplicas`.
    pub fn v1beta2_ready_replicas(&self) -> Result<Option<i64>, ContractError> {
        self.first_integer(&[&["status", "v1beta2", "readyReplicas"], READY_REPLICAS])
    }

    /// v1beta2 available replicas: `status.v1beta2.availableReplicas`, else
    /// `status.availableReplicas`.
    pub fn v1beta2_available_replicas(&self) -> Result<Option<i64>, ContractError> {
        self.first_integer(&[
            &["status", "v1beta2", "availableReplicas"],
            &["status", "availableReplicas"],
        ])
    }

    /// v1beta2 up-to-date replicas: `status.v1beta2.upToDateReplicas`, else
    /// `status.upToDateReplicas`.
    pub fn v1beta2_up_to_date_replicas(&self) -> Result<Option<i64>, ContractError> {
        self.first_integer(&[
            &["status", "v1beta2", "upToDateReplicas"],
            &["status", "upToDateReplicas"],
        ])
    }

    /// Still being created: no (or an empty) `status.version` yet.
    pub fn is_provisioning(&self) -> Result<bool, ContractError> {
        Ok(self.status_version()?.is_none_or(str::is_empty))
    }

    /// Rolling out a new version: `spec.version` is newer than `status.version` (build metadata
    /// counts; unordered builds count as newer). False while `status.version` is unset.
    pub fn is_upgrading(&self) -> Result<bool, ContractError> {
        let spec = self
            .version()?
            .ok_or_else(|| not_found(SPEC_VERSION))
            .and_then(|text| parse_version(SPEC_VERSION, text))?;
        let Some(status) = self.status_version()? else {
            return Ok(false);
        };
        let status = parse_version(STATUS_VERSION, status)?;
        Ok(matches!(
            compare_with_build(&spec, &status),
            VersionOrder::Greater | VersionOrder::Different
        ))
    }

    /// Changing its number of Machines: the status counters do not all match `spec.replicas`
    /// yet, some are missing, or some Machines are unavailable.
    pub fn is_scaling(&self) -> Result<bool, ContractError> {
        let desired = self.replicas()?.ok_or_else(|| not_found(SPEC_REPLICAS))?;
        let counters = [
            self.status_replicas()?,
            self.updated_replicas()?,
            self.ready_replicas()?,
        ];
        let unavailable = self.unavailable_replicas()?.unwrap_or(0);
        Ok(counters.iter().any(|c| *c != Some(desired)) || unavailable > 0)
    }

    /// The value at `path`, if every key exists.
    fn field(&self, path: Path) -> Option<&'a Value> {
        path.iter().try_fold(self.object, |value, key| value.get(key))
    }

    fn string(&self, path: Path) -> Result<Option<&'a str>, ContractError> {
        self.field(path)
            .map(|v| v.as_str().ok_or_else(|| wrong_type(path, "string", v)))
            .transpose()
    }

    fn integer(&self, path: Path) -> Result<Option<i64>, ContractError> {
        self.field(path)
            .map(|v| v.as_i64().ok_or_else(|| wrong_type(path, "integer", v)))
            .transpose()
    }

    fn boolean(&self, path: Path) -> Result<Option<bool>, ContractError> {
        self.field(path)
            .map(|v| v.as_bool().ok_or_else(|| wrong_type(path, "boolean", v)))
            .transpose()
    }

    fn first_integer(&self, paths: &[Path]) -> Result<Option<i64>, ContractError> {
        for path in paths {
            if let Some(value) = self.integer(path)? {
                return Ok(Some(value));
            }
        }
        Ok(None)
    }
}

/// `.spec.version` style rendering of a path.
fn dotted(path: Path) -> String {
    path.iter().map(|key| format!(".{key}")).collect()
}

fn not_found(path: Path) -> ContractError {
    ContractError::NotFound { path: dotted(path) }
}

fn wrong_type(path: Path, expected: &'static str, found: &Value) -> ContractError {
    ContractError::WrongType {
        path: dotted(path),
        expected,
        found: found.to_string(),
    }
}

fn parse_version(path: Path, text: &str) -> Result<semver::Version, ContractError> {
    parse_tolerant(text).ok_or_else(|| ContractError::InvalidVersion {
        path: dotted(path),
        value: text.to_owned(),
    })
}

#[cfg(test)]
#[path = "control_plane_tests.rs"]
mod tests;
