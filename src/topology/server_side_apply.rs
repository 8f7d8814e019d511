//! What the topology controller's apply does to a stored object: a server-side apply under the
//! field manager `capi-topology` (Cluster API's topology controller's name), forced, of the
//! desired object. Modelled as the API server carries it out, from the object's `managedFields`:
//! - every value the desired object sets is written, taking over fields other managers own;
//!   maps merge key by key, list maps item by item by their keys, sets value by value, other
//!   lists (atomic) are replaced whole;
//! - a field the last apply set (`capi-topology`, operation `Apply`) that the desired object no
//!   longer sets is removed, unless another manager owns it too (it stays; only our ownership
//!   goes); a struct field goes with everything under it.
//!
//! Which lists merge by key is read from the same records: the API server writes a list map's
//! items as `k:{...}` and a set's as `v:...`, as the object's schema (its CRD's
//! `x-kubernetes-list-type`) told it; a list no record describes is atomic, as the API server
//! treats a list of unknown schema. Pure.

use serde_json::{Map, Value};

use super::diff::FieldChange;
use super::reconcile::contains;
use crate::managed_fields::{ownership, Element, FieldSet, TOPOLOGY_MANAGER};

/// Most nesting levels walked; deeper differences are reported (and replaced) whole.
const MAX_DEPTH: usize = 64;

/// What one apply does to a stored object.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyEffect {
    /// The fields written with another value than stored (`from` null: added).
    pub changed: Vec<FieldChange>,
    /// The fields removed (`to` null), each with the value removed.
    pub removed: Vec<FieldChange>,
    /// The object as the apply leaves it (server fields as stored).
    pub after: Value,
}

impl ApplyEffect {
    /// True when the apply leaves the object as it is (ownership aside): the controller does
    /// not write it.
    pub fn is_noop(&self) -> bool {
        self.changed.is_empty() && self.removed.is_empty()
    }
}

/// What applying `desired` over the stored `current` does.
pub fn apply_effect(current: &Value, desired: &Value) -> ApplyEffect {
    let (ours, others) = ownership(current, TOPOLOGY_MANAGER).unwrap_or_default();
    let mut lists = ours.clone();
    lists.union(&others);
    let mut after = current.clone();
    let mut changed = Vec::new();
    let mut removed = Vec::new();
    if let (Some(after), Some(desired)) = (after.as_object_mut(), desired.as_object()) {
        for (key, value) in desired
            .iter()
            .filter(|(key, _)| *key != "apiVersion" && *key != "kind")
        {
            let node = lists.children.get(&format!("f:{key}"));
            match after.get_mut(key) {
                Some(stored) => merge(key, stored, value, node, 0, &mut changed),
                None => {
                    changed.push(added(key, value));
                    after.insert(key.clone(), value.clone());
                }
            }
        }
    }
    remove(
        "",
        &mut after,
        Some(desired),
        &ours,
        Some(&others),
        0,
        &mut removed,
    );
    ApplyEffect {
        changed,
        removed,
        after,
    }
}

fn added(path: &str, value: &Value) -> FieldChange {
    FieldChange {
        path: path.to_owned(),
        from: Value::Null,
        to: value.clone(),
    }
}

/// Writes `desired` over `stored` (at `path`; `lists` the records of the field), noting each
/// value that changes.
fn merge(
    path: &str,
    stored: &mut Value,
    desired: &Value,
    lists: Option<&FieldSet>,
    depth: usize,
    changed: &mut Vec<FieldChange>,
) {
    if contains(stored, desired) {
        return;
    }
    match (&mut *stored, desired) {
        (Value::Object(map), Value::Object(wanted)) if depth < MAX_DEPTH => {
            for (key, value) in wanted {
                let child = format!("{path}.{key}");
                let node = lists.and_then(|l| l.children.get(&format!("f:{key}")));
                match map.get_mut(key) {
                    Some(stored) => merge(&child, stored, value, node, depth + 1, changed),
                    None => {
                        changed.push(added(&child, value));
                        map.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (Value::Array(items), Value::Array(wanted)) if depth < MAX_DEPTH => {
            match lists.map(list_kind).unwrap_or(ListKind::Atomic) {
                ListKind::Map(keys) => {
                    for value in wanted {
                        let element = item_key(&keys, value);
                        let child = format!("{path}[{}]", describe(&element));
                        let node =
                            lists.and_then(|l| l.elements().find(|(e, ..)| *e == element).map(|(.., n)| n));
                        match items.iter_mut().find(|item| element.names_item(item)) {
                            Some(stored) => merge(&child, stored, value, node, depth + 1, changed),
                            None => {
                                changed.push(added(&child, value));
                                items.push(value.clone());
                            }
                        }
                    }
                }
                ListKind::Set => {
                    for value in wanted {
                        if !items.contains(value) {
                            let child = format!("{path}[{}]", describe(&Element::Value(value.clone())));
                            changed.push(added(&child, value));
                            items.push(value.clone());
                        }
                    }
                }
                ListKind::Atomic => replace(path, stored, desired, changed),
            }
        }
        _ => replace(path, stored, desired, changed),
    }
}

fn replace(path: &str, stored: &mut Value, desired: &Value, changed: &mut Vec<FieldChange>) {
    changed.push(FieldChange {
        path: path.to_owned(),
        from: stored.clone(),
        to: desired.clone(),
    });
    *stored = desired.clone();
}

/// How the API server merges a list, as its records show it.
#[derive(Debug, Clone, PartialEq)]
enum ListKind {
    /// Item by item, by these key fields.
    Map(Vec<String>),
    /// Value by value.
    Set,
    /// Whole.
    Atomic,
}

fn list_kind(node: &FieldSet) -> ListKind {
    for (element, ..) in node.elements() {
        match element {
            Element::Key(keys) => return ListKind::Map(keys.keys().cloned().collect()),
            Element::Value(_) => return ListKind::Set,
            Element::Field(_) | Element::Index(_) => {}
        }
    }
    ListKind::Atomic
}

/// The `k:` element naming `item` of a list map keyed by `keys`.
fn item_key(keys: &[String], item: &Value) -> Element {
    let values: Map<String, Value> = keys
        .iter()
        .map(|key| (key.clone(), item.get(key).cloned().unwrap_or(Value::Null)))
        .collect();
    Element::Key(values)
}

/// A list item's path segment: `name=md-0`, `key=a,effect=NoSchedule`, a set's value, an index.
fn describe(element: &Element) -> String {
    let text = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    match element {
        Element::Key(keys) => keys
            .iter()
            .map(|(key, value)| format!("{key}={}", text(value)))
            .collect::<Vec<_>>()
            .join(","),
        Element::Value(value) => text(value),
        Element::Index(index) => index.to_string(),
        Element::Field(name) => name.clone(),
    }
}

/// Removes from `after` (at `path`) the fields of `ours` that `desired` no longer sets and no
/// node of `others` holds, noting each.
fn remove(
    path: &str,
    after: &mut Value,
    desired: Option<&Value>,
    ours: &FieldSet,
    others: Option<&FieldSet>,
    depth: usize,
    removed: &mut Vec<FieldChange>,
) {
    if depth >= MAX_DEPTH {
        return;
    }
    let mut gone: Vec<usize> = Vec::new();
    for (element, key, node) in ours.elements() {
        let theirs = others.and_then(|o| o.children.get(key));
        let (stored, wanted, child, whole) = match (&element, &mut *after) {
            (Element::Field(name), Value::Object(map)) => {
                let child = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                (map.get_mut(name), desired.and_then(|d| d.get(name)), child, true)
            }
            (Element::Index(index), Value::Array(items)) => (
                items.get_mut(*index),
                desired.and_then(|d| d.get(*index)),
                format!("{path}[{index}]"),
                node.member,
            ),
            (_, Value::Array(items)) => (
                items.iter_mut().find(|item| element.names_item(item)),
                desired
                    .and_then(Value::as_array)
                    .and_then(|d| d.iter().find(|item| element.names_item(item))),
                format!("{path}[{}]", describe(&element)),
                node.member,
            ),
            _ => continue,
        };
        let Some(stored) = stored else { continue };
        if wanted.is_some() || theirs.is_some() || !whole {
            remove(&child, stored, wanted, node, theirs, depth + 1, removed);
            continue;
        }
        removed.push(FieldChange {
            path: child,
            from: stored.clone(),
            to: Value::Null,
        });
        match (&element, &mut *after) {
            (Element::Field(name), Value::Object(map)) => {
                map.shift_remove(name);
            }
            (_, Value::Array(items)) => gone.extend(position(items, &element)),
            _ => {}
        }
    }
    if let Value::Array(items) = after {
        gone.sort_unstable();
        gone.dedup();
        for index in gone.into_iter().rev() {
            items.remove(index);
        }
    }
}

/// Where in `items` the item `element` names is.
fn position(items: &[Value], element: &Element) -> Option<usize> {
    match element {
        Element::Index(index) => (*index < items.len()).then_some(*index),
        _ => items.iter().position(|item| element.names_item(item)),
    }
}

#[cfg(test)]
#[path = "server_side_apply_tests.rs"]
mod tests;
