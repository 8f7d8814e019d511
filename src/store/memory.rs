//! An [`ObjectSource`] over objects held in memory: parsed files for the CLI, fixtures for tests.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::compact::CompactObject;
use super::contract::{self, CRD_GROUP, CRD_KIND};
use super::{group_of, manifest, ClassEntry, ObjectSource};
use crate::api::convert::{to_hub, ContractVersions, ConvertError};
use crate::api::labels::CLUSTER_NAME_LABEL;
use crate::api::{Cluster, ClusterClass};
use crate::contract::crd::labels_of;
use crate::contract::versions::{contract_and_version, contract_of_version};
use crate::decode::decode_value;

/// The group of the kinds the store keeps typed.
const CAPI_GROUP: &str = "cluster.x-k8s.io";
/// Objects without a namespace land here, as `kubectl apply` would put them (cluster-scoped
/// objects such as CRDs too).
const DEFAULT_NAMESPACE: &str = "default";

/// Why an object could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The object has no `metadata.name`.
    #[error("{kind} without metadata.name")]
    NoName {
        /// The object's kind.
        kind: String,
    },
    /// A Cluster or ClusterClass does not decode into its type.
    #[error("{kind} {namespace}/{name}: {reason}")]
    Decode {
        /// The object's kind.
        kind: String,
        /// The object's namespace.
        namespace: String,
        /// The object's name.
        name: String,
        /// The decoding error, with the path of the field at fault.
        reason: String,
    },
    /// The manifest text could not be parsed.
    #[error(transparent)]
    Manifest(#[from] manifest::ManifestError),
    /// An object of our groups in a version that is not served, or that does not convert to
    /// the hub.
    #[error(transparent)]
    Convert(#[from] ConvertError),
}

/// Identity of a stored object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The API group (`""` for the core group).
    pub group: String,
    /// The kind.
    pub kind: String,
    /// The namespace: `default` when the object has none, as `kubectl apply` puts it
    /// (cluster-scoped objects such as CRDs too).
    pub namespace: String,
    /// `metadata.name` (`""` when missing).
    pub name: String,
}

impl ObjectKey {
    /// The key `object` is stored under.
    pub fn of(object: &Value) -> ObjectKey {
        let text = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let namespace = match text("/metadata/namespace") {
            "" => DEFAULT_NAMESPACE,
            namespace => namespace,
        };
        ObjectKey {
            group: group_of(text("/apiVersion")).to_owned(),
            kind: text("/kind").to_owned(),
            namespace: namespace.to_owned(),
            name: text("/metadata/name").to_owned(),
        }
    }
}

type NamespacedName = (String, String);

/// Group, kind, namespace, and the `cluster.x-k8s.io/cluster-name` label value.
type ClusterKindKey = (String, String, String, String);

/// Objects in memory, kept as JSON text ([`CompactObject`]), with ClusterClasses and Clusters
/// also kept typed, Clusters indexed by class, objects indexed by the Cluster whose name label
/// they carry, and a count per kind: every read a reconcile or a watch event makes costs the size
/// of its answer, not of the store.
#[derive(Debug, Default)]
pub struct MemoryStore {
    objects: BTreeMap<ObjectKey, CompactObject>,
    classes: HashMap<NamespacedName, Arc<ClassEntry>>,
    clusters: BTreeMap<NamespacedName, Arc<Cluster>>,
    /// The Clusters of each class, by name: read whole by the ClusterClass webhook.
    clusters_by_class: HashMap<NamespacedName, BTreeMap<NamespacedName, Arc<Cluster>>>,
    by_cluster: HashMap<ClusterKindKey, BTreeSet<String>>,
    per_kind: HashMap<(String, String), usize>,
}

impl MemoryStore {
    /// A store holding every object of a multi-document YAML (or JSON) text.
    pub fn from_yaml(text: &str) -> Result<Self, StoreError> {
        let mut store = Self::default();
        for object in manifest::parse_manifests(text)? {
            store.insert(object)?;
        }
        Ok(store)
    }

    /// Stores `object`, replacing any object of the same group, kind, namespace and name.
    /// A missing namespace is set to `default`. Objects of our kinds are stored converted to the
    /// v1beta2 hub (`api::convert::to_hub`); an unknown version of our groups is an error.
    pub fn insert(&mut self, mut object: Value) -> Result<(), StoreError> {
        let key = ObjectKey::of(&object);
        if key.name.is_empty() {
            return Err(StoreError::NoName { kind: key.kind });
        }
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.insert("namespace".to_owned(), Value::from(key.namespace.as_str()));
        }
        // Other kinds pass through untouched; an unserved version of our groups is an error
        // naming the object (`Cluster ns/name`).
        if !key.kind.is_empty() && !key.group.is_empty() {
            object = to_hub(object)?;
        }
        self.remove_typed(&key);
        if key.group == CAPI_GROUP {
            let decode_error = |reason| StoreError::Decode {
                kind: key.kind.clone(),
                namespace: key.namespace.clone(),
                name: key.name.clone(),
                reason,
            };
            let id = (key.namespace.clone(), key.name.clone());
            match key.kind.as_str() {
                "ClusterClass" => {
                    let class: ClusterClass = decode_value(object.clone()).map_err(decode_error)?;
                    self.classes.insert(id, Arc::new(ClassEntry::new(class)));
                }
                "Cluster" => {
                    let cluster = Arc::new(decode_value::<Cluster>(object.clone()).map_err(decode_error)?);
                    if let Some(class) = class_of(&cluster, &key.namespace) {
                        self.clusters_by_class
                            .entry(class)
                            .or_default()
                            .insert(id.clone(), Arc::clone(&cluster));
                    }
                    self.clusters.insert(id, cluster);
                }
                _ => {}
            }
        }
        self.unindex(&key);
        let kept = if read_by_every_reconcile(&key, &object) {
            CompactObject::tree(object)
        } else {
            CompactObject::new(&object)
        };
        if let Some(cluster) = kept.cluster_name() {
            self.by_cluster
                .entry(cluster_kind_key(&key, cluster))
                .or_default()
                .insert(key.name.clone());
        }
        let kind = (key.group.clone(), key.kind.clone());
        if self.objects.insert(key, kept).is_none() {
            *self.per_kind.entry(kind).or_default() += 1;
        }
        Ok(())
    }

    /// Removes an object; true when it was there.
    pub fn remove(&mut self, group: &str, kind: &str, namespace: &str, name: &str) -> bool {
        let key = ObjectKey {
            group: group.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        };
        self.remove_typed(&key);
        self.unindex(&key);
        let removed = self.objects.remove(&key).is_some();
        if removed {
            if let Some(count) = self.per_kind.get_mut(&(key.group, key.kind)) {
                *count = count.saturating_sub(1);
            }
        }
        removed
    }

    /// The resourceVersion of the object held under this group, kind, namespace and name (0 when
    /// it is not a number), without reading the object.
    pub fn resource_version_of(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<u64> {
        let key = ObjectKey {
            group: group.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        };
        self.objects.get(&key).map(CompactObject::resource_version)
    }

    /// The Clusters of `namespace`, typed, in name order (nothing parsed again).
    pub fn clusters_in(&self, namespace: &str) -> Vec<Arc<Cluster>> {
        self.clusters
            .range((namespace.to_owned(), String::new())..)
            .take_while(|((cluster_namespace, _), _)| cluster_namespace == namespace)
            .map(|(_, cluster)| Arc::clone(cluster))
            .collect()
    }

    /// How many objects of a group and kind are held (kept up to date: no scan).
    pub fn count_of_kind(&self, group: &str, kind: &str) -> usize {
        self.per_kind
            .get(&(group.to_owned(), kind.to_owned()))
            .copied()
            .unwrap_or(0)
    }

    /// Drops the object stored under `key` (if any) from the index by Cluster.
    fn unindex(&mut self, key: &ObjectKey) {
        let Some(old) = self.objects.get(key) else { return };
        let Some(cluster) = old.cluster_name() else { return };
        let index_key = cluster_kind_key(key, cluster);
        if let Some(names) = self.by_cluster.get_mut(&index_key) {
            names.remove(&key.name);
            if names.is_empty() {
                self.by_cluster.remove(&index_key);
            }
        }
    }

    /// Namespace and name of every object of a group and kind, in order.
    pub fn names_of_kind(&self, group: &str, kind: &str) -> Vec<(String, String)> {
        let start = ObjectKey {
            group: group.to_owned(),
            kind: kind.to_owned(),
            namespace: String::new(),
            name: String::new(),
        };
        self.objects
            .range(start..)
            .take_while(|(key, _)| key.group == group && key.kind == kind)
            .map(|(key, _)| (key.namespace.clone(), key.name.clone()))
            .collect()
    }

    /// The number of objects held.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// True when the store holds nothing.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    fn remove_typed(&mut self, key: &ObjectKey) {
        if key.group != CAPI_GROUP {
            return;
        }
        let id = (key.namespace.clone(), key.name.clone());
        match key.kind.as_str() {
            "ClusterClass" => {
                self.classes.remove(&id);
            }
            "Cluster" => {
                let Some(old) = self.clusters.remove(&id) else {
                    return;
                };
                if let Some(class) = class_of(&old, &key.namespace) {
                    if let Some(users) = self.clusters_by_class.get_mut(&class) {
                        users.remove(&id);
                    }
                }
            }
            _ => {}
        }
    }
}

fn cluster_kind_key(key: &ObjectKey, cluster: &str) -> ClusterKindKey {
    (
        key.group.clone(),
        key.kind.clone(),
        key.namespace.clone(),
        cluster.to_owned(),
    )
}

/// Whether the object is kept parsed, shared by its readers: CRDs (every contract lookup reads
/// them all) and templates no Cluster's name label claims (a ClusterClass's, read by every
/// reconcile of each Cluster of the class, and few: a fleet's classes share them).
fn read_by_every_reconcile(key: &ObjectKey, object: &Value) -> bool {
    if key.group == CRD_GROUP {
        return key.kind == CRD_KIND;
    }
    key.kind.ends_with("Template")
        && object
            .pointer("/metadata/labels")
            .and_then(|labels| labels.get(CLUSTER_NAME_LABEL))
            .is_none()
}

/// The namespace and name of the class a Cluster uses, if it has a topology.
fn class_of(cluster: &Cluster, cluster_namespace: &str) -> Option<NamespacedName> {
    let class_ref = &cluster.spec.managed_topology()?.class_ref;
    let namespace = match class_ref.namespace.as_str() {
        "" => cluster_namespace,
        namespace => namespace,
    };
    Some((namespace.to_owned(), class_ref.name.clone()))
}

impl MemoryStore {
    /// Every CRD held, whatever namespace it was filed under (a CRD is cluster-scoped; one
    /// read from a file without a namespace is filed under `default`).
    fn crds(&self) -> impl Iterator<Item = (&ObjectKey, Cow<'_, Value>)> + '_ {
        let start = ObjectKey {
            group: CRD_GROUP.to_owned(),
            kind: CRD_KIND.to_owned(),
            namespace: String::new(),
            name: String::new(),
        };
        self.objects
            .range(start..)
            .take_while(|(key, _)| key.group == CRD_GROUP && key.kind == CRD_KIND)
            .map(|(key, crd)| (key, crd.parsed()))
    }

    /// The labels of the CRD in this store named `name`, when it holds one.
    pub fn crd_labels(&self, name: &str) -> Option<BTreeMap<String, String>> {
        self.crds()
            .find(|(key, _)| key.name == name)
            .map(|(_, crd)| labels_of(&crd))
    }

    /// The contract labels of the CRDs held that define `group`/`kind`.
    fn contract_labels_of<'a>(
        &'a self,
        group: &'a str,
        kind: &'a str,
    ) -> impl Iterator<Item = BTreeMap<String, String>> + 'a {
        self.crds()
            .filter(move |(_, crd)| contract::defines(crd, group, kind))
            .map(|(_, crd)| labels_of(&crd))
    }
}

/// Contract versions from the CRDs among the files (none offline unless the files hold some).
impl ContractVersions for MemoryStore {
    fn version_of(&self, group: &str, kind: &str) -> Option<String> {
        self.contract_labels_of(group, kind)
            .find_map(|labels| Some(contract_and_version("", &labels).ok()?.1))
    }
}

impl ObjectSource for MemoryStore {
    fn get(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        let key = ObjectKey {
            group: group.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        };
        self.objects.get(&key).map(CompactObject::shared)
    }

    fn list(&self, group: &str, kind: &str, namespace: &str) -> Vec<Arc<Value>> {
        let start = ObjectKey {
            group: group.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.to_owned(),
            name: String::new(),
        };
        self.objects
            .range(start..)
            .take_while(|(key, _)| key.group == group && key.kind == kind && key.namespace == namespace)
            .map(|(_, object)| object.shared())
            .collect()
    }

    fn list_of_cluster(&self, group: &str, kind: &str, namespace: &str, cluster: &str) -> Vec<Arc<Value>> {
        let index_key = (
            group.to_owned(),
            kind.to_owned(),
            namespace.to_owned(),
            cluster.to_owned(),
        );
        let Some(names) = self.by_cluster.get(&index_key) else {
            return Vec::new();
        };
        names
            .iter()
            .filter_map(|name| self.get(group, kind, namespace, name))
            .collect()
    }

    fn cluster_class(&self, namespace: &str, name: &str) -> Option<Arc<ClassEntry>> {
        self.classes
            .get(&(namespace.to_owned(), name.to_owned()))
            .cloned()
    }

    fn clusters_using_class(&self, class_namespace: &str, class_name: &str) -> Vec<Arc<Cluster>> {
        let Some(users) = self
            .clusters_by_class
            .get(&(class_namespace.to_owned(), class_name.to_owned()))
        else {
            return Vec::new();
        };
        users.values().cloned().collect()
    }

    fn contract_of(&self, group: &str, kind: &str, version: &str) -> Option<String> {
        self.contract_labels_of(group, kind)
            .find_map(|labels| contract_of_version(&labels, version).map(str::to_owned))
    }
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;
