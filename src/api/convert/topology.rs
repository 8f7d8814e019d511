//! Cluster `spec.topology`: `class`/`classNamespace` ↔ `classRef`, the control plane's and each
//! machineDeployment's and machinePool's health check, timeouts and strategy, and the v1beta1
//! fields v1beta2 dropped (`rolloutAfter`, `definitionFrom`), which are kept aside.

use serde_json::Value;

use super::data::{token, Kept};
use super::value::{child, each_at, get, get_mut, is_empty, put, remove, str_of, take, Move, Obj};
use super::{health_check, rollout, ConvertError, Ctx};

const BASE: &str = "/spec/topology";

/// The ClusterClass's name and namespace: v1beta1's `class` and `classNamespace`, the hub's
/// `classRef` (each only when set).
pub(super) const CLASS: [Move; 2] = [
    Move {
        spoke: &["class"],
        hub: &["classRef", "name"],
    },
    Move {
        spoke: &["classNamespace"],
        hub: &["classRef", "namespace"],
    },
];

/// The places below `spec.topology` whose values the conversion leaves as they are, where they
/// are (`*` is any list index): the version and every variable list. (A variable's
/// `definitionFrom`, which the hub has no place for, is kept in an annotation instead.)
pub(super) const CARRIED: [&[&str]; 5] = [
    &["version"],
    &["variables"],
    &["controlPlane", "variables", "overrides"],
    &["workers", "machineDeployments", "*", "variables", "overrides"],
    &["workers", "machinePools", "*", "variables", "overrides"],
];

/// v1beta1 `spec.topology` → v1beta2, keeping v1beta1-only fields in `kept`.
pub(super) fn to_hub(topology: &mut Obj, ctx: &Ctx, kept: &mut Kept) -> Result<(), ConvertError> {
    for class in CLASS {
        if let Some(value) = take(topology, class.spoke).filter(|v| !is_empty(v)) {
            put(topology, class.hub, value);
        }
    }
    if let Some(after) = remove(topology, "rolloutAfter").filter(|a| !a.is_null()) {
        if !after.as_str().is_some_and(super::kept::is_date_time) {
            let field = "spec.topology.rolloutAfter";
            let shown = after
                .as_str()
                .map_or_else(|| after.to_string(), |t| format!("{t:?}"));
            let message =
                format!("Invalid value: {shown}: {field} in body must be of type date-time: {shown}");
            return Err(ctx.invalid(field, message));
        }
        kept.keep(format!("{BASE}/rolloutAfter"), after, &[]);
    }
    keep_definition_from(topology, "variables", &format!("{BASE}/variables"), &[], kept);

    let field = "spec.topology.controlPlane";
    if let Some(control_plane) = child(topology, "controlPlane") {
        health_check::to_hub(control_plane, ctx, field)?;
        rollout::timeouts_to_hub(control_plane, ctx, field)?;
        let base = format!("{BASE}/controlPlane/variables");
        if let Some(variables) = child(control_plane, "variables") {
            keep_definition_from(variables, "overrides", &format!("{base}/overrides"), &[], kept);
        }
    }

    let Some(workers) = child(topology, "workers") else {
        return Ok(());
    };
    for (list, is_deployment) in [("machineDeployments", true), ("machinePools", false)] {
        let mut index = 0;
        each_at(workers, &[list], |machines| {
            let field = format!("spec.topology.workers.{list}[{index}]");
            let base = format!("{BASE}/workers/{list}/{index}");
            index += 1;
            if is_deployment {
                rollout::strategy_to_hub(machines, &rollout::CLASS_REMEDIATION);
                health_check::to_hub(machines, ctx, &field)?;
                if get(machines, "failureDomain").is_some_and(is_empty) {
                    remove(machines, "failureDomain");
                }
            }
            rollout::timeouts_to_hub(machines, ctx, &field)?;
            let guard = [(format!("{base}/name"), str_of(machines, "name").to_owned())];
            if let Some(variables) = child(machines, "variables") {
                keep_definition_from(
                    variables,
                    "overrides",
                    &format!("{base}/variables/overrides"),
                    &guard,
                    kept,
                );
            }
            Ok::<_, ConvertError>(())
        })?;
    }
    Ok(())
}

/// Moves each `definitionFrom` of the variables under `obj[key]` into `kept`.
fn keep_definition_from(obj: &mut Obj, key: &str, base: &str, guard: &[(String, String)], kept: &mut Kept) {
    let Some(variables) = get_mut(obj, key).and_then(Value::as_array_mut) else {
        return;
    };
    for (i, variable) in variables.iter_mut().enumerate() {
        let Some(variable) = variable.as_object_mut() else {
            continue;
        };
        let Some(from) = remove(variable, "definitionFrom").filter(|f| !is_empty(f)) else {
            continue;
        };
        let mut guard = guard.to_vec();
        guard.push((format!("{base}/{i}/name"), str_of(variable, "name").to_owned()));
        kept.keep(format!("{base}/{i}/{}", token("definitionFrom")), from, &guard);
    }
}

/// v1beta2 `spec.topology` → v1beta1, remediation templates in `namespace`.
pub(super) fn from_hub(topology: &mut Obj, namespace: &str) {
    // `class` is written even when empty: the v1beta1 field has no omitempty.
    let [class_name, class_namespace] = CLASS;
    let name = take(topology, class_name.hub).unwrap_or(Value::String(String::new()));
    let in_namespace = take(topology, class_namespace.hub);
    put(topology, class_name.spoke, name);
    if let Some(in_namespace) = in_namespace.filter(|n| !is_empty(n)) {
        put(topology, class_namespace.spoke, in_namespace);
    }
    if let Some(control_plane) = child(topology, "controlPlane") {
        health_check::from_hub(control_plane, namespace);
        rollout::timeouts_from_hub(control_plane);
    }
    let Some(workers) = child(topology, "workers") else {
        return;
    };
    for (list, is_deployment) in [("machineDeployments", true), ("machinePools", false)] {
        let _ = each_at(workers, &[list], |machines| {
            if is_deployment {
                rollout::strategy_from_hub(machines, &rollout::CLASS_REMEDIATION);
                health_check::from_hub(machines, namespace);
            }
            rollout::timeouts_from_hub(machines);
            Ok::<_, ()>(())
        });
    }
}
