//! The Cluster webhooks, as Cluster API v1.14 runs them on the v1beta2 hub: defaulting (the `v`
//! of the version, variables from the class's `status.variables`, which it also validates) and
//! validation (refs, networks, topology, version changes, workers, rollout, taints, health
//! checks, autoscaler, class changes; not variables).

pub(crate) mod metadata;
mod patch;
mod topology;
mod variables;
mod version;
mod workers;

use std::net::IpAddr;

use json_patch::Patch;

use super::Outcome;
use crate::api::convert::V1BETA1_FIELDS;
use crate::api::names::label_value_problems;
use crate::api::{Cluster, ClusterClass};
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::store::{ClassEntry, ObjectSource};
use patch::{Place, Recorder};

pub use topology::{class_key, validate_autoscaler};

/// Mutating webhook: defaults the Cluster, then defaults and validates its variables against the
/// class (so the class cannot change between defaulting and validation). Gives the JSONPatch of
/// what it set, as a diff of the Cluster's typed serialisation before and after would.
pub fn default(cluster: &mut Cluster, old: Option<&Cluster>, source: &dyn ObjectSource) -> (Outcome, Patch) {
    let mut patch = Recorder::default();
    let outcome = default_recorded(cluster, old, source, &mut patch);
    (outcome, patch.finish())
}

fn default_recorded(
    cluster: &mut Cluster,
    old: Option<&Cluster>,
    source: &dyn ObjectSource,
    patch: &mut Recorder,
) -> Outcome {
    // v1.14: nothing is defaulted without a topology; refs have no namespace any more.
    let topology = &mut cluster.spec.topology;
    if topology.is_unset() {
        return Outcome::default();
    }
    if !topology.version.starts_with('v') {
        let was_absent = topology.version.is_empty();
        topology.version = format!("v{}", topology.version);
        let pointer = Place::Version.pointer(&[]);
        patch.set_string(Place::Version, pointer, was_absent, &topology.version);
    }
    if topology.class_ref.name.is_empty() {
        let path = FieldPath::new("spec").children(&["topology", "classRef", "name"]);
        return Outcome::from_errors(FieldError::required(&path, "cannot be empty").into());
    }
    let Ok(entry) = class_of(cluster, source) else {
        return Outcome::default();
    };
    Outcome::from_errors(variables::default_and_validate(cluster, old, &entry, patch))
}

/// Validating webhook, for create (`old` is None) and update.
pub fn validate(cluster: &Cluster, old: Option<&Cluster>, source: &dyn ObjectSource) -> Outcome {
    let mut outcome = Outcome::default();
    let errors = &mut outcome.errors;
    let name = cluster.metadata.name.as_deref().unwrap_or_default();
    for problem in label_value_problems(name) {
        errors.push(FieldError::invalid(
            &FieldPath::new("metadata").child("name"),
            name,
            format!("must be a valid label value {problem}"),
        ));
    }
    let kept_fields = |c: &Cluster| c.metadata.annotations.as_ref()?.get(V1BETA1_FIELDS).cloned();
    errors.extend(metadata::validate_v1beta1_fields(
        "Cluster",
        kept_fields(cluster).as_ref(),
        old.and_then(kept_fields).as_ref(),
    ));
    validate_refs(cluster, old, errors);
    validate_networks(cluster, errors);
    let topology_path = FieldPath::new("spec").child("topology");
    if !cluster.spec.topology.is_unset() {
        if old.is_none() {
            validate_refs_with_topology(cluster, &mut outcome.errors);
        }
        outcome.merge(topology::validate(cluster, old, source));
    }
    if old.is_some_and(|o| !o.spec.topology.is_unset()) && cluster.spec.topology.is_unset() {
        outcome.errors.push(FieldError::forbidden(
            &topology_path,
            "cannot be removed from an existing Cluster",
        ));
    }
    outcome
}

fn validate_refs(cluster: &Cluster, old: Option<&Cluster>, errors: &mut FieldErrors) {
    let spec = FieldPath::new("spec");
    let removed = |new: &crate::api::ContractVersionedObjectReference,
                   old: Option<&crate::api::ContractVersionedObjectReference>| {
        new.is_unset() && old.is_some_and(|o| !o.is_unset())
    };
    if removed(
        &cluster.spec.infrastructure_ref,
        old.map(|o| &o.spec.infrastructure_ref),
    ) {
        errors.push(FieldError::forbidden(
            &spec.child("infrastructureRef"),
            "cannot be removed",
        ));
    }
    if cluster.spec.control_plane_ref.is_unset()
        && cluster.spec.infrastructure_ref.is_unset()
        && cluster.spec.topology.is_unset()
    {
        errors.push(FieldError::forbidden(
            &spec,
            "one of spec.controlPlaneRef, spec.infrastructureRef or spec.topology must be set",
        ));
    }
    if removed(
        &cluster.spec.control_plane_ref,
        old.map(|o| &o.spec.control_plane_ref),
    ) {
        errors.push(FieldError::forbidden(
            &spec.child("controlPlaneRef"),
            "cannot be removed",
        ));
    }
}

/// A new managed Cluster gets its refs from the topology: they cannot be given too (seed rule;
/// on update the topology controller has set them, so they are allowed there).
fn validate_refs_with_topology(cluster: &Cluster, errors: &mut FieldErrors) {
    let spec = FieldPath::new("spec");
    if !cluster.spec.infrastructure_ref.is_unset() {
        errors.push(FieldError::forbidden(
            &spec.child("infrastructureRef"),
            "cannot be set together with spec.topology",
        ));
    }
    if !cluster.spec.control_plane_ref.is_unset() {
        errors.push(FieldError::forbidden(
            &spec.child("controlPlaneRef"),
            "cannot be set together with spec.topology",
        ));
    }
}

fn validate_networks(cluster: &Cluster, errors: &mut FieldErrors) {
    let network = &cluster.spec.cluster_network;
    for (field, ranges) in [("pods", &network.pods), ("services", &network.services)] {
        let path = FieldPath::new("spec").children(&["clusterNetwork", field, "cidrBlocks"]);
        for (i, cidr) in ranges.cidr_blocks.iter().enumerate() {
            if let Err(reason) = parse_cidr(cidr) {
                errors.push(FieldError::invalid(&path.index(i), cidr.clone(), reason));
            }
        }
    }
}

/// Go's `net.ParseCIDR`, with its error text.
fn parse_cidr(cidr: &str) -> Result<(), String> {
    let invalid = || format!("invalid CIDR address: {cidr}");
    let (address, prefix) = cidr.split_once('/').ok_or_else(invalid)?;
    let address: IpAddr = address.parse().map_err(|_| invalid())?;
    let prefix: u8 = prefix.parse().map_err(|_| invalid())?;
    let max = if address.is_ipv4() { 32 } else { 128 };
    if prefix > max || cidr.split_once('/').is_some_and(|(_, p)| p.starts_with('+')) {
        return Err(invalid());
    }
    Ok(())
}

/// Why a Cluster's class cannot be used for class-based checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClassProblem {
    /// No such ClusterClass.
    Missing,
    /// The ClusterClass's status does not describe its current generation.
    NotReconciled,
}

impl ClassProblem {
    /// The error the API reader gives for the class `name`.
    fn describe(self, name: &str) -> String {
        match self {
            Self::Missing => format!("clusterclasses.cluster.x-k8s.io {name:?} not found"),
            Self::NotReconciled => "ClusterClass is not successfully reconciled".to_owned(),
        }
    }
}

/// The Cluster's class when it exists and is reconciled.
fn class_of(
    cluster: &Cluster,
    source: &dyn ObjectSource,
) -> Result<std::sync::Arc<ClassEntry>, ClassProblem> {
    let (namespace, name) = class_key(cluster);
    let entry = source
        .cluster_class(&namespace, &name)
        .ok_or(ClassProblem::Missing)?;
    if is_reconciled(&entry.class) {
        Ok(entry)
    } else {
        Err(ClassProblem::NotReconciled)
    }
}

/// The ClusterClass condition Cluster API v1.14 reads to know the class's variables are current.
const VARIABLES_READY_CONDITION: &str = "VariablesReady";

/// A ClusterClass is reconciled when its status describes its generation and the
/// `VariablesReady` condition is present and not False. A status written before v1beta2 (only
/// the deprecated v1beta1 `VariablesReconciled` condition, no `VariablesReady`) is read through
/// that condition instead: project decision, so classes reconciled by a v1beta1 controller are
/// not taken as unreconciled during the migration.
pub fn is_reconciled(class: &ClusterClass) -> bool {
    let Some(status) = &class.status else { return false };
    let generation = class.metadata.generation.unwrap_or(0);
    if status.observed_generation.unwrap_or(0) != generation {
        return false;
    }
    if let Some(ready) = status
        .conditions
        .iter()
        .find(|c| c.type_ == VARIABLES_READY_CONDITION)
    {
        return ready.status != "False";
    }
    status
        .deprecated
        .as_ref()
        .and_then(|d| d.v1beta1.as_ref())
        .into_iter()
        .flat_map(|v| &v.conditions)
        .find(|c| c.type_ == crate::api::labels::VARIABLES_RECONCILED_CONDITION)
        .is_some_and(|c| c.status != "False")
}

#[cfg(test)]
mod tests {
    use super::parse_cidr;

    #[test]
    fn cidrs_parse_like_go() {
        assert!(parse_cidr("10.0.0.0/16").is_ok());
        assert!(parse_cidr("fd00::/64").is_ok());
        assert_eq!(
            parse_cidr("10.0.0.0/33"),
            Err("invalid CIDR address: 10.0.0.0/33".into())
        );
        assert_eq!(
            parse_cidr("10.0.0.0"),
            Err("invalid CIDR address: 10.0.0.0".into())
        );
    }
}
