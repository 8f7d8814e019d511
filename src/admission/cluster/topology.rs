//! Validation of `spec.topology`: class, version and its changes, metadata, worker topologies
//! against the class, health checks, autoscaler annotations, and class changes.

use std::collections::BTreeSet;

use super::patch::{Place, Recorder};
use super::{class_of, version, ClassProblem};
use crate::admission::Outcome;
use crate::api::labels::{
    AUTOSCALER_MAX_SIZE_ANNOTATION, AUTOSCALER_MIN_SIZE_ANNOTATION, TOPOLOGY_UPGRADE_CONCURRENCY_ANNOTATION,
    UNSAFE_UPDATE_CLASS_NAME_ANNOTATION, UNSAFE_UPDATE_VERSION_ANNOTATION,
};
use crate::api::{
    Cluster, ClusterClass, MachineHealthCheckClass, MachineHealthCheckTopology, Topology, TopologyMetadata,
};
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::store::ObjectSource;
use crate::topology::compatibility::check_classes_compatible;

/// The namespace and name of the ClusterClass a Cluster uses (`classNamespace` defaults to the
/// Cluster's own namespace).
pub fn class_key(cluster: &Cluster) -> (String, String) {
    let own = cluster.metadata.namespace.clone().unwrap_or_default();
    let Some(topology) = &cluster.spec.topology else {
        return (own, String::new());
    };
    let namespace = topology
        .class_namespace
        .clone()
        .filter(|ns| !ns.is_empty())
        .unwrap_or(own);
    (namespace, topology.class.clone())
}

/// Sets the namespace of MachineHealthCheck remediation templates that have none.
/// Records each in `patch`.
pub(super) fn default_remediation_namespaces(topology: &mut Topology, namespace: &str, patch: &mut Recorder) {
    let control_plane = topology
        .control_plane
        .machine_health_check
        .as_mut()
        .map(|check| (Place::ControlPlane, check));
    let workers = topology
        .workers
        .iter_mut()
        .flat_map(|w| w.machine_deployments.iter_mut().enumerate())
        .filter_map(|(index, md)| Some((Place::MachineDeployment(index), md.machine_health_check.as_mut()?)));
    for (place, check) in control_plane.into_iter().chain(workers) {
        let Some(template) = check.class.remediation_template.as_mut() else {
            continue;
        };
        if !template.namespace.as_deref().unwrap_or_default().is_empty() {
            continue;
        }
        let pointer = place.pointer(&["machineHealthCheck", "remediationTemplate", "namespace"]);
        patch.set_string(place, pointer, template.namespace.is_none(), namespace);
        template.namespace = Some(namespace.to_owned());
    }
}

use super::metadata::label_value_problems;

/// Validates the topology of `cluster` (create when `old` is None).
pub fn validate(cluster: &Cluster, old: Option<&Cluster>, source: &dyn ObjectSource) -> Outcome {
    let mut outcome = Outcome::default();
    let Some(topology) = &cluster.spec.topology else {
        return outcome;
    };
    let path = FieldPath::new("spec").child("topology");
    let errors = &mut outcome.errors;
    if topology.class.is_empty() {
        errors.push(FieldError::required(
            &path.child("class"),
            "class cannot be empty",
        ));
        return outcome;
    }
    if !version::is_kube_semver(&topology.version) {
        errors.push(FieldError::invalid(
            &path.child("version"),
            topology.version.as_str(),
            "version must be a valid semantic version",
        ));
    }
    validate_metadata(topology, &path, errors);
    validate_concurrency(cluster, errors);
    let (class_namespace, class_name) = class_key(cluster);
    let class = class_of(cluster, source);
    match &class {
        Ok(entry) => {
            errors.extend(validate_workers(cluster, &entry.class));
            errors.extend(validate_health_checks(cluster, &entry.class));
            // Variables are defaulted and validated by the defaulting webhook only, as Cluster
            // API does: both steps read the class once, so a class changing between the two
            // webhooks cannot deny what was defaulted.
        }
        Err(ClassProblem::Missing) => outcome.warnings.push(format!(
            "Cluster refers to ClusterClass {class_namespace}/{class_name}, but this ClusterClass does not exist. Cluster topology has not been fully validated. The ClusterClass must be created to reconcile the Cluster"
        )),
        Err(ClassProblem::NotReconciled) => outcome.warnings.push(format!(
            "Cluster refers to ClusterClass {class_namespace}/{class_name}, but this ClusterClass hasn't been successfully reconciled. Cluster topology has not been fully validated. Please take a look at the ClusterClass status"
        )),
    }
    outcome.errors.extend(validate_autoscaler(
        cluster,
        class.as_ref().ok().map(|e| &e.class),
    ));
    if let Some(old) = old {
        validate_update(
            cluster,
            old,
            class.as_ref().ok().map(|e| &e.class),
            source,
            &mut outcome,
        );
    }
    outcome
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
    if source.cluster_class(&class_namespace, &class_name).is_none() {
        outcome.errors.push(FieldError::internal(
            &path.child("class"),
            ClassProblem::Missing.describe(&class_name),
        ));
        return;
    }
    let old_class_name = old
        .spec
        .topology
        .as_ref()
        .map(|t| t.class.as_str())
        .unwrap_or_default();
    if old_class_name.is_empty() {
        if !annotations.is_some_and(|a| a.contains_key(UNSAFE_UPDATE_CLASS_NAME_ANNOTATION)) {
            outcome.errors.push(FieldError::forbidden(
                &path.child("class"),
                "class cannot be set on an existing Cluster",
            ));
        }
        return;
    }
    let version = cluster
        .spec
        .topology
        .as_ref()
        .map(|t| t.version.as_str())
        .unwrap_or_default();
    let old_version = old
        .spec
        .topology
        .as_ref()
        .map(|t| t.version.as_str())
        .unwrap_or_default();
    let version_path = path.child("version");
    let (new_version, old_version, parse_errors) = version::parse_update(&version_path, version, old_version);
    outcome.errors.extend(parse_errors);
    if annotations.is_some_and(|a| a.contains_key(UNSAFE_UPDATE_VERSION_ANNOTATION)) {
        outcome.warnings.push(format!(
            "Skipping version validation for Cluster because annotation {UNSAFE_UPDATE_VERSION_ANNOTATION:?} is set."
        ));
    } else if let Some(error) =
        version::check_change(&version_path, version, &new_version, &old_version, old, source)
    {
        outcome.errors.push(error);
    }
    let old_key = class_key(old);
    if old_key != (class_namespace.clone(), class_name.clone()) {
        let old_path = format!("{}/{}", old_key.0, old_key.1);
        match (class_of(old, source), class) {
            (Ok(old_class), Some(new_class)) => {
                outcome.errors.extend(check_classes_compatible(&old_class.class, new_class));
            }
            (Ok(_), None) => outcome.errors.push(FieldError::invalid(
                &FieldPath::new(""),
                "",
                "could not compare ClusterClass compatibility: desired ClusterClass must not be nil",
            )),
            (Err(problem), _) => outcome.errors.push(FieldError::forbidden(
                &path.child("class"),
                format!(
                    "valid ClusterClass with name {old_path:?} could not be retrieved, change from class {old_path:?} to class \"{class_namespace}/{class_name}\" cannot be validated. Error: {}",
                    problem.describe(&old_key.1)
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
    if let Some(workers) = &topology.workers {
        for md in &workers.machine_deployments {
            check(
                &md.metadata,
                path.children(&["workers", "machineDeployments"])
                    .key(&md.name)
                    .child("metadata"),
            );
        }
        for mp in &workers.machine_pools {
            check(
                &mp.metadata,
                path.children(&["workers", "machinePools"])
                    .key(&mp.name)
                    .child("metadata"),
            );
        }
    }
}

fn validate_concurrency(cluster: &Cluster, errors: &mut FieldErrors) {
    let annotations = cluster.metadata.annotations.as_ref();
    let Some(value) = annotations.and_then(|a| a.get(TOPOLOGY_UPGRADE_CONCURRENCY_ANNOTATION)) else {
        return;
    };
    let path = FieldPath::new("metadata")
        .child("annotations")
        .key(TOPOLOGY_UPGRADE_CONCURRENCY_ANNOTATION);
    match value.parse::<i64>() {
        Err(err) => errors.push(FieldError::invalid(
            &path,
            value.as_str(),
            format!("could not parse the value of the annotation: strconv.Atoi: parsing {value:?}: {err}"),
        )),
        Ok(n) if n < 1 => errors.push(FieldError::invalid(
            &path,
            value.as_str(),
            "value cannot be less than 1",
        )),
        Ok(_) => {}
    }
}

/// MachineDeployment and MachinePool topologies: valid unique names, classes the ClusterClass has.
fn validate_workers(cluster: &Cluster, class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let Some(workers) = cluster.spec.topology.as_ref().and_then(|t| t.workers.as_ref()) else {
        return errors;
    };
    let class_name = class.metadata.name.as_deref().unwrap_or_default();
    let md_classes: BTreeSet<&str> = class
        .spec
        .workers
        .machine_deployments
        .iter()
        .map(|c| c.class.as_str())
        .collect();
    let mp_classes: BTreeSet<&str> = class
        .spec
        .workers
        .machine_pools
        .iter()
        .map(|c| c.class.as_str())
        .collect();
    let pools = workers
        .machine_pools
        .iter()
        .map(|p| (p.name.as_str(), p.class.as_str()));
    let deployments = workers
        .machine_deployments
        .iter()
        .map(|d| (d.name.as_str(), d.class.as_str()));
    for (field, kind, known, entries) in [
        (
            "machineDeployments",
            "MachineDeployment",
            &md_classes,
            deployments.collect::<Vec<_>>(),
        ),
        (
            "machinePools",
            "MachinePool",
            &mp_classes,
            pools.collect::<Vec<_>>(),
        ),
    ] {
        let mut names = BTreeSet::new();
        for (i, (name, worker_class)) in entries.into_iter().enumerate() {
            let at = FieldPath::new("spec")
                .children(&["topology", "workers", field])
                .index(i);
            for problem in label_value_problems(name) {
                errors.push(FieldError::invalid(
                    &at.child("name"),
                    name,
                    format!("must be a valid label value {problem}"),
                ));
            }
            if !known.contains(&worker_class) {
                errors.push(FieldError::invalid(
                    &at.child("class"),
                    worker_class,
                    format!("{kind}Class with name {worker_class:?} does not exist in ClusterClass {class_name:?}"),
                ));
            }
            if name.is_empty() {
                errors.push(FieldError::required(&at.child("name"), "name must not be empty"));
                continue;
            }
            if !names.insert(name) {
                errors.push(FieldError::invalid(
                    &at.child("name"),
                    name,
                    format!("name must be unique. {kind} with name {name:?} is defined more than once"),
                ));
            }
        }
    }
    errors
}

fn validate_health_checks(cluster: &Cluster, class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let Some(topology) = &cluster.spec.topology else {
        return errors;
    };
    let namespace = cluster.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(check) = &topology.control_plane.machine_health_check {
        let path = FieldPath::new("spec").children(&["topology", "controlPlane", "machineHealthCheck"]);
        if check.class != MachineHealthCheckClass::default()
            && class.spec.control_plane.machine_infrastructure.is_none()
        {
            errors.push(FieldError::forbidden(
                &path,
                "can be set only if spec.controlPlane.machineInfrastructure is set in ClusterClass",
            ));
        }
        validate_health_check(
            namespace,
            check,
            class.spec.control_plane.machine_health_check.as_ref(),
            &path,
            &mut errors,
        );
    }
    for md in topology.workers.iter().flat_map(|w| &w.machine_deployments) {
        let Some(check) = &md.machine_health_check else {
            continue;
        };
        let path = FieldPath::new("spec")
            .children(&["topology", "workers", "machineDeployments"])
            .key(&md.name)
            .child("machineHealthCheck");
        let md_class = class
            .spec
            .workers
            .machine_deployments
            .iter()
            .find(|c| c.class == md.class);
        if let Some(md_class) = md_class {
            validate_health_check(
                namespace,
                check,
                md_class.machine_health_check.as_ref(),
                &path,
                &mut errors,
            );
        } else {
            errors.extend(crate::admission::health_check::validate(
                &check.class,
                namespace,
                &path,
            ));
        }
    }
    errors
}

fn validate_health_check(
    namespace: &str,
    check: &MachineHealthCheckTopology,
    from_class: Option<&MachineHealthCheckClass>,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let set_here = check.class != MachineHealthCheckClass::default();
    if set_here {
        errors.extend(crate::admission::health_check::validate(
            &check.class,
            namespace,
            path,
        ));
    }
    if check.enable == Some(true) && !set_here && from_class.is_none() {
        errors.push(FieldError::forbidden(
            &path.child("enable"),
            "cannot be set to true as MachineHealthCheck definition is not available in the Cluster topology or the ClusterClass",
        ));
    }
}

/// Replicas must not be set on a MachineDeployment the cluster autoscaler manages.
pub fn validate_autoscaler(cluster: &Cluster, class: Option<&ClusterClass>) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let Some(workers) = cluster.spec.topology.as_ref().and_then(|t| t.workers.as_ref()) else {
        return errors;
    };
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
            .any(|c| c.class == md.class && has_autoscaler(&c.template.metadata));
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
