//! Defaulting and validating a Cluster's variables: the Cluster-level list and the overrides of
//! the control plane, each MachineDeployment and each MachinePool.

use crate::api::{Cluster, ClusterVariable, VariableOverrides};
use std::collections::HashMap;

use crate::field::{FieldErrors, FieldPath};
use crate::store::ClassEntry;
use crate::variables::cel::with_object_budget;
use crate::variables::limits::variable_count_error;
use crate::variables::CompiledVariables;

/// Defaults every variable list of `cluster` in place, then validates them (transition rules
/// against `old`'s lists of the same place).
pub fn default_and_validate(cluster: &mut Cluster, old: Option<&Cluster>, entry: &ClassEntry) -> FieldErrors {
    let compiled = entry.variables();
    let mut errors = count_errors(cluster);
    if !errors.is_empty() {
        return errors;
    }
    let Some(topology) = cluster.spec.topology.as_mut() else {
        return errors;
    };
    let topology_path = FieldPath::new("spec").child("topology");
    let values = std::mem::take(&mut topology.variables);
    match compiled.default_cluster_variables(values, &topology_path.child("variables")) {
        Ok(defaulted) => topology.variables = defaulted,
        Err(e) => errors.extend(e),
    }
    for (path, overrides) in override_lists(topology) {
        default_overrides(compiled, overrides, &path, &mut errors);
    }
    if !errors.is_empty() {
        return errors;
    }
    validate(cluster, old, compiled)
}

/// Validates every variable list of `cluster` against the class's definitions; the CEL rules of
/// all its values share one evaluation budget, as the API server charges one object's rules.
pub fn validate(cluster: &Cluster, old: Option<&Cluster>, compiled: &CompiledVariables) -> FieldErrors {
    let errors = count_errors(cluster);
    if !errors.is_empty() {
        return errors;
    }
    with_object_budget(|| validate_lists(cluster, old, compiled))
}

/// A variable list longer than the limit is refused before any of it is looked at.
fn count_errors(cluster: &Cluster) -> FieldErrors {
    let Some(topology) = &cluster.spec.topology else {
        return FieldErrors::new();
    };
    let cluster_list = (
        FieldPath::new("spec").children(&["topology", "variables"]),
        topology.variables.as_slice(),
    );
    std::iter::once(cluster_list)
        .chain(override_values(cluster))
        .filter_map(|(path, values)| variable_count_error(values.len(), &path))
        .collect()
}

fn validate_lists(cluster: &Cluster, old: Option<&Cluster>, compiled: &CompiledVariables) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let Some(topology) = &cluster.spec.topology else {
        return errors;
    };
    let old_topology = old.and_then(|o| o.spec.topology.as_ref());
    let path = FieldPath::new("spec").children(&["topology", "variables"]);
    let old_values = old_topology.map(|t| t.variables.as_slice());
    errors.extend(compiled.validate_cluster_variables(&topology.variables, old_values, &path));
    let old_lists: HashMap<FieldPath, &[ClusterVariable]> = old
        .map(|o| override_values(o))
        .unwrap_or_default()
        .into_iter()
        .collect();
    for (path, values) in override_values(cluster) {
        if values.is_empty() {
            continue;
        }
        let old_values = old_lists.get(&path).copied();
        errors.extend(compiled.validate_override_variables(values, old_values, &path));
    }
    errors
}

fn default_overrides(
    compiled: &CompiledVariables,
    overrides: &mut VariableOverrides,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    if overrides.overrides.is_empty() {
        return;
    }
    let values = std::mem::take(&mut overrides.overrides);
    match compiled.default_override_variables(values, path) {
        Ok(defaulted) => overrides.overrides = defaulted,
        Err(e) => errors.extend(e),
    }
}

/// The override lists of a topology with their field paths, mutable.
fn override_lists(topology: &mut crate::api::Topology) -> Vec<(FieldPath, &mut VariableOverrides)> {
    let base = FieldPath::new("spec").child("topology");
    let mut lists = Vec::new();
    if let Some(overrides) = topology.control_plane.variables.as_mut() {
        lists.push((
            base.children(&["controlPlane", "variables", "overrides"]),
            overrides,
        ));
    }
    if let Some(workers) = topology.workers.as_mut() {
        for md in &mut workers.machine_deployments {
            let path = base
                .children(&["workers", "machineDeployments"])
                .key(&md.name)
                .children(&["variables", "overrides"]);
            if let Some(overrides) = md.variables.as_mut() {
                lists.push((path, overrides));
            }
        }
        for mp in &mut workers.machine_pools {
            let path = base
                .children(&["workers", "machinePools"])
                .key(&mp.name)
                .children(&["variables", "overrides"]);
            if let Some(overrides) = mp.variables.as_mut() {
                lists.push((path, overrides));
            }
        }
    }
    lists
}

/// The override lists of a Cluster with their field paths.
fn override_values(cluster: &Cluster) -> Vec<(FieldPath, &[ClusterVariable])> {
    let Some(topology) = &cluster.spec.topology else {
        return Vec::new();
    };
    let base = FieldPath::new("spec").child("topology");
    let mut lists = Vec::new();
    if let Some(overrides) = &topology.control_plane.variables {
        lists.push((
            base.children(&["controlPlane", "variables", "overrides"]),
            overrides.overrides.as_slice(),
        ));
    }
    if let Some(workers) = &topology.workers {
        for md in &workers.machine_deployments {
            if let Some(overrides) = &md.variables {
                let path = base
                    .children(&["workers", "machineDeployments"])
                    .key(&md.name)
                    .children(&["variables", "overrides"]);
                lists.push((path, overrides.overrides.as_slice()));
            }
        }
        for mp in &workers.machine_pools {
            if let Some(overrides) = &mp.variables {
                let path = base
                    .children(&["workers", "machinePools"])
                    .key(&mp.name)
                    .children(&["variables", "overrides"]);
                lists.push((path, overrides.overrides.as_slice()));
            }
        }
    }
    lists
}
