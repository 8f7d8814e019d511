//! What the Clusters using a ClusterClass need from it: its worker classes, its health checks,
//! its variables (values they set must stay valid), and its existence.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::api::labels::{AUTOSCALER_MAX_SIZE_ANNOTATION, AUTOSCALER_MIN_SIZE_ANNOTATION};
use crate::api::{Cluster, ClusterClass, ClusterClassVariable, ClusterVariable};
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::store::ObjectSource;
use crate::variables::{status_variables, CompiledVariables};

/// How many Clusters a denial names before it says "...".
const MAX_NAMED_CLUSTERS: usize = 3;

/// Errors of an update that would break Clusters using `old`.
pub fn validate_update(old: &ClusterClass, new: &ClusterClass, source: &dyn ObjectSource) -> FieldErrors {
    let namespace = old.metadata.namespace.as_deref().unwrap_or_default();
    let name = old.metadata.name.as_deref().unwrap_or_default();
    let clusters = source.clusters_using_class(namespace, name);
    let mut errors = FieldErrors::new();
    if clusters.is_empty() {
        return errors;
    }
    errors.extend(super::versions::validate_used(&clusters, new));
    removed_worker_classes(&clusters, old, new, &mut errors);
    removed_health_checks(&clusters, old, new, &mut errors);
    // Only autoscaler annotations on the class's templates can make a Cluster's replicas invalid
    // here; those on the Cluster itself were checked when the Cluster was admitted.
    let autoscaled = new.spec.workers.machine_deployments.iter().any(|c| {
        let annotations = &c.metadata.annotations;
        annotations.contains_key(AUTOSCALER_MIN_SIZE_ANNOTATION)
            || annotations.contains_key(AUTOSCALER_MAX_SIZE_ANNOTATION)
    });
    if autoscaled {
        for cluster in &clusters {
            errors.extend(crate::admission::cluster::validate_autoscaler(cluster, Some(new)));
        }
    }
    if old.spec.variables != new.spec.variables {
        variables_still_valid(&clusters, old, new, &mut errors);
    }
    errors
}

/// Deleting a class is refused while Clusters use it, naming up to three of them.
pub fn validate_delete(old: &ClusterClass, source: &dyn ObjectSource) -> FieldErrors {
    let namespace = old.metadata.namespace.as_deref().unwrap_or_default();
    let name = old.metadata.name.as_deref().unwrap_or_default();
    let clusters = source.clusters_using_class(namespace, name);
    if clusters.is_empty() {
        return FieldErrors::new();
    }
    FieldError::forbidden(
        &FieldPath::root(),
        format!(
            "ClusterClass cannot be deleted because it is used by Cluster(s): {}",
            name_list(&clusters)
        ),
    )
    .into()
}

fn removed_worker_classes(
    clusters: &[Arc<Cluster>],
    old: &ClusterClass,
    new: &ClusterClass,
    errors: &mut FieldErrors,
) {
    let (old_workers, new_workers) = (&old.spec.workers, &new.spec.workers);
    let removed_md: BTreeSet<&str> = old_workers
        .machine_deployment_classes()
        .difference(&new_workers.machine_deployment_classes())
        .copied()
        .collect();
    let removed_mp: BTreeSet<&str> = old_workers
        .machine_pool_classes()
        .difference(&new_workers.machine_pool_classes())
        .copied()
        .collect();
    for cluster in clusters {
        let workers = &cluster.spec.topology.workers;
        let cluster_name = cluster.metadata.name.as_deref().unwrap_or_default();
        for md in workers
            .machine_deployments
            .iter()
            .filter(|md| removed_md.contains(md.class.as_str()))
        {
            errors.push(FieldError::forbidden(
                &FieldPath::new("spec").children(&["workers", "machineDeployments"]),
                format!("MachineDeploymentClass {:?} cannot be deleted because it is used by Cluster {cluster_name:?}", md.class),
            ));
        }
        for mp in workers
            .machine_pools
            .iter()
            .filter(|mp| removed_mp.contains(mp.class.as_str()))
        {
            errors.push(FieldError::forbidden(
                &FieldPath::new("spec").children(&["workers", "machinePools"]),
                format!(
                    "MachinePoolClass {:?} cannot be deleted because it is used by Cluster {cluster_name:?}",
                    mp.class
                ),
            ));
        }
    }
}

/// A class health check that Clusters enable without their own definition must stay.
fn removed_health_checks(
    clusters: &[Arc<Cluster>],
    old: &ClusterClass,
    new: &ClusterClass,
    errors: &mut FieldErrors,
) {
    let relies =
        |check: &crate::api::MachineHealthCheckTopology| check.enabled == Some(true) && !check.is_defined();
    if !old.spec.control_plane.health_check.is_unset() && new.spec.control_plane.health_check.is_unset() {
        let users: Vec<&str> = clusters
            .iter()
            .filter(|c| relies(&c.spec.topology.control_plane.health_check))
            .map(|c| c.metadata.name.as_deref().unwrap_or_default())
            .collect();
        if !users.is_empty() {
            errors.push(FieldError::forbidden(
                &FieldPath::new("spec").children(&["controlPlane", "healthCheck"]),
                format!(
                    "healthCheck cannot be deleted because it is used by Cluster(s) {:?}",
                    users.join(",")
                ),
            ));
        }
    }
    for class in &new.spec.workers.machine_deployments {
        let Some(old_class) = old
            .spec
            .workers
            .machine_deployments
            .iter()
            .find(|c| c.class == class.class)
        else {
            continue;
        };
        if old_class.health_check.is_unset() || !class.health_check.is_unset() {
            continue;
        }
        let users: Vec<&str> = clusters
            .iter()
            .filter(|c| {
                c.spec
                    .topology
                    .workers
                    .machine_deployments
                    .iter()
                    .any(|md| md.class == class.class && relies(&md.health_check))
            })
            .map(|c| c.metadata.name.as_deref().unwrap_or_default())
            .collect();
        if !users.is_empty() {
            errors.push(FieldError::forbidden(
                &FieldPath::new("spec")
                    .children(&["workers", "machineDeployments"])
                    .key(&class.class)
                    .child("healthCheck"),
                format!(
                    "healthCheck cannot be deleted because it is used by Cluster(s) {:?}",
                    users.join(",")
                ),
            ));
        }
    }
}

/// Variables the Clusters set must not be removed, and values must stay valid under the new
/// schemas: the denial names the Clusters that block the change.
fn variables_still_valid(
    clusters: &[Arc<Cluster>],
    old: &ClusterClass,
    new: &ClusterClass,
    errors: &mut FieldErrors,
) {
    let kept: BTreeSet<&str> = new.spec.variables.iter().map(|v| v.name.as_str()).collect();
    for removed in old
        .spec
        .variables
        .iter()
        .filter(|v| !kept.contains(v.name.as_str()))
    {
        let users: Vec<Arc<Cluster>> = clusters
            .iter()
            .filter(|c| sets_variable(c, &removed.name))
            .cloned()
            .collect();
        if !users.is_empty() {
            errors.push(FieldError::forbidden(
                &FieldPath::new("spec").child("variables").key(&removed.name),
                format!(
                    "variable {:?} cannot be removed because it is used by Cluster(s): {}",
                    removed.name,
                    name_list(&users)
                ),
            ));
        }
    }
    let mut old_by_name = std::collections::HashMap::with_capacity(old.spec.variables.len());
    for variable in &old.spec.variables {
        old_by_name.entry(variable.name.as_str()).or_insert(variable);
    }
    let changed: Vec<&ClusterClassVariable> = new
        .spec
        .variables
        .iter()
        .filter(|v| old_by_name.get(v.name.as_str()) != Some(v))
        .collect();
    if changed.is_empty() {
        return;
    }
    let changed_definitions: Vec<ClusterClassVariable> = changed.iter().map(|v| (*v).clone()).collect();
    let compiled = CompiledVariables::compile(&status_variables(&changed_definitions, &[]));
    // Where a Cluster's values are, for the check; the denial names the class's fields instead.
    let values_path = FieldPath::new("spec").children(&["topology", "variables"]);
    for variable in changed {
        let blocking: Vec<Arc<Cluster>> = clusters
            .iter()
            .filter(|c| {
                sets_variable(c, &variable.name)
                    && !value_still_valid(c, &variable.name, &compiled, &values_path)
            })
            .cloned()
            .collect();
        if !blocking.is_empty() {
            errors.push(FieldError::forbidden(
                &FieldPath::new("spec")
                    .child("variables")
                    .key(&variable.name)
                    .child("schema"),
                format!(
                    "the new schema of variable {:?} does not accept the values of Cluster(s): {}",
                    variable.name,
                    name_list(&blocking)
                ),
            ));
        }
    }
}

/// The variable lists of a Cluster: its own, then each override list.
fn variable_lists(cluster: &Cluster) -> impl Iterator<Item = &Vec<ClusterVariable>> {
    let topology = &cluster.spec.topology;
    let workers = &topology.workers;
    std::iter::once(&topology.variables)
        .chain(std::iter::once(&topology.control_plane.variables.overrides))
        .chain(
            workers
                .machine_deployments
                .iter()
                .map(|md| &md.variables.overrides),
        )
        .chain(workers.machine_pools.iter().map(|mp| &mp.variables.overrides))
}

/// Whether the Cluster sets the variable, at the Cluster level or in an override.
fn sets_variable(cluster: &Cluster, name: &str) -> bool {
    variable_lists(cluster).flatten().any(|v| v.name == name)
}

/// Whether every value the Cluster sets for `name` passes the new definitions.
fn value_still_valid(cluster: &Cluster, name: &str, compiled: &CompiledVariables, path: &FieldPath) -> bool {
    variable_lists(cluster).all(|values| {
        if !values.iter().any(|v| v.name == name) {
            return true;
        }
        let mine: Vec<_> = values.iter().filter(|v| v.name == name).cloned().collect();
        compiled.validate_override_variables(&mine, None, path).is_empty()
    })
}

/// `ns/a, ns/b, ns/c, ...`: at most three names.
fn name_list(clusters: &[Arc<Cluster>]) -> String {
    let mut names: Vec<String> = clusters
        .iter()
        .take(MAX_NAMED_CLUSTERS)
        .map(|c| {
            format!(
                "{}/{}",
                c.metadata.namespace.as_deref().unwrap_or_default(),
                c.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect();
    if clusters.len() > MAX_NAMED_CLUSTERS {
        names.push("...".to_owned());
    }
    names.join(", ")
}
