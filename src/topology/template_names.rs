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
//! next plan keeps every name. Classes whose patches do not read the names are patched once, with
//! the names of the clones that exist.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::current::Current;
use super::error::TopologyError;
use super::names::{content_suffix, object_name, placeholder};
use crate::patches::inline::PatchItem;

/// Where a generated name goes among a scope's variables.
pub(super) type BuiltinPath = &'static [&'static str];

/// `builtin.controlPlane.machineTemplate.infrastructureRef.name`.
pub(super) const CONTROL_PLANE_MACHINE: BuiltinPath = &[
    "builtin",
    "controlPlane",
    "machineTemplate",
    "infrastructureRef",
    "name",
];
/// `builtin.machineDeployment.bootstrap.configRef.name`.
pub(super) const DEPLOYMENT_BOOTSTRAP: BuiltinPath =
    &["builtin", "machineDeployment", "bootstrap", "configRef", "name"];
/// `builtin.machineDeployment.infrastructureRef.name`.
pub(super) const DEPLOYMENT_INFRASTRUCTURE: BuiltinPath =
    &["builtin", "machineDeployment", "infrastructureRef", "name"];

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
    pub(super) fn new(
        item: usize,
        path: BuiltinPath,
        prefix: String,
        reference: &Value,
        current: &'a Current,
    ) -> Self {
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
            let named: Vec<(BuiltinPath, &String)> = scope
                .slots
                .iter()
                .map(|slot| slot.path)
                .zip(names.by_ref())
                .collect();
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
            seeds = Some(
                slots
                    .iter()
                    .map(|slot| content_suffix(item_spec(items, slot.item)))
                    .collect(),
            );
        }
        let chosen: Vec<String> = slots
            .iter()
            .enumerate()
            .map(|(i, slot)| {
                let seed = seeds
                    .as_ref()
                    .and_then(|seeds| seeds.get(i))
                    .map_or("", String::as_str);
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
            if *kept
                && slot
                    .current
                    .is_some_and(|(_, spec)| item_spec(items, slot.item) != spec)
            {
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

/// Gives each scope's items the names of the clones that exist (for patches that do not settle
/// names: an extension sees the names Cluster API would send, those before patching); a clone
/// not created yet has no name to give.
pub(super) fn name_current_clones(items: &mut [PatchItem], scopes: &[NamedScope<'_>]) {
    for scope in scopes {
        let named: Vec<(BuiltinPath, String)> = scope
            .slots
            .iter()
            .filter_map(|slot| slot.current.map(|(name, _)| (slot.path, name.to_owned())))
            .collect();
        if !named.is_empty() {
            let named: Vec<(BuiltinPath, &String)> = named.iter().map(|(path, name)| (*path, name)).collect();
            set_names(items, &scope.items, &named);
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::runtime::HolderReference;
    use crate::patches::selector::Role;

    /// A worker's bootstrap (item 0) and infrastructure (item 1) templates sharing variables.
    fn items(infrastructure_size: &str) -> Vec<PatchItem> {
        let variables = Arc::new(Map::from_iter([(
            "builtin".to_owned(),
            json!({"cluster": {"name": "c"}}),
        )]));
        let item = |kind: &str, spec: Value| PatchItem {
            role: Role::MachineDeployment { class: "w".into() },
            holder: HolderReference::default(),
            object: json!({"kind": kind, "metadata": {"name": kind}, "spec": spec}),
            variables: Arc::clone(&variables),
            overrides: Arc::from(Vec::new()),
        };
        vec![
            item("Bootstrap", json!({"files": "x"})),
            item("Machine", json!({"size": infrastructure_size})),
        ]
    }

    /// The patches of the tests: the bootstrap template records the infrastructure template's
    /// name, the infrastructure template its own.
    fn run(calls: &std::cell::Cell<usize>) -> impl FnMut(&mut [PatchItem]) -> Result<(), TopologyError> + '_ {
        move |items| {
            calls.set(calls.get() + 1);
            for item in items.iter_mut() {
                let name =
                    item.variables["builtin"]["machineDeployment"]["infrastructureRef"]["name"].clone();
                item.object["spec"]["infrastructureName"] = name;
            }
            Ok(())
        }
    }

    fn scope<'a>(current: &'a Current, md: &Value) -> Vec<NamedScope<'a>> {
        let machine = &md["spec"]["template"]["spec"];
        vec![NamedScope {
            items: vec![0, 1],
            slots: vec![
                NameSlot::new(
                    0,
                    DEPLOYMENT_BOOTSTRAP,
                    "c-md".into(),
                    &machine["bootstrap"]["configRef"],
                    current,
                ),
                NameSlot::new(
                    1,
                    DEPLOYMENT_INFRASTRUCTURE,
                    "c-md".into(),
                    &machine["infrastructureRef"],
                    current,
                ),
            ],
        }]
    }

    /// The stored clones of `items` under `names`, and a MachineDeployment referencing them.
    fn stored(items: &[PatchItem], names: &[Option<String>]) -> (Current, Value) {
        let clone = |i: usize| json!({"kind": items[i].object["kind"], "metadata": {"name": names[i]}, "spec": items[i].object["spec"]});
        let md = json!({"spec": {"template": {"spec": {
            "bootstrap": {"configRef": {"kind": "Bootstrap", "name": names[0]}},
            "infrastructureRef": {"kind": "Machine", "name": names[1]}}}}});
        (
            Current {
                objects: vec![clone(0), clone(1)],
            },
            md,
        )
    }

    #[test]
    fn new_clones_are_named_from_their_content_and_patched_with_those_names() {
        let calls = std::cell::Cell::new(0);
        let mut items = items("small");
        let current = Current::default();
        let names = settle(&mut items, &scope(&current, &Value::Null), &mut run(&calls)).unwrap();
        let infrastructure = names[1].clone().unwrap();
        assert!(infrastructure.starts_with("c-md-") && infrastructure != placeholder("c-md"));
        assert_ne!(names[0], names[1]);
        for item in &items {
            assert_eq!(item.object["spec"]["infrastructureName"], json!(infrastructure));
        }
        assert_eq!(calls.get(), 2, "placeholders, then the names");
    }

    #[test]
    fn unsettled_scopes_see_the_names_of_the_clones_that_exist() {
        let names = [Some("c-md-boot1".to_owned()), Some("c-md-mach1".to_owned())];
        let (current, md) = stored(&items("small"), &names);
        let mut items = items("small");
        name_current_clones(&mut items, &scope(&current, &md));
        for item in &items {
            let builtin = &item.variables["builtin"]["machineDeployment"];
            assert_eq!(builtin["bootstrap"]["configRef"]["name"], "c-md-boot1");
            assert_eq!(builtin["infrastructureRef"]["name"], "c-md-mach1");
        }
        assert!(
            Arc::ptr_eq(&items[0].variables, &items[1].variables),
            "still shared"
        );

        let mut new = self::items("small");
        let none = Current::default();
        name_current_clones(&mut new, &scope(&none, &Value::Null));
        assert!(
            new[0].variables["builtin"].get("machineDeployment").is_none(),
            "no clone, no name"
        );
    }

    #[test]
    fn a_steady_plan_keeps_every_name_in_one_pass() {
        let calls = std::cell::Cell::new(0);
        let mut first = items("small");
        let none = Current::default();
        let names = settle(&mut first, &scope(&none, &Value::Null), &mut run(&calls)).unwrap();
        let (current, md) = stored(&first, &names);
        calls.set(0);
        let mut again = items("small");
        let kept = settle(&mut again, &scope(&current, &md), &mut run(&calls)).unwrap();
        assert_eq!(kept, names);
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn a_renamed_clone_renames_the_clones_that_read_its_name() {
        let calls = std::cell::Cell::new(0);
        let mut first = items("small");
        let none = Current::default();
        let names = settle(&mut first, &scope(&none, &Value::Null), &mut run(&calls)).unwrap();
        let (current, md) = stored(&first, &names);
        let mut bigger = items("large");
        let renamed = settle(&mut bigger, &scope(&current, &md), &mut run(&calls)).unwrap();
        assert_ne!(renamed[1], names[1], "the changed template rotates");
        assert_ne!(
            renamed[0], names[0],
            "the bootstrap template now records another name: it rotates too"
        );
        let infrastructure = json!(renamed[1]);
        assert_eq!(bigger[0].object["spec"]["infrastructureName"], infrastructure);
        assert_eq!(bigger[1].object["spec"]["infrastructureName"], infrastructure);
        // And the next plan keeps those names.
        let (current, md) = stored(&bigger, &renamed);
        let mut again = items("large");
        assert_eq!(
            settle(&mut again, &scope(&current, &md), &mut run(&calls)).unwrap(),
            renamed
        );
    }

    #[test]
    fn without_reads_a_clone_keeps_its_name_while_its_spec_is_the_same() {
        let spec = json!({"size": "small"});
        let current = Current {
            objects: vec![json!({"kind": "Machine", "metadata": {"name": "c-md-abcde"}, "spec": spec})],
        };
        let reference = json!({"kind": "Machine", "name": "c-md-abcde"});
        assert_eq!(clone_name(&current, &reference, "c-md", &spec), "c-md-abcde");
        let changed = clone_name(&current, &reference, "c-md", &json!({"size": "large"}));
        assert_eq!(
            changed,
            object_name("c-md", &content_suffix(&json!({"size": "large"})))
        );
        assert_eq!(
            fresh("c-md", "seed", &object_name("c-md", "seed")),
            object_name("c-md", &format!("seed/{}", object_name("c-md", "seed")))
        );
    }
}
