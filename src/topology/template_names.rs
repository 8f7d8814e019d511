//! Names of the template clones a topology generates (the control plane's infrastructure machine
//! template, each MachineDeployment's bootstrap and infrastructure templates), and the builtins
//! that carry them to patches (`builtin.controlPlane.machineTemplate.infrastructureRef.name`,
//! `builtin.machineDeployment.{bootstrap.configRef,infrastructureRef}.name`).
//!
//! A clone keeps its current name while its patched spec is unchanged; otherwise it gets a name
//! derived from its content. When patches read those names, a name and the content it is derived
//! from depend on each other, so they are settled here: a new name comes from the content patched
//! with a placeholder in place of every generated name, and the final content is patched with the
//! real names. A clone whose content changes once another clone of its scope is renamed is renamed
//! too, so what is stored is always what the patches make of the names it is stored under, and the
//! next plan keeps every name. Classes whose patches do not read the names never come here.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::current::Current;
use super::error::TopologyError;
use super::names::{content_suffix, object_name, placeholder};
use crate::patches::inline::PatchItem;

/// Where a generated name goes among a scope's variables.
pub(super) type BuiltinPath = &'static [&'static str];

/// `builtin.controlPlane.machineTemplate.infrastructureRef.name`.
pub(super) const CONTROL_PLANE_MACHINE: BuiltinPath =
    &["builtin", "controlPlane", "machineTemplate", "infrastructureRef", "name"];
/// `builtin.machineDeployment.bootstrap.configRef.name`.
pub(super) const DEPLOYMENT_BOOTSTRAP: BuiltinPath = &["builtin", "machineDeployment", "bootstrap", "configRef", "name"];
/// `builtin.machineDeployment.infrastructureRef.name`.
pub(super) const DEPLOYMENT_INFRASTRUCTURE: BuiltinPath = &["builtin", "machineDeployment", "infrastructureRef", "name"];

/// One template clone whose name is derived from its content.
#[derive(Debug, Clone)]
pub(super) struct NameSlot<'a> {
    /// The patch item of its template.
    pub(super) item: usize,
    /// Its builtin.
    pub(super) path: BuiltinPath,
    /// The start of a new name (`{cluster}` or `{cluster}-{topology}`).
    pub(super) prefix: String,
    /// The clone the current object references, when it exists: its name and spec.
    pub(super) current: Option<(&'a str, &'a Value)>,
}

impl<'a> NameSlot<'a> {
    /// A slot for the template of `item`, whose current clone is what `reference` (an object
    /// reference of the current holder, or null) points to in `current`.
    pub(super) fn new(item: usize, path: BuiltinPath, prefix: String, reference: &Value, current: &'a Current) -> Self {
        NameSlot {
            item,
            path,
            prefix,
            current: existing(current, reference),
        }
    }
}

/// The name and spec of the clone `reference` (an object reference, or null) points to in `current`.
fn existing<'a>(current: &'a Current, reference: &Value) -> Option<(&'a str, &'a Value)> {
    let clone = current.find(reference["kind"].as_str()?, reference["name"].as_str()?)?;
    Some((clone["metadata"]["name"].as_str()?, &clone["spec"]))
}

/// `{prefix}-{suffix(seed)}`, or with the current name mixed into the seed when that gives the
/// current name back (the content the seed stands for is the same, the clone's is not).
fn fresh(prefix: &str, seed: &str, current: &str) -> String {
    let name = object_name(prefix, seed);
    if name == current {
        object_name(prefix, &format!("{seed}/{current}"))
    } else {
        name
    }
}

/// The patch items that share one scope's variables (a worker's two templates, or the control
/// plane and its machine template), and the generated names they see.
#[derive(Debug, Clone)]
pub(super) struct NamedScope<'a> {
    /// Items sharing the scope's variables.
    pub(super) items: Vec<usize>,
    /// The scope's generated names.
    pub(super) slots: Vec<NameSlot<'a>>,
}

/// The name of a clone with `spec`, patched without generated-name builtins: the current clone's
/// (what `reference` points to in `current`) while its spec is the same, else `{prefix}-{suffix}`
/// from the content.
pub(super) fn clone_name(current: &Current, reference: &Value, prefix: &str, spec: &Value) -> String {
    match existing(current, reference) {
        Some((name, current_spec)) if current_spec == spec => name.to_owned(),
        Some((name, _)) => fresh(prefix, &content_suffix(spec), name),
        None => object_name(prefix, &content_suffix(spec)),
    }
}

/// Runs the patches over `items`, each patch run through `run`.
pub(super) type RunPatches<'r> = dyn FnMut(&mut [PatchItem]) -> Result<(), TopologyError> + 'r;

/// Patches `items` through `run` with the generated names settled (see the module comment), and
/// returns each item's clone name (by item index; `None` for items that are not named here).
/// Passes: one with the current names when every clone exists and none changes (a steady plan),
/// else one with placeholders for new names and one or two more with the names settled.
pub(super) fn settle(
    items: &mut [PatchItem],
    scopes: &[NamedScope<'_>],
    run: &mut RunPatches<'_>,
) -> Result<Vec<Option<String>>, TopologyError> {
    let pristine: Vec<Value> = items.iter().map(|item| item.object.clone()).collect();
    let slots: Vec<&NameSlot<'_>> = scopes.iter().flat_map(|scope| &scope.slots).collect();
    let mut patch = |items: &mut [PatchItem], names: &[String]| {
        for (item, object) in items.iter_mut().zip(&pristine) {
            item.object.clone_from(object);
        }
        let mut names = names.iter();
        for scope in scopes {
            let named: Vec<(BuiltinPath, &String)> =
                scope.slots.iter().map(|slot| slot.path).zip(names.by_ref()).collect();
            set_names(items, &scope.items, &named);
        }
        run(items)
    };
    let mut kept: Vec<bool> = slots.iter().map(|slot| slot.current.is_some()).collect();
    // Seeds of new names: the content patched with placeholders, made once a new name is needed.
    let mut seeds: Option<Vec<String>> = None;
    loop {
        if seeds.is_none() && kept.contains(&false) {
            let placeholders: Vec<String> = slots.iter().map(|slot| placeholder(&slot.prefix)).collect();
            patch(items, &placeholders)?;
            seeds = Some(slots.iter().map(|slot| content_suffix(item_spec(items, slot.item))).collect());
        }
        let chosen: Vec<String> = slots
            .iter()
            .enumerate()
            .map(|(i, slot)| {
                let seed = seeds.as_ref().and_then(|seeds| seeds.get(i)).map_or("", String::as_str);
                match slot.current {
                    Some((name, _)) if kept.get(i) == Some(&true) => name.to_owned(),
                    Some((name, _)) => fresh(&slot.prefix, seed, name),
                    None => object_name(&slot.prefix, seed),
                }
            })
            .collect();
        patch(items, &chosen)?;
        // A kept clone whose content now differs is renamed; each round renames at least one more
        // clone or ends, so there is at most one round per clone.
        let mut renamed = false;
        for (slot, kept) in slots.iter().zip(kept.iter_mut()) {
            if *kept && slot.current.is_some_and(|(_, spec)| item_spec(items, slot.item) != spec) {
                *kept = false;
                renamed = true;
            }
        }
        if !renamed {
            let mut names = vec![None; items.len()];
            for (slot, name) in slots.iter().zip(chosen) {
                if let Some(entry) = names.get_mut(slot.item) {
                    *entry = Some(name);
                }
            }
            return Ok(names);
        }
    }
}

/// The patched spec of item `index` (null when there is none).
fn item_spec(items: &[PatchItem], index: usize) -> &Value {
    items.get(index).map_or(&Value::Null, |item| &item.object["spec"])
}

/// Gives the items of one scope variables with the `named` builtins set, still shared among them.
fn set_names(items: &mut [PatchItem], scope: &[usize], named: &[(BuiltinPath, &String)]) {
    let Some(first) = scope.first().and_then(|&i| items.get(i)) else {
        return;
    };
    let mut variables: Map<String, Value> = (*first.variables).clone();
    for (path, name) in named {
        set_path(&mut variables, path, Value::String((*name).clone()));
    }
    let shared = Arc::new(variables);
    for &i in scope {
        if let Some(item) = items.get_mut(i) {
            item.variables = Arc::clone(&shared);
        }
    }
}

/// Sets `value` at `path` in `root`, making (or replacing non-object values with) maps on the way.
fn set_path(root: &mut Map<String, Value>, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut map = root;
    for key in parents {
        let entry = map.entry(*key).or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        let Value::Object(inner) = entry else {
            return;
        };
        map = inner;
    }
    map.insert((*last).to_owned(), value);
}
