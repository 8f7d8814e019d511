//! The topology mutation hooks as the engine speaks them: the GeneratePatches and
//! ValidateTopology requests built from the templates being patched (each with its holder and
//! its scope's variables), and a GeneratePatches answer applied to them. Pure; the call itself
//! goes through [`ExternalPatches`](super::external::ExternalPatches).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::bounded::{apply_merge_patch, Budget, JsonPatch};
use super::inline::PatchItem;
use crate::api::runtime::{
    GeneratePatchesRequest, GeneratePatchesRequestItem, GeneratePatchesResponse, PatchType,
    ValidateTopologyRequest, ValidateTopologyRequestItem, Variable,
};
use crate::api::{describe, ClusterClassStatus, ClusterVariable};
use crate::field::{truncate, MAX_RENDERED_VALUE};

/// The name of the builtin variable, which no Cluster value may shadow.
const BUILTIN: &str = "builtin";

/// What every hook request of one Cluster is made of, besides its templates.
#[derive(Debug, Clone, Copy)]
pub struct HookInputs<'a> {
    /// The Cluster's variable values (`spec.topology.variables`).
    pub values: &'a [ClusterVariable],
    /// `{"cluster": ...}`: the builtin variables every template shares.
    pub builtin: &'a Value,
    /// The ClusterClass's status, whose definitions say which variables a patch is given.
    pub status: Option<&'a ClusterClassStatus>,
}

/// The variables one patch is given.
#[derive(Debug, Clone)]
pub struct Defined<'a> {
    /// Where the patch's definitions come from: its name for an external patch, `inline` for an
    /// inline one. A value whose `definitionFrom` names another source is not for it (seed 003).
    from: String,
    /// The names of the variables with a definition from it.
    names: BTreeSet<&'a str>,
}

/// The variables a patch is given: those with a definition `from` it (its name for an external
/// patch, `inline` for an inline one) in the ClusterClass's status, as Cluster API selects them.
pub fn defined_by<'a>(status: Option<&'a ClusterClassStatus>, from: &str) -> Defined<'a> {
    let names = status
        .map(|status| status.variables.as_slice())
        .unwrap_or_default()
        .iter()
        .filter(|variable| variable.definitions.iter().any(|d| d.from == from))
        .map(|variable| variable.name.as_str())
        .collect();
    Defined {
        from: from.to_owned(),
        names,
    }
}

/// The GeneratePatches request for `items` (their current state), giving the variables in
/// `defined`; each item's uid is its position.
pub fn generate_request(
    items: &[PatchItem],
    inputs: &HookInputs<'_>,
    defined: &Defined<'_>,
    settings: &BTreeMap<String, String>,
) -> GeneratePatchesRequest {
    GeneratePatchesRequest {
        settings: settings.clone(),
        variables: global_variables(inputs, defined),
        items: items
            .iter()
            .enumerate()
            .map(|(index, item)| GeneratePatchesRequestItem {
                uid: uid(index),
                holder_reference: item.holder.clone(),
                object: item.object.clone(),
                variables: item_variables(item, defined),
            })
            .collect(),
        ..GeneratePatchesRequest::default()
    }
}

/// The ValidateTopology request for the patched `items`: a GeneratePatches request without uids.
pub fn validate_request(
    items: &[PatchItem],
    inputs: &HookInputs<'_>,
    defined: &Defined<'_>,
    settings: &BTreeMap<String, String>,
) -> ValidateTopologyRequest {
    ValidateTopologyRequest {
        settings: settings.clone(),
        variables: global_variables(inputs, defined),
        items: items
            .iter()
            .map(|item| ValidateTopologyRequestItem {
                holder_reference: item.holder.clone(),
                object: item.object.clone(),
                variables: item_variables(item, defined),
            })
            .collect(),
        ..ValidateTopologyRequest::default()
    }
}

/// Applies the patches of `response`, in order, to the items of the request it answers, within
/// the bounds of [`bounded`](super::bounded) (one work budget for the whole answer). Only
/// `spec.template.spec` may change (Cluster API keeps nothing else of a patched template, so a
/// change elsewhere would be lost without a word): a patch that changes another field, or leaves
/// no `spec` or no `spec.template.spec`, is an error naming the template and the field. An empty
/// patch changes nothing, as in Cluster API.
pub fn apply_response(items: &mut [PatchItem], response: &GeneratePatchesResponse) -> Result<(), String> {
    let mut budget = Budget::default();
    for patch in &response.items {
        budget
            .charge(1)
            .map_err(|bound| format!("failed to apply patch: {bound}"))?;
        let item = index_of(&patch.uid)
            .and_then(|index| items.get_mut(index))
            .ok_or_else(|| {
                format!(
                    "unable to find corresponding request item for patch with uid {:?}",
                    truncate(patch.uid.clone(), MAX_RENDERED_VALUE)
                )
            })?;
        let template = describe(&item.object);
        let mut patched = match patch.patch_type {
            PatchType::JsonPatch => {
                let operations = JsonPatch::decode(&patch.patch).map_err(|e| {
                    format!("failed to apply patch: error decoding json patch (RFC6902) for {template}: {e}")
                })?;
                if operations.is_empty() {
                    continue;
                }
                // The copy is paid for: applying measures it first.
                let mut patched = item.object.clone();
                operations.apply(&mut patched, &mut budget).map_err(|e| {
                    format!("failed to apply patch: error applying json patch (RFC6902) to {template}: {e}")
                })?;
                patched
            }
            PatchType::JsonMergePatch => {
                if patch.patch.is_empty() || patch.patch == b"{}" {
                    continue;
                }
                let mut patched = item.object.clone();
                apply_merge_patch(&mut patched, &patch.patch, &mut budget).map_err(|e| {
                    format!(
                        "failed to apply patch: error applying json merge patch (RFC7386) to {template}: {e}"
                    )
                })?;
                patched
            }
        };
        let missing =
            |field: &str| format!("failed to apply patch to template: missing field {field:?} in {template}");
        let spec = patched.get_mut("spec").map(Value::take);
        let spec = match spec {
            Some(spec) if spec.pointer("/template/spec").is_some() => spec,
            Some(_) => return Err(missing("spec.template.spec")),
            None => return Err(missing("spec")),
        };
        if let Some(field) = change_outside_template_spec(&item.object, &patched, &spec) {
            return Err(format!(
                "failed to apply patch to template: only spec.template.spec may change, not {field:?}, in {template}"
            ));
        }
        let message = missing("spec");
        item.object
            .as_object_mut()
            .ok_or(message)?
            .insert("spec".to_owned(), spec);
    }
    Ok(())
}

/// The first field of `before` that a patch changed outside `spec.template.spec` (`patched` is
/// the patched template without its `spec`, which is `spec`), as a dotted path; `None` when there
/// is none.
fn change_outside_template_spec(before: &Value, patched: &Value, spec: &Value) -> Option<String> {
    let differs = |prefix: &str, old: &Value, new: &Value, skip: &str| {
        let (old, new) = (old.as_object(), new.as_object());
        let keys = old
            .into_iter()
            .chain(new)
            .flat_map(|map| map.keys())
            .filter(|key| key.as_str() != skip);
        keys.into_iter()
            .find(|key| old.and_then(|m| m.get(*key)) != new.and_then(|m| m.get(*key)))
            .map(|key| format!("{prefix}{key}"))
    };
    differs("", before, patched, "spec")
        .or_else(|| differs("spec.", &before["spec"], spec, "template"))
        .or_else(|| {
            differs(
                "spec.template.",
                &before["spec"]["template"],
                &spec["template"],
                "spec",
            )
        })
}

/// What every request item's uid starts with; its position follows.
const UID_PREFIX: &str = "00000000-0000-4000-8000-";

/// The uid of the request item at `index`: stable, so that a plan does not depend on chance.
fn uid(index: usize) -> String {
    format!("{UID_PREFIX}{index:012}")
}

/// The position of the request item whose uid is `uid`, if it is one of ours.
fn index_of(uid: &str) -> Option<usize> {
    let digits = uid.strip_prefix(UID_PREFIX)?;
    (digits.len() == 12 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The Cluster's values of the `defined` variables, then `builtin` with the Cluster's builtins.
fn global_variables(inputs: &HookInputs<'_>, defined: &Defined<'_>) -> Vec<Variable> {
    let mut variables = selected(inputs.values, defined);
    variables.push(Variable {
        name: BUILTIN.to_owned(),
        value: inputs.builtin.clone(),
    });
    variables
}

/// An item's own variables: its scope's overrides of the `defined` variables, then `builtin`
/// with the builtins of its control plane, MachineDeployment or MachinePool (none for the
/// infrastructure cluster).
fn item_variables(item: &PatchItem, defined: &Defined<'_>) -> Vec<Variable> {
    let mut builtin = item.variables.get(BUILTIN).cloned().unwrap_or_default();
    if let Some(scopes) = builtin.as_object_mut() {
        scopes.remove("cluster");
    }
    let Some(scopes) = builtin.as_object().filter(|scopes| !scopes.is_empty()) else {
        return Vec::new();
    };
    let mut variables = selected(&item.overrides, defined);
    variables.push(Variable {
        name: BUILTIN.to_owned(),
        value: Value::Object(scopes.clone()),
    });
    variables
}

/// The values of `defined` variables meant for its patch: with no `definitionFrom`, or one naming
/// the patch's definitions.
fn selected(values: &[ClusterVariable], defined: &Defined<'_>) -> Vec<Variable> {
    values
        .iter()
        .filter(|value| value.name != BUILTIN && defined.names.contains(value.name.as_str()))
        .filter(|value| value.definition_from.is_empty() || value.definition_from == defined.from)
        .map(|value| Variable {
            name: value.name.clone(),
            value: value.value.clone(),
        })
        .collect()
}

#[cfg(test)]
#[path = "hook_requests_tests.rs"]
mod tests;
