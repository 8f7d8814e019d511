//! The optional structs of the hub that Go's v1beta2 types never write empty. Each field the
//! hub's CRD gives `minProperties: 1` is an optional struct marshalled with `omitzero`: a
//! v1beta1 `metadata: {}` (its `ObjectMeta` has no `omitzero`, and v1beta1 writes it) converts
//! to a zero struct, which Go's conversion leaves out of the v1beta2 object. Ours leaves it out
//! too, or the hub object would break its own CRD's `minProperties`. Empty structs are dropped
//! from the deepest up, so a struct holding only empty structs goes as well. Left as they are:
//! the object's own `spec` (the spoke always writes it, and the way back does not make it up)
//! and a struct the hub requires (Go's conversion would leave it out and the hub refuse it as
//! required; an empty one is refused as well, and converts back as written).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::value::{get_mut, remove, Obj};
use crate::api::crd_constraints::reference;
use crate::api::HUB_VERSION;

/// One step of a constraint table path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// A property.
    Field(String),
    /// Every item of a list.
    Items,
    /// Every value of a map.
    Values,
}

/// The steps of a table path (`.spec.a[].b{}.c`); `None` for the object itself.
fn steps(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut rest = path.strip_prefix('.')?;
    while !rest.is_empty() {
        if let Some(tail) = rest.strip_prefix("[]") {
            steps.push(Step::Items);
            rest = tail;
        } else if let Some(tail) = rest.strip_prefix("{}") {
            steps.push(Step::Values);
            rest = tail;
        } else {
            let name = rest.strip_prefix('.').unwrap_or(rest);
            let end = name.find(['.', '[', '{']).unwrap_or(name.len());
            steps.push(Step::Field(name[..end].to_owned()));
            rest = &name[end..];
        }
    }
    (!steps.is_empty()).then_some(steps)
}

/// The paths of one kind's optional `minProperties` fields, as a tree walked once per object.
#[derive(Debug, Default)]
struct Tree {
    /// The steps below this point, each with what lies below it.
    children: Vec<(Step, Tree)>,
    /// The path ends here: an empty object at this field goes.
    empty_goes: bool,
}

impl Tree {
    fn insert(&mut self, path: &[Step]) {
        let Some((step, rest)) = path.split_first() else {
            self.empty_goes = true;
            return;
        };
        let index = match self.children.iter().position(|(s, _)| s == step) {
            Some(index) => index,
            None => {
                self.children.push((step.clone(), Tree::default()));
                self.children.len() - 1
            }
        };
        self.children[index].1.insert(rest);
    }

    fn child(&self, step: &Step) -> Option<&Tree> {
        self.children
            .iter()
            .find(|(s, _)| s == step)
            .map(|(_, tree)| tree)
    }
}

/// The hub's optional `minProperties` fields below the object's top level, by kind.
fn struct_paths(kind: &str) -> Option<&'static Tree> {
    static PATHS: OnceLock<HashMap<String, Tree>> = OnceLock::new();
    let paths = PATHS.get_or_init(|| {
        reference()
            .iter()
            .filter_map(|(key, table)| {
                let kind = key.strip_suffix(&format!("/{HUB_VERSION}"))?;
                let required = |path: &str| {
                    let Some((parent, name)) = path.rsplit_once('.') else {
                        return false;
                    };
                    table
                        .get(parent)
                        .and_then(|keywords| keywords.get("required"))
                        .and_then(Value::as_array)
                        .is_some_and(|names| names.iter().any(|n| n == name))
                };
                let mut tree = Tree::default();
                table
                    .iter()
                    .filter(|(_, keywords)| keywords.get("minProperties").and_then(Value::as_u64) > Some(0))
                    .filter(|(path, _)| !required(path))
                    .filter_map(|(path, _)| steps(path))
                    .filter(|steps| steps.len() > 1)
                    .for_each(|steps| tree.insert(&steps));
                Some((kind.to_owned(), tree))
            })
            .collect()
    });
    paths.get(kind)
}

/// Drops from the hub object `obj` of `kind` every optional struct left empty (`{}`), each
/// struct after what it holds (so one holding only empty structs goes too).
pub(super) fn drop_empty_structs(kind: &str, obj: &mut Obj) {
    if let Some(tree) = struct_paths(kind) {
        drop_in_fields(obj, tree);
    }
}

/// Walks `value` along `tree`: its items, its values and its fields.
fn drop_below(value: &mut Value, tree: &Tree) {
    match value {
        Value::Array(items) => {
            if let Some(below) = tree.child(&Step::Items) {
                for item in items {
                    drop_below(item, below);
                }
            }
        }
        Value::Object(map) => {
            if let Some(below) = tree.child(&Step::Values) {
                for entry in map.values_mut() {
                    drop_below(entry, below);
                }
            }
            drop_in_fields(map, tree);
        }
        _ => {}
    }
}

/// The fields of `obj` the tree names: what is below each first, then the field itself when it
/// is an empty object the tree drops.
fn drop_in_fields(obj: &mut Obj, tree: &Tree) {
    for (step, below) in &tree.children {
        let Step::Field(name) = step else {
            continue;
        };
        let Some(value) = get_mut(obj, name) else {
            continue;
        };
        drop_below(value, below);
        if below.empty_goes && value.as_object().is_some_and(Obj::is_empty) {
            remove(obj, name);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn dropped(kind: &str, object: Value) -> Value {
        let mut object = object;
        if let Some(obj) = object.as_object_mut() {
            drop_empty_structs(kind, obj);
        }
        object
    }

    #[test]
    fn empty_optional_structs_go_from_the_deepest_up() {
        let cluster = json!({"spec": {"topology": {"classRef": {"name": "c"},
            "controlPlane": {"metadata": {}},
            "workers": {"machineDeployments": [{"class": "w", "name": "a", "metadata": {}},
                                               {"class": "w", "name": "b", "metadata": {"labels": {"x": "y"}}}]}}}});
        assert_eq!(
            dropped("Cluster", cluster),
            json!({"spec": {"topology": {"classRef": {"name": "c"},
                "workers": {"machineDeployments": [{"class": "w", "name": "a"},
                                                   {"class": "w", "name": "b", "metadata": {"labels": {"x": "y"}}}]}}}})
        );
    }

    #[test]
    fn the_spec_required_structs_other_values_and_other_kinds_are_kept() {
        let cluster = json!({"spec": {"topology": {"variables": [], "classRef": {}}}});
        assert_eq!(dropped("Cluster", cluster.clone()), cluster);
        assert_eq!(dropped("Cluster", json!({"spec": {}})), json!({"spec": {}}));
        let class = json!({"spec": {"patches": [{"name": "p", "definitions": [
            {"selector": {"apiVersion": "a/v1", "kind": "K", "matchResources": {}}}]}]}});
        assert_eq!(dropped("ClusterClass", class.clone()), class);
        assert_eq!(
            dropped("NotOurs", json!({"a": {"b": {}}})),
            json!({"a": {"b": {}}})
        );
    }

    #[test]
    fn steps_follow_properties_items_and_values() {
        assert_eq!(
            steps(".a[].b{}.c"),
            Some(vec![
                Step::Field("a".into()),
                Step::Items,
                Step::Field("b".into()),
                Step::Values,
                Step::Field("c".into()),
            ])
        );
        assert_eq!(steps("."), None);
    }
}
