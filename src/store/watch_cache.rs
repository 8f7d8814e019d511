//! An [`ObjectSource`] over a live API server: watch caches of the Cluster API kinds the webhooks
//! read, kept in a [`MemoryStore`] (typed ClusterClasses with compiled schemas, Clusters indexed by
//! class), so answering a review makes no API call.
//!
//! Kinds not known in advance (a control plane's provider kind) are fetched directly the first
//! time they are asked for, and watched from then on.
//!
//! Our kinds are watched at the v1beta2 hub version, and every object stored goes through
//! [`MemoryStore::insert`], which converts objects of our kinds to the hub: the engine sees only
//! v1beta2.
//!
//! CustomResourceDefinitions are watched too (a start-up kind): [`ContractVersions`] and
//! [`ObjectSource::contract_of`] answer from their `cluster.x-k8s.io/<contract>` labels.
//!
//! The jobs, a file each: [`discovery`] finds what to watch, [`stream`] applies the watch events,
//! [`direct`] answers reads of kinds not listed yet, [`objects`] is how an object is kept.

mod direct;
mod discovery;
mod objects;
mod stream;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use kube::Client;
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::{ClassEntry, MemoryStore, ObjectSource};
use crate::api::convert::ContractVersions;
use crate::api::Cluster;
use crate::metrics::Metrics;
use direct::{class_entry, clusters_using};
use discovery::discover_and_watch;
use objects::{identity, insert, resource_version};

pub use objects::object_value;

/// The Cluster API group and the version watched: the v1beta2 hub our types decode.
const CAPI_GROUP: &str = "cluster.x-k8s.io";
const CAPI_VERSION: &str = crate::api::HUB_VERSION;
/// The Cluster API kinds watched from the start; readiness waits for each that is installed.
pub const WATCHED_KINDS: [&str; 6] = [
    "ClusterClass",
    "Cluster",
    "MachineDeployment",
    "MachineSet",
    "Machine",
    "MachinePool",
];

type GroupKind = (String, String);

/// Watch caches of the API server behind an [`ObjectSource`].
#[derive(Clone)]
pub struct WatchCache {
    shared: Arc<Shared>,
}

struct Shared {
    store: RwLock<MemoryStore>,
    client: Client,
    runtime: Handle,
    /// Kinds with a watcher, and whether their first list has arrived.
    watched: Mutex<HashMap<GroupKind, Arc<AtomicBool>>>,
    /// Start-up kinds whose first list has not arrived (discovery counts as one).
    unsynced: AtomicUsize,
    metrics: Option<Metrics>,
    shutdown: CancellationToken,
    /// Every change a watch delivers, for controllers that react to objects of any kind.
    changes: broadcast::Sender<Changed>,
    /// Objects the watches saw deleted, with the resourceVersion of the deletion: a copy of a
    /// deleted object that reaches [`WatchCache::observe`] late (another watcher's last event
    /// for it) must not bring it back.
    tombstones: Mutex<HashMap<ObjectKey, u64>>,
}

/// Group, kind, namespace and name.
type ObjectKey = (String, String, String, String);

/// An object a watch saw change (created, updated, deleted, or listed again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// Its API group.
    pub group: String,
    /// Its kind.
    pub kind: String,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its `cluster.x-k8s.io/cluster-name` label.
    pub cluster_name: Option<String>,
}

/// How many changes a slow subscriber may fall behind before it misses some (it is told).
const CHANGES_BUFFER: usize = 4096;

impl std::fmt::Debug for WatchCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchCache")
            .field("unsynced", &self.shared.unsynced.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl WatchCache {
    /// Starts discovering and watching [`WATCHED_KINDS`] in the background; the watchers stop
    /// when `shutdown` is cancelled. Call inside the tokio runtime.
    pub fn start(client: Client, metrics: Option<Metrics>, shutdown: CancellationToken) -> Self {
        let shared = Arc::new(Shared {
            store: RwLock::new(MemoryStore::default()),
            client,
            runtime: Handle::current(),
            watched: Mutex::new(HashMap::new()),
            unsynced: AtomicUsize::new(1),
            metrics,
            shutdown,
            changes: broadcast::channel(CHANGES_BUFFER).0,
            tombstones: Mutex::new(HashMap::new()),
        });
        tokio::spawn(discover_and_watch(shared.clone()));
        Self { shared }
    }

    /// The changes every watch of this cache sees from now on.
    pub fn changes(&self) -> broadcast::Receiver<Changed> {
        self.shared.changes.subscribe()
    }

    /// True once every start-up kind has been listed: the caches can answer for the cluster.
    pub fn is_synced(&self) -> bool {
        self.shared.unsynced.load(Ordering::Acquire) == 0
    }

    /// Stores `object` as seen by another watch of the same API server (a controller's trigger),
    /// unless the cache already holds that version or a newer one, so that work triggered by an
    /// event never reads an older version than the event's.
    pub fn observe(&self, object: Value) {
        let Some((namespace, name)) = identity(&object) else {
            return;
        };
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let group = super::group_of(api_version).to_owned();
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let mut store = self.shared.store.write().unwrap_or_else(PoisonError::into_inner);
        {
            let mut tombstones = self
                .shared
                .tombstones
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let key = (group.clone(), kind.clone(), namespace.clone(), name.clone());
            match tombstones.get(&key) {
                Some(deleted) if resource_version(&object) <= *deleted => return,
                Some(_) => {
                    tombstones.remove(&key);
                }
                None => {}
            }
        }
        let cached = store.resource_version_of(&group, &kind, &namespace, &name);
        if cached.is_some_and(|cached| cached >= resource_version(&object)) {
            return;
        }
        insert(&mut store, &group, &kind, object);
    }

    /// True once `group`/`kind` is watched and its first list has arrived, so reads of it are
    /// answered from memory.
    pub fn is_kind_synced(&self, group: &str, kind: &str) -> bool {
        self.synced_kind(group, kind)
    }

    fn synced_kind(&self, group: &str, kind: &str) -> bool {
        self.shared
            .watched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(group.to_owned(), kind.to_owned()))
            .is_some_and(|synced| synced.load(Ordering::Acquire))
    }

    /// The Clusters of `namespace`, typed, in name order.
    pub fn clusters_in(&self, namespace: &str) -> Vec<Arc<Cluster>> {
        if self.synced_kind(CAPI_GROUP, "Cluster") {
            return self.read(|store| store.clusters_in(namespace));
        }
        self.read_direct(CAPI_GROUP, "Cluster", namespace, None)
            .iter()
            .filter_map(|object| crate::decode::decode_value::<Cluster>((**object).clone()).ok())
            .map(Arc::new)
            .collect()
    }

    fn read<T>(&self, read: impl FnOnce(&MemoryStore) -> T) -> T {
        read(&self.shared.store.read().unwrap_or_else(PoisonError::into_inner))
    }
}

impl ObjectSource for WatchCache {
    fn get(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        if self.synced_kind(group, kind) {
            return self.read(|store| store.get(group, kind, namespace, name));
        }
        self.read_direct(group, kind, namespace, Some(name)).pop()
    }

    fn list(&self, group: &str, kind: &str, namespace: &str) -> Vec<Arc<Value>> {
        if self.synced_kind(group, kind) {
            return self.read(|store| store.list(group, kind, namespace));
        }
        self.read_direct(group, kind, namespace, None)
    }

    fn list_of_cluster(&self, group: &str, kind: &str, namespace: &str, cluster: &str) -> Vec<Arc<Value>> {
        if self.synced_kind(group, kind) {
            return self.read(|store| store.list_of_cluster(group, kind, namespace, cluster));
        }
        super::of_cluster(self.read_direct(group, kind, namespace, None), cluster)
    }

    fn cluster_class(&self, namespace: &str, name: &str) -> Option<Arc<ClassEntry>> {
        if self.synced_kind(CAPI_GROUP, "ClusterClass") {
            return self.read(|store| store.cluster_class(namespace, name));
        }
        // Not listed yet (the server has just started): a Cluster of an existing class must not
        // be refused as naming a missing one, so read it from the API server as `get` does.
        let object = self
            .read_direct(CAPI_GROUP, "ClusterClass", namespace, Some(name))
            .pop()?;
        class_entry(&object)
    }

    fn clusters_using_class(&self, class_namespace: &str, class_name: &str) -> Vec<Arc<Cluster>> {
        if self.synced_kind(CAPI_GROUP, "Cluster") {
            return self.read(|store| store.clusters_using_class(class_namespace, class_name));
        }
        // Not listed yet: a class change must still be checked against the Clusters using it,
        // so they are read from the API server, every namespace.
        let clusters = self.read_direct(CAPI_GROUP, "Cluster", "", None);
        clusters_using(&clusters, class_namespace, class_name)
    }

    fn contract_of(&self, group: &str, kind: &str, version: &str) -> Option<String> {
        self.read(|store| store.contract_of(group, kind, version))
    }
}

/// Contract versions from the CRDs in the cache (see the module's TODO).
impl ContractVersions for WatchCache {
    fn version_of(&self, group: &str, kind: &str) -> Option<String> {
        self.read(|store| store.version_of(group, kind))
    }
}

#[cfg(test)]
#[path = "watch_cache_tests.rs"]
mod tests;
