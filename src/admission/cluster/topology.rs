//! Validation of `spec.topology` as Cluster API v1.14 runs it: class, version format and
//! changes, metadata, rollout, taints, worker topologies and health checks against the class,
//! the class's `kubernetesVersions`, autoscaler annotations, and class changes.

use std::num::IntErrorKind;

use super::{class_of, version, workers, ClassProblem};
use crate::admission::Outcome;
use crate::api::labels::{
    AUTOSCALER_MAX_SIZE_ANNOTATION, AUTOSCALER_MIN_SIZE_ANNOTATION, TOPOLOGY_UPGRADE_CONCURRENCY_ANNOTATION,
    UNSAFE_UPDATE_CLASS_NAME_ANNOTATION, UNSAFE_UPDATE_VERSION_ANNOTATION,
};
use crate::api::{Cluster, ClusterClass, Topology, TopologyMetadata};
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::go_format::quote as go_quote;
use crate::store::ObjectSource;
use crate::topology::compatibility::check_classes_compatible;

/// The namespace and name of the ClusterClass a Cluster uses (`classRef.namespace` defaults to
/// the Cluster's own namespace).
pub fn class_key(cluster: &Cluster) -> (String, String) {
    let class_ref = &cluster.spec.topology.class_ref;
    let namespace = if class_ref.namespace.is_empty() {
        cluster.metadata.namespace.clone().unwrap_or_default()
    } else {
        class_ref.namespace.clone()
    };
    (namespace, class_ref.name.clone())
}

/// Validates the topology of `cluster` (create when `old` is None).
pub fn validate(cluster: &Cluster, old: Option<&Cluster>, source: &dyn ObjectSource) -> Outcome {
    let mut outcome = Outcome::default();
    let topology = &cluster.spec.topology;
    let path = FieldPath::new("spec").child("topology");
    let errors = &mut outcome.errors;
    if topology.class_ref.name.is_empty() {
        // Sic: Cluster API v1.14 still names the v1beta1 field here.
        errors.push(FieldError::required(
            &path.child("class"),
            "classRef.name cannot be empty",
        ));
        return outcome;
    }
    errors.extend(version::format_errors(&path.child("version"), &topology.version));
    validate_metadata(topology, &path, errors);
    workers::validate_rollout(topology, &path, errors);
    workers::validate_taints(topology, &path, errors);
    validate_concurrency(cluster, errors);
    let (class_namespace, class_name) = class_key(cluster);
    // v1.14 validates against a class that is not reconciled too, after warning about it.
    let class = match class_of(cluster, source) {
        Ok(entry) => Some(entry),
        Err(ClassProblem::Missing) => {
            outcome.warnings.push(format!(
                "Cluster refers to ClusterClass {class_namespace}/{class_name}, but this ClusterClass does not exist. Cluster topology has not been fully validated. The ClusterClass must be created to reconcile the Cluster"
            ));
            None
        }
        Err(ClassProblem::NotReconciled) => {
            outcome.warnings.push(format!(
                "Cluster refers to ClusterClass {class_namespace}/{class_name}, but this ClusterClass hasn't been successfully reconciled. Cluster topology has not been fully validated. Please take a look at the ClusterClass status"
            ));
            source.cluster_class(&class_namespace, &class_name)
        }
    };
    let class = class.as_ref().map(|entry| &entry.class);
    if let Some(class) = class {
        // Variables are defaulted and validated by the defaulting webhook only, as Cluster
        // API does: both steps read the class once, so a class changing between the two
        // webhooks cannot deny what was defaulted.
        outcome.errors.extend(validate_listed_version(cluster, class));
        outcome.errors.extend(workers::validate_workers(cluster, class));
        outcome
            .errors
            .extend(workers::validate_health_checks(cluster, class));
    }
    outcome.errors.extend(validate_autoscaler(cluster, class));
    if let Some(old) = old {
        validate_update(cluster, old, class, source, &mut outcome);
    }
    outcome
}

/// With `kubernetesVersions` in the class, the Cluster's version must be one of them, exactly.
fn validate_listed_version(cluster: &Cluster, class: &ClusterClass) -> FieldErrors {
    let versions = &class.spec.kubernetes_versions;
    let version = &cluster.spec.topology.version;
    if versions.is_empty() || versions.contains(version) {
        return FieldErrors::new();
    }
    FieldError::invalid(
        &FieldPath::new("spec").children(&["topology", "version"]),
        version.as_str(),
        "version must match one of the versions defined in the ClusterClass",
    )
    .into()
}

fn validate_update(
    cluster: &Cluster,
    old: &Cluster,
    class: Option<&ClusterClass>,
    source: &dyn ObjectSource,
    outcome: &mut Outcome,
) {
    let path = FieldPath::new("spec").child("topology");
    let (class_namespace, class_name) = class_key(cluster);
    let annotations = cluster.metadata.annotations.as_ref();
    let Some(class) = class else {
        outcome.errors.push(FieldError::internal(
            &path.child("class"),
            format!("ClusterClass {class_namespace}/{class_name} not found"),
        ));
        return;
    };
    if old.spec.topology.is_unset() || old.spec.topology.class_ref.name.is_empty() {
        if !annotations.is_some_and(|a| a.contains_key(UNSAFE_UPDATE_CLASS_NAME_ANNOTATION)) {
            outcome.errors.push(FieldError::forbidden(
                &path.child("class"),
                "classRef cannot be set on an existing Cluster",
            ));
        }
        return;
    }
    let version = cluster.spec.topology.version.as_str();
    let old_version = old.spec.topology.version.as_str();
    let version_path = path.child("version");
    let (new_version, old_version, parse_errors) = version::parse_update(&version_path, version, old_version);
    outcome.errors.extend(parse_errors);
    if annotations.is_some_and(|a| a.contains_key(UNSAFE_UPDATE_VERSION_ANNOTATION)) {
        outcome.warnings.push(format!(
            "Skipping version validation for Cluster because annotation {UNSAFE_UPDATE_VERSION_ANNOTATION:?} is set."
        ));
    } else {
        let change = version::Change {
            cluster,
            old_cluster: old,
            ceiling: class.spec.kubernetes_versions.is_empty()
                && class
                    .spec
                    .upgrade
                    .external
                    .generate_upgrade_plan_extension
                    .is_empty(),
        };
        if let Some(error) = version::check_change(
            &version_path,
            version,
            &new_version,
            &old_version,
            &change,
            source,
        ) {
            outcome.errors.push(error);
        }
    }
    let old_key = class_key(old);
    if old_key != (class_namespace.clone(), class_name.clone()) {
        let old_path = format!("{}/{}", old_key.0, old_key.1);
        // The old class is read as it is, reconciled or not: a Cluster may rebase away from a
        // broken class.
        match source.cluster_class(&old_key.0, &old_key.1) {
            Some(old_class) => outcome.errors.extend(check_classes_compatible(&old_class.class, class)),
            None => outcome.errors.push(FieldError::forbidden(
                &path.child("class"),
                format!(
                    "valid ClusterClass with name {old_path:?} could not be retrieved, change from class {old_path:?} to class \"{class_namespace}/{class_name}\" cannot be validated. Error: {}",
                    ClassProblem::Missing.describe(&old_key.1)
                ),
            )),
        }
    }
}

fn validate_metadata(topology: &Topology, path: &FieldPath, errors: &mut FieldErrors) {
    let mut check = |metadata: &TopologyMetadata, at: FieldPath| {
        errors.extend(super::metadata::validate(
            &metadata.labels,
            &metadata.annotations,
            &at,
        ));
    };
    check(
        &topology.control_plane.metadata,
        path.children(&["controlPlane", "metadata"]),
    );
    for md in &topology.workers.machine_deployments {
        check(
            &md.metadata,
            path.children(&["workers", "machineDeployments"])
                .key(&md.name)
                .child("metadata"),
        );
    }
    for mp in &topology.workers.machine_pools {
        check(
            &mp.metadata,
            path.children(&["workers", "machinePools"])
                .key(&mp.name)
                .child("metadata"),
        );
    }
}

/// The upgrade-concurrency annotation is a whole number of at least 1. As in Cluster API v1.14
/// the error names `metadata.annotations.<annotation>` (three field names, not a map key) and
/// quotes Go's `strconv.Atoi` error.
fn validate_concurrency(cluster: &Cluster, errors: &mut FieldErrors) {
    let annotations = cluster.metadata.annotations.as_ref();
    let Some(value) = annotations.and_then(|a| a.get(TOPOLOGY_UPGRADE_CONCURRENCY_ANNOTATION)) else {
        return;
    };
    let path = FieldPath::new("metadata").children(&["annotations", TOPOLOGY_UPGRADE_CONCURRENCY_ANNOTATION]);
    match value.parse::<i64>() {
        Err(err) => errors.push(FieldError::invalid(
            &path,
            value.as_str(),
            format!(
                "could not parse the value of the annotation: strconv.Atoi: parsing {}: {}",
                go_quote(value),
                atoi_problem(&err)
            ),
        )),
        Ok(n) if n < 1 => errors.push(FieldError::invalid(
            &path,
            value.as_str(),
            "value cannot be less than 1",
        )),
        Ok(_) => {}
    }
}

/// Go's words for why `strconv.Atoi` (a 64-bit `int`: an optional sign, then decimal digits)
/// refused a string Rust's `i64` parsing refused too.
fn atoi_problem(err: &std::num::ParseIntError) -> &'static str {
    match err.kind() {
        IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => "value out of range",
        _ => "invalid syntax",
    }
}

/// Replicas must not be set on a MachineDeployment the cluster autoscaler manages.
pub fn validate_autoscaler(cluster: &Cluster, class: Option<&ClusterClass>) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let workers = &cluster.spec.topology.workers;
    let name = cluster.metadata.name.as_deref().unwrap_or_default();
    let namespace = cluster.metadata.namespace.as_deref().unwrap_or_default();
    let has_autoscaler = |metadata: &TopologyMetadata| {
        metadata.annotations.contains_key(AUTOSCALER_MIN_SIZE_ANNOTATION)
            || metadata.annotations.contains_key(AUTOSCALER_MAX_SIZE_ANNOTATION)
    };
    for md in &workers.machine_deployments {
        let Some(replicas) = md.replicas else { continue };
        let path = FieldPath::new("spec")
            .children(&["topology", "workers", "machineDeployments"])
            .key(&md.name)
            .child("replicas");
        if has_autoscaler(&md.metadata) {
            errors.push(FieldError::invalid(
                &path,
                replicas,
                format!("cannot be set for cluster {name:?} in namespace {namespace:?} if the same MachineDeploymentTopology has autoscaler annotations"),
            ));
        }
        let class_has = class
            .into_iter()
            .flat_map(|c| &c.spec.workers.machine_deployments)
            .any(|c| c.class == md.class && has_autoscaler(&c.metadata));
        if class_has {
            errors.push(FieldError::invalid(
                &path,
                replicas,
                format!(
                    "cannot be set for cluster {name:?} in namespace {namespace:?} if the source class {:?} of this MachineDeploymentTopology has autoscaler annotations",
                    md.class
                ),
            ));
        }
    }
    errors
}
