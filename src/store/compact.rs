//! An object as a store keeps it: its JSON text, a fraction of the size of a parsed tree, with
//! what the store's own indexes read (its resourceVersion, its Cluster name label) kept beside it.
//!
//! A `serde_json::Value` tree costs several times its text: every map entry holds a hashed index
//! slot, an owned key and an enum of 80 bytes, every string its own allocation. At 1,000 Clusters
//! the watch cache's trees were 170 MB of a 254 MB heap (heaptrack, BENCHMARKS.md); as text they
//! are a fraction of it. A read parses the text again: a few microseconds for an object of a few
//! KiB, paid only by the objects a reconcile or a review reads.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::api::labels::CLUSTER_NAME_LABEL;

/// Nesting past which an object is kept as a tree: serde_json parses at most 128 levels, and
/// text that did not parse back would lose the object.
const MAX_TEXT_DEPTH: usize = 100;

/// A stored object.
#[derive(Debug)]
pub struct CompactObject {
    form: Form,
    resource_version: u64,
    cluster_name: Option<Box<str>>,
}

#[derive(Debug)]
enum Form {
    Text(Box<str>),
    Tree(Arc<Value>),
}

impl CompactObject {
    /// Keeps `object` as text (as a tree when it nests too deep to parse back).
    pub fn new(object: &Value) -> Self {
        let text = depth_within(object, MAX_TEXT_DEPTH)
            .then(|| serde_json::to_string(object).ok())
            .flatten();
        let (resource_version, cluster_name) = index_facts(object);
        Self {
            form: text.map_or_else(
                || Form::Tree(Arc::new(object.clone())),
                |t| Form::Text(t.into_boxed_str()),
            ),
            resource_version,
            cluster_name,
        }
    }

    /// Keeps `object` parsed, for objects read far more often than stored (CRDs, read by every
    /// contract lookup; a class's templates, read by every reconcile of its Clusters).
    pub fn tree(object: Value) -> Self {
        let (resource_version, cluster_name) = index_facts(&object);
        Self {
            form: Form::Tree(Arc::new(object)),
            resource_version,
            cluster_name,
        }
    }

    /// The object, borrowed when it is kept parsed.
    pub fn parsed(&self) -> Cow<'_, Value> {
        match &self.form {
            Form::Text(_) => Cow::Owned(self.value()),
            Form::Tree(value) => Cow::Borrowed(value),
        }
    }

    /// The object for a reader to keep: shared when it is kept parsed, parsed anew otherwise.
    pub fn shared(&self) -> Arc<Value> {
        match &self.form {
            Form::Text(_) => Arc::new(self.value()),
            Form::Tree(value) => Arc::clone(value),
        }
    }

    /// The object, parsed again from its text.
    pub fn value(&self) -> Value {
        match &self.form {
            // Text this store wrote from a tree within serde_json's depth: it parses.
            Form::Text(text) => serde_json::from_str(text).unwrap_or(Value::Null),
            Form::Tree(value) => Value::clone(value),
        }
    }

    /// Its resourceVersion as a number (etcd's revision); 0 when it is not one.
    pub fn resource_version(&self) -> u64 {
        self.resource_version
    }

    /// Its `cluster.x-k8s.io/cluster-name` label.
    pub fn cluster_name(&self) -> Option<&str> {
        self.cluster_name.as_deref()
    }
}

/// What the store's indexes read of an object: its resourceVersion (0 when not a number) and its
/// `cluster.x-k8s.io/cluster-name` label.
fn index_facts(object: &Value) -> (u64, Option<Box<str>>) {
    let resource_version = object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let cluster_name = object
        .pointer("/metadata/labels")
        .and_then(|labels| labels.get(CLUSTER_NAME_LABEL))
        .and_then(Value::as_str)
        .map(Box::from);
    (resource_version, cluster_name)
}

/// Whether `value` nests at most `limit` arrays and objects deep (walked with an explicit stack,
/// so an object nested past any limit cannot overflow ours).
fn depth_within(value: &Value, limit: usize) -> bool {
    let mut pending = vec![(value, 1usize)];
    while let Some((value, depth)) = pending.pop() {
        let is_container = value.is_array() || value.is_object();
        if is_container && depth > limit {
            return false;
        }
        match value {
            Value::Array(items) => pending.extend(items.iter().map(|child| (child, depth + 1))),
            Value::Object(map) => pending.extend(map.values().map(|child| (child, depth + 1))),
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_object_reads_back_as_it_was_stored_key_order_and_numbers_included() {
        let object = json!({"kind": "Cluster", "apiVersion": "cluster.x-k8s.io/v1beta2",
            "metadata": {"name": "dev", "resourceVersion": "42",
                         "labels": {"cluster.x-k8s.io/cluster-name": "dev"}},
            "spec": {"z": 1, "a": [1.5, -3, 18446744073709551615u64, "x", null, true], "m": {}}});
        let kept = CompactObject::new(&object);
        let back = kept.value();
        assert_eq!(back, object);
        let keys: Vec<_> = back["spec"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["z", "a", "m"], "key order kept");
        assert_eq!(kept.resource_version(), 42);
        assert_eq!(kept.cluster_name(), Some("dev"));
    }

    #[test]
    fn an_object_nested_past_the_parser_depth_is_kept_as_a_tree() {
        let mut deep = json!("leaf");
        for _ in 0..200 {
            deep = json!([deep]);
        }
        let object = json!({"metadata": {"name": "deep"}, "spec": deep});
        let kept = CompactObject::new(&object);
        assert!(matches!(kept.form, Form::Tree(_)));
        assert_eq!(kept.value(), object);
        assert_eq!(kept.resource_version(), 0);
        assert_eq!(kept.cluster_name(), None);
    }

    #[test]
    fn depth_is_counted_in_containers() {
        assert!(depth_within(&json!({"a": [1]}), 2));
        assert!(!depth_within(&json!({"a": [[1]]}), 2));
        assert!(depth_within(&json!(1), 0));
    }
}
