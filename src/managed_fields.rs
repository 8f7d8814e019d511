//! Server-side apply's record of who owns which field of an object (`metadata.managedFields`,
//! format `FieldsV1`): a tree keyed by path elements (`f:name` a field, `k:{"name":"x"}` the item of
//! a list map with those keys, `v:value` the item of a set, `i:3` a list index), where `.` marks a
//! node owned itself and an empty node is an owned leaf. Pure, and imports nothing of the crate:
//! the watch cache slims the records with it and the topology's apply model reads them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The field manager of the topology controller's applies: ours, and Cluster API's topology
/// controller's, so that ownership carries on when one takes over from the other.
pub const TOPOLOGY_MANAGER: &str = "capi-topology";

/// The manager name under which [`slim`] keeps every other manager's fields that overlap ours.
pub const OTHER_MANAGERS: &str = "(other managers)";

/// Deepest tree read; deeper nodes are dropped (an object deeper than this is refused by the API
/// server long before).
const MAX_DEPTH: usize = 100;

/// One path element of a `FieldsV1` key, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Element {
    /// `f:name`: a field of a struct or a key of a map.
    Field(String),
    /// `k:{...}`: the item of a list map whose key fields have these values.
    Key(Map<String, Value>),
    /// `v:value`: the item of a set equal to this value.
    Value(Value),
    /// `i:3`: the list item at this index.
    Index(usize),
}

impl Element {
    /// The element a `FieldsV1` key names; `None` for `.` and for keys of no known form.
    pub fn parse(key: &str) -> Option<Element> {
        let (prefix, rest) = key.split_at_checked(2)?;
        match prefix {
            "f:" => Some(Element::Field(rest.to_owned())),
            "k:" => match serde_json::from_str(rest).ok()? {
                Value::Object(keys) => Some(Element::Key(keys)),
                _ => None,
            },
            "v:" => serde_json::from_str(rest).ok().map(Element::Value),
            "i:" => rest.parse().ok().map(Element::Index),
            _ => None,
        }
    }

    /// Whether the list `item` is the one this element names (`Key`, `Value`; `Field` and
    /// `Index` name no list item by content).
    pub fn names_item(&self, item: &Value) -> bool {
        match self {
            Element::Key(keys) => keys.iter().all(|(field, value)| item.get(field) == Some(value)),
            Element::Value(value) => item == value,
            Element::Field(_) | Element::Index(_) => false,
        }
    }
}

/// A set of field paths as a tree: the `FieldsV1` of one or more managers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSet {
    /// Whether the node itself is in the set (`.`, or a leaf).
    pub member: bool,
    /// The children, by their `FieldsV1` key.
    pub children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    /// The set a `FieldsV1` value describes (anything else is the empty set).
    pub fn from_fields_v1(value: &Value) -> FieldSet {
        Self::read(value, 0)
    }

    fn read(value: &Value, depth: usize) -> FieldSet {
        let mut set = FieldSet::default();
        let Some(map) = value.as_object() else {
            return set;
        };
        set.member = map.is_empty() || map.contains_key(".");
        if depth >= MAX_DEPTH {
            return set;
        }
        for (key, child) in map.iter().filter(|(key, _)| *key != ".") {
            set.children.insert(key.clone(), Self::read(child, depth + 1));
        }
        set
    }

    /// The set as `FieldsV1`.
    pub fn to_fields_v1(&self) -> Value {
        let mut map: Map<String, Value> = self
            .children
            .iter()
            .map(|(key, child)| (key.clone(), child.to_fields_v1()))
            .collect();
        if self.member && !map.is_empty() {
            map.insert(".".to_owned(), Value::Object(Map::new()));
        }
        Value::Object(map)
    }

    /// Adds every path of `other`.
    pub fn union(&mut self, other: &FieldSet) {
        self.member |= other.member;
        for (key, child) in &other.children {
            self.children.entry(key.clone()).or_default().union(child);
        }
    }

    /// Adds the paths of the `FieldsV1` `value` that are also nodes of `ours`, and only those:
    /// the parts of another manager's fields outside ours are never built.
    fn add_overlap(&mut self, value: &Value, ours: &FieldSet, depth: usize) {
        let Some(map) = value.as_object() else {
            return;
        };
        self.member |= map.is_empty() || map.contains_key(".");
        if depth >= MAX_DEPTH {
            return;
        }
        for (key, child) in map {
            if let Some(ours_child) = ours.children.get(key) {
                self.children
                    .entry(key.clone())
                    .or_default()
                    .add_overlap(child, ours_child, depth + 1);
            }
        }
    }

    /// Marks each node left without children a member: what another manager owns under it is
    /// not ours, but the node is.
    fn settle_overlap(&mut self) {
        self.member |= self.children.is_empty();
        for child in self.children.values_mut() {
            child.settle_overlap();
        }
    }

    /// The child named by `element`'s key, with its parsed element.
    pub fn elements(&self) -> impl Iterator<Item = (Element, &String, &FieldSet)> {
        self.children
            .iter()
            .filter_map(|(key, child)| Some((Element::parse(key)?, key, child)))
    }
}

/// The fields of `object` as its managers own them: the fields applied by `manager` (operation
/// `Apply`), and those every other manager (and `manager`'s own updates) owns; `None` when
/// `manager` has never applied the object.
pub fn ownership(object: &Value, manager: &str) -> Option<(FieldSet, FieldSet)> {
    let entries = object.pointer("/metadata/managedFields")?.as_array()?;
    let applied_by_manager = |entry: &Value| {
        entry["manager"] == manager
            && entry["operation"] == "Apply"
            && entry
                .get("subresource")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
    };
    let mut ours: Option<FieldSet> = None;
    for entry in entries.iter().filter(|entry| applied_by_manager(entry)) {
        if let Some(fields) = fields_v1(entry) {
            let set = FieldSet::from_fields_v1(fields);
            match &mut ours {
                Some(ours) => ours.union(&set),
                None => ours = Some(set),
            }
        }
    }
    let ours = ours?;
    let mut others = FieldSet::default();
    for entry in entries.iter().filter(|entry| !applied_by_manager(entry)) {
        if let Some(fields) = fields_v1(entry) {
            others.add_overlap(fields, &ours, 0);
        }
    }
    others.settle_overlap();
    Some((ours, others))
}

/// The `fieldsV1` of a `managedFields` entry of that type.
fn fields_v1(entry: &Value) -> Option<&Value> {
    (entry["fieldsType"] == "FieldsV1").then(|| &entry["fieldsV1"])
}

/// The `managedFields` of `object` slimmed to what [`ownership`] reads for `manager`: its applied
/// fields, and one entry ([`OTHER_MANAGERS`]) with the other managers' fields among them;
/// removed whole when `manager` has never applied the object. [`ownership`] of the slimmed object
/// is that of the original.
pub fn slim(object: &mut Value, manager: &str) {
    let kept = ownership(object, manager);
    let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    match kept {
        None => {
            metadata.remove("managedFields");
        }
        Some((ours, others)) => {
            let entry = |name: &str, operation: &str, set: &FieldSet| {
                serde_json::json!({"manager": name, "operation": operation,
                    "fieldsType": "FieldsV1", "fieldsV1": set.to_fields_v1()})
            };
            let mut entries = vec![entry(manager, "Apply", &ours)];
            if !others.children.is_empty() {
                entries.push(entry(OTHER_MANAGERS, "Update", &others));
            }
            metadata.insert("managedFields".to_owned(), Value::Array(entries));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(entries: Value) -> Value {
        json!({"metadata": {"name": "x", "managedFields": entries}})
    }

    fn entry(manager: &str, operation: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    #[test]
    fn elements_parse_as_the_api_server_writes_them() {
        assert_eq!(Element::parse("f:spec"), Some(Element::Field("spec".to_owned())));
        let key = Element::parse(r#"k:{"name":"md-0","class":"w"}"#).expect("a key");
        assert!(key.names_item(&json!({"name": "md-0", "class": "w", "replicas": 1})));
        assert!(!key.names_item(&json!({"name": "md-0", "class": "x"})));
        assert_eq!(Element::parse(r#"v:"a""#), Some(Element::Value(json!("a"))));
        assert_eq!(Element::parse("i:3"), Some(Element::Index(3)));
        for bad in [".", "x", "k:[1]", "i:-1", "v:{", ""] {
            assert_eq!(Element::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn members_are_leaves_and_dotted_nodes() {
        let fields = json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {"f:x": {}}});
        let set = FieldSet::from_fields_v1(&fields);
        let labels = &set.children["f:metadata"].children["f:labels"];
        assert!(labels.member && labels.children["f:a"].member);
        assert!(!set.children["f:spec"].member && set.children["f:spec"].children["f:x"].member);
        assert_eq!(set.to_fields_v1(), fields);
    }

    #[test]
    fn ownership_splits_our_applies_from_everyone_else_and_keeps_only_the_overlap() {
        let object = object(json!([
            entry(
                "capi-topology",
                "Apply",
                json!({"f:spec": {"f:a": {}, "f:b": {}}})
            ),
            entry(
                "manager",
                "Update",
                json!({"f:spec": {"f:b": {}, "f:c": {}}, "f:status": {"f:ready": {}}})
            ),
            entry("capi-topology", "Update", json!({"f:spec": {"f:a": {}}})),
        ]));
        let (ours, others) = ownership(&object, TOPOLOGY_MANAGER).expect("applied");
        assert_eq!(ours.to_fields_v1(), json!({"f:spec": {"f:a": {}, "f:b": {}}}));
        // Our own updates are another manager's, as the API server keys managers by operation;
        // `f:status` is not among our fields.
        assert_eq!(others.to_fields_v1(), json!({"f:spec": {"f:a": {}, "f:b": {}}}));
        let only_update =
            super::tests::object(json!([entry("capi-topology", "Update", json!({"f:spec": {}}))]));
        assert_eq!(ownership(&only_update, TOPOLOGY_MANAGER), None);
    }

    #[test]
    fn a_status_subresource_apply_is_not_ours() {
        let mut status = entry("capi-topology", "Apply", json!({"f:status": {"f:x": {}}}));
        status["subresource"] = json!("status");
        let object = object(json!([
            status,
            entry("capi-topology", "Apply", json!({"f:spec": {"f:a": {}}}))
        ]));
        let (ours, _) = ownership(&object, TOPOLOGY_MANAGER).expect("applied");
        assert!(!ours.children.contains_key("f:status"));
    }

    #[test]
    fn other_managers_overlap_is_read_only_along_our_fields() {
        let object = object(json!([
            entry(
                "capi-topology",
                "Apply",
                json!({"f:spec": {"f:a": {}, "f:b": {"f:c": {}}}})
            ),
            entry("kcp", "Update", json!({"f:spec": {"f:b": {".": {}, "f:d": {}}}})),
            entry(
                "user",
                "Apply",
                json!({"f:spec": {"f:a": {}}, "f:status": {"f:x": {}}})
            ),
        ]));
        let (_, others) = ownership(&object, TOPOLOGY_MANAGER).expect("applied");
        // `f:b` is the other manager's node (its own fields under it are not ours to keep);
        // `f:status` and `f:d` lie outside our fields.
        assert_eq!(others.to_fields_v1(), json!({"f:spec": {"f:a": {}, "f:b": {}}}));
        assert!(others.children["f:spec"].children["f:b"].member);
        assert!(!others.children["f:spec"].member);
    }

    #[test]
    fn slimming_keeps_what_ownership_reads() {
        let mut object = object(json!([
            entry(
                "capi-topology",
                "Apply",
                json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {"f:a": {}}})
            ),
            entry(
                "cluster-api-controller-manager",
                "Apply",
                json!({"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}})
            ),
            entry("manager", "Update", json!({"f:status": {"f:conditions": {}}})),
        ]));
        let before = ownership(&object, TOPOLOGY_MANAGER);
        slim(&mut object, TOPOLOGY_MANAGER);
        assert_eq!(
            object["metadata"]["managedFields"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(ownership(&object, TOPOLOGY_MANAGER), before);
        let again = object.clone();
        slim(&mut object, TOPOLOGY_MANAGER);
        assert_eq!(object, again);
        let mut foreign = super::tests::object(json!([entry("kubectl", "Apply", json!({"f:spec": {}}))]));
        slim(&mut foreign, TOPOLOGY_MANAGER);
        assert!(foreign["metadata"].get("managedFields").is_none());
    }

    #[test]
    fn hostile_depth_is_bounded() {
        let mut deep = json!({});
        for _ in 0..1_000 {
            deep = json!({ "f:x": deep });
        }
        let set = FieldSet::from_fields_v1(&deep);
        let mut depth = 0;
        let mut node = &set;
        while let Some(child) = node.children.get("f:x") {
            node = child;
            depth += 1;
        }
        assert!(depth <= MAX_DEPTH);
    }
}
