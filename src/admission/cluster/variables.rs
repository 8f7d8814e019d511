//! Defaulting and validating a Cluster's variables: the Cluster-level list and the overrides of
//! the control plane, each MachineDeployment and each MachinePool.

use crate::api::{Cluster, ClusterVariable, VariableOverrides};
use std::collections::HashMap;

use super::patch::{added_list, Place, Recorder};
use crate::field::{FieldErrors, FieldPath};
use crate::store::ClassEntry;
use crate::variables::cel::with_object_budget;
use crate::variables::limits::variable_count_error;
use crate::variables::{CompiledVariables, DefaultsPatch};

/// Defaults every variable list of `cluster` in place, recording what it sets in `patch`, then
/// validates them (transition rules against `old`'s lists of the same place).
pub(super) fn default_and_validate(
    cluster: &mut Cluster,
    old: Option<&Cluster>,
    entry: &ClassEntry,
    patch: &mut Recorder,
) -> FieldErrors {
    let compiled = entry.variables();
    let mut errors = count_errors(cluster);
    if !errors.is_empty() {
        return errors;
    }
    // A value defaulted for one of conflicting definitions has a definitionFrom, which the hub
    // Cluster keeps in its V1BETA1_FIELDS annotation: the patch sets that too.
    let metadata_before = compiled.has_conflicts().then(|| metadata_json(cluster));
    let topology = &mut cluster.spec.topology;
    let topology_path = FieldPath::new("spec").child("topology");
    let values = std::mem::take(&mut topology.variables);
    let was_empty = values.is_empty();
    let mut recorded = DefaultsPatch {
        pointer: Place::Variables.pointer(&[]),
        operations: Vec::new(),
    };
    match compiled.default_cluster_variables(values, &topology_path.child("variables"), Some(&mut recorded)) {
        Ok(defaulted) => topology.variables = defaulted,
        Err(e) => errors.extend(e),
    }
    if was_empty {
        let added = added_list(recorded.pointer, recorded.operations);
        patch.record(Place::Variables, added);
    } else {
        patch.record(Place::Variables, recorded.operations);
    }
    for list in override_lists(topology) {
        default_overrides(compiled, list, patch, &mut errors);
    }
    if let Some(before) = metadata_before {
        let changes = json_patch::diff(&before, &metadata_json(cluster));
        patch.record(Place::Metadata, changes.0);
    }
    if !errors.is_empty() {
        return errors;
    }
    validate(cluster, old, compiled)
}

/// `{"metadata": ...}` as `cluster` serialises it (its annotations written from its values).
fn metadata_json(cluster: &Cluster) -> serde_json::Value {
    let metadata = serde_json::to_value(cluster)
        .ok()
        .and_then(|mut c| c.get_mut("metadata").map(serde_json::Value::take));
    serde_json::json!({ "metadata": metadata })
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
    let topology = &cluster.spec.topology;
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
    let topology = &cluster.spec.topology;
    let old_topology = old.map(|o| &o.spec.topology);
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
    list: OverrideList,
    patch: &mut Recorder,
    errors: &mut FieldErrors,
) {
    let overrides = list.overrides;
    if overrides.overrides.is_empty() {
        return;
    }
    let values = std::mem::take(&mut overrides.overrides);
    let mut recorded = DefaultsPatch {
        pointer: list.place.pointer(&["variables", "overrides"]),
        operations: Vec::new(),
    };
    match compiled.default_override_variables(values, &list.path, Some(&mut recorded)) {
        Ok(defaulted) => overrides.overrides = defaulted,
        Err(e) => errors.extend(e),
    }
    patch.record(list.place, recorded.operations);
}

/// An override list of a topology part, mutable, with its field path and its place in a patch.
struct OverrideList<'a> {
    path: FieldPath,
    place: Place,
    overrides: &'a mut VariableOverrides,
}

/// The override lists of a topology, mutable.
fn override_lists(topology: &mut crate::api::Topology) -> Vec<OverrideList<'_>> {
    let base = FieldPath::new("spec").child("topology");
    let mut lists = Vec::new();
    lists.push(OverrideList {
        path: base.children(&["controlPlane", "variables", "overrides"]),
        place: Place::ControlPlane,
        overrides: &mut topology.control_plane.variables,
    });
    let workers = &mut topology.workers;
    for (index, md) in workers.machine_deployments.iter_mut().enumerate() {
        let path = base
            .children(&["workers", "machineDeployments"])
            .key(&md.name)
            .children(&["variables", "overrides"]);
        let place = Place::MachineDeployment(index);
        lists.push(OverrideList {
            path,
            place,
            overrides: &mut md.variables,
        });
    }
    for (index, mp) in workers.machine_pools.iter_mut().enumerate() {
        let path = base
            .children(&["workers", "machinePools"])
            .key(&mp.name)
            .children(&["variables", "overrides"]);
        let place = Place::MachinePool(index);
        lists.push(OverrideList {
            path,
            place,
            overrides: &mut mp.variables,
        });
    }
    lists
}

/// The override lists of a Cluster with their field paths.
fn override_values(cluster: &Cluster) -> Vec<(FieldPath, &[ClusterVariable])> {
    let topology = &cluster.spec.topology;
    let base = FieldPath::new("spec").child("topology");
    let mut lists = Vec::new();
    if !topology.control_plane.variables.is_empty() {
        lists.push((
            base.children(&["controlPlane", "variables", "overrides"]),
            topology.control_plane.variables.overrides.as_slice(),
        ));
    }
    for md in &topology.workers.machine_deployments {
        if !md.variables.is_empty() {
            let path = base
                .children(&["workers", "machineDeployments"])
                .key(&md.name)
                .children(&["variables", "overrides"]);
            lists.push((path, md.variables.overrides.as_slice()));
        }
    }
    for mp in &topology.workers.machine_pools {
        if !mp.variables.is_empty() {
            let path = base
                .children(&["workers", "machinePools"])
                .key(&mp.name)
                .children(&["variables", "overrides"]);
            lists.push((path, mp.variables.overrides.as_slice()));
        }
    }
    lists
}
