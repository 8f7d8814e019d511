//! Where objects come from: the [`ObjectSource`] trait the engine reads through, and its
//! in-memory implementation for files and tests.

pub mod bounds;
mod class_entry;
mod compact;
pub mod contract;
mod duplicates;
mod manifest;
mod memory;
mod watch_cache;

use std::sync::Arc;

use serde_json::Value;

use crate::api::convert::ContractVersions;
use crate::api::Cluster;

pub use class_entry::ClassEntry;
pub use manifest::{
    parse_manifests, parse_manifests_noting_duplicates, parse_manifests_within, ManifestError,
};
pub use memory::{MemoryStore, ObjectKey, StoreError};
pub use watch_cache::{object_value, Changed, WatchCache, WATCHED_KINDS};

/// Read access to the objects admission and the topology engine need. Implementations answer
/// from memory (a watch cache, parsed files): no call may block on the network. As a
/// [`ContractVersions`] a source answers from the contract labels of the CRDs it holds (a CRD
/// is cluster-scoped: found whatever namespace the source files it under).
pub trait ObjectSource: ContractVersions + Send + Sync {
    /// Any object by API group (`""` for the core group), kind, namespace and name.
    fn get(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>>;

    /// All objects of a group and kind in a namespace, in name order.
    fn list(&self, group: &str, kind: &str, namespace: &str) -> Vec<Arc<Value>>;

    /// The objects of a group and kind in a namespace whose `cluster.x-k8s.io/cluster-name`
    /// label is `cluster`, in name order. Stores keep an index, so a Cluster's reconcile does not
    /// read every Cluster's objects.
    fn list_of_cluster(&self, group: &str, kind: &str, namespace: &str, cluster: &str) -> Vec<Arc<Value>> {
        of_cluster(self.list(group, kind, namespace), cluster)
    }

    /// A ClusterClass, typed, with its compiled variable schemas cached.
    fn cluster_class(&self, namespace: &str, name: &str) -> Option<Arc<ClassEntry>>;

    /// Clusters of any namespace whose `spec.topology` names this class (an empty
    /// `classNamespace` means the Cluster's own namespace), in namespace/name order.
    fn clusters_using_class(&self, class_namespace: &str, class_name: &str) -> Vec<Arc<Cluster>>;

    /// The Cluster API contract (`v1beta2`, `v1beta1`) that `version` of `group`/`kind`
    /// implements, from the `cluster.x-k8s.io/<contract>` labels of the kind's CRD, when the
    /// source holds that CRD; `None` otherwise (callers then fall back to `version` itself).
    fn contract_of(&self, _group: &str, _kind: &str, _version: &str) -> Option<String> {
        None
    }
}

/// The objects of `objects` whose `cluster.x-k8s.io/cluster-name` label is `cluster`.
fn of_cluster(objects: Vec<Arc<Value>>, cluster: &str) -> Vec<Arc<Value>> {
    objects
        .into_iter()
        .filter(|object| {
            object
                .pointer("/metadata/labels")
                .and_then(|labels| labels.get(crate::api::labels::CLUSTER_NAME_LABEL))
                .and_then(Value::as_str)
                == Some(cluster)
        })
        .collect()
}

/// The object a read returned, as an owned value: taken without a copy when no one else holds
/// it (a store read parses a fresh object for each reader), copied otherwise.
pub fn owned(object: Arc<Value>) -> Value {
    Arc::try_unwrap(object).unwrap_or_else(|shared| (*shared).clone())
}

/// The API group of an `apiVersion` (`cluster.x-k8s.io/v1beta1` -> `cluster.x-k8s.io`, `v1` -> ``).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}
