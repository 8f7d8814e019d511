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

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::ApiResource;
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use kube::{discovery, Client};
use serde_json::Value;
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::{ClassEntry, MemoryStore, ObjectSource};
use crate::api::convert::ContractVersions;
use crate::api::Cluster;
use crate::managed_fields::{self, TOPOLOGY_MANAGER};
use crate::metrics::Metrics;

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
/// How long a direct read of a kind not cached yet may take before it counts as not found.
const DIRECT_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Pause between attempts to discover the Cluster API group at start-up.
const DISCOVERY_RETRY: Duration = Duration::from_secs(2);

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

/// Tombstones kept at most; beyond, the oldest knowledge is dropped (a relist corrects the rest).
const MAX_TOMBSTONES: usize = 10_000;

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
        let cached = store.get(&group, &kind, &namespace, &name);
        if cached.is_some_and(|cached| resource_version(&cached) >= resource_version(&object)) {
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

    fn read<T>(&self, read: impl FnOnce(&MemoryStore) -> T) -> T {
        read(&self.shared.store.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Reads a kind not cached yet straight from the API server (blocking this thread, bounded by
    /// [`DIRECT_READ_TIMEOUT`]) and starts watching it for the next time.
    fn read_direct(&self, group: &str, kind: &str, namespace: &str, name: Option<&str>) -> Vec<Arc<Value>> {
        if Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::CurrentThread) {
            tracing::warn!(
                group,
                kind,
                "not cached, and this thread cannot wait for the API server"
            );
            return Vec::new();
        }
        let shared = self.shared.clone();
        let (group, kind) = (group.to_owned(), kind.to_owned());
        let (namespace, name) = (namespace.to_owned(), name.map(str::to_owned));
        let read = async move {
            let resource = find_resource(&shared.client, &group, &kind).await?;
            start_watch(&shared, resource.clone(), false);
            let api: Api<DynamicObject> = match namespace.as_str() {
                "" => Api::all_with(shared.client.clone(), &resource),
                namespace => Api::namespaced_with(shared.client.clone(), namespace, &resource),
            };
            let objects = match name {
                Some(name) => api.get_opt(&name).await.ok()?.into_iter().collect(),
                None => api.list(&ListParams::default()).await.ok()?.items,
            };
            Some(
                objects
                    .into_iter()
                    .map(|o| Arc::new(object_value(&o, &resource)))
                    .collect(),
            )
        };
        let runtime = self.shared.runtime.clone();
        let fetched = tokio::task::block_in_place(|| {
            runtime.block_on(async { tokio::time::timeout(DIRECT_READ_TIMEOUT, read).await })
        });
        match fetched {
            Ok(Some(objects)) => objects,
            Ok(None) => Vec::new(),
            Err(_) => {
                tracing::warn!("reading from the API server took longer than {DIRECT_READ_TIMEOUT:?}");
                Vec::new()
            }
        }
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

/// Finds the Cluster API group (retrying until it is installed or shutdown) and starts a watcher
/// per installed kind of [`WATCHED_KINDS`].
async fn discover_and_watch(shared: Arc<Shared>) {
    let group = loop {
        match discovery::group(&shared.client, CAPI_GROUP).await {
            Ok(group) => break group,
            Err(err) => {
                tracing::warn!(error = %err, "cannot discover {CAPI_GROUP}; are the Cluster API CRDs installed?");
                tokio::select! {
                    () = shared.shutdown.cancelled() => return,
                    () = tokio::time::sleep(DISCOVERY_RETRY) => {}
                }
            }
        }
    };
    let resources = group.versioned_resources(CAPI_VERSION);
    let installed: Vec<ApiResource> = WATCHED_KINDS
        .iter()
        .filter_map(|kind| {
            let found = resources
                .iter()
                .find(|(r, _)| r.kind == *kind)
                .map(|(r, _)| r.clone());
            if found.is_none() {
                tracing::warn!(
                    kind,
                    "{CAPI_GROUP}/{CAPI_VERSION} {kind} is not served; treated as empty"
                );
                mark_empty(&shared, kind);
            }
            found
        })
        .collect();
    // One more start-up kind: the CRDs, whose contract labels give the version a reference is
    // read at and written back in (`/convert` of a Cluster's refs to v1beta1 needs them).
    shared.unsynced.fetch_add(installed.len() + 1, Ordering::AcqRel);
    shared.unsynced.fetch_sub(1, Ordering::AcqRel);
    for resource in installed {
        start_watch(&shared, resource, true);
    }
    start_watch(&shared, crd_resource(), true);
}

/// CustomResourceDefinitions (apiextensions.k8s.io/v1), held for their contract labels.
fn crd_resource() -> ApiResource {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    ApiResource::erase::<CustomResourceDefinition>(&())
}

/// Records a start-up kind the API server does not serve as cached and empty.
fn mark_empty(shared: &Shared, kind: &str) {
    shared
        .watched
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(
            (CAPI_GROUP.to_owned(), kind.to_owned()),
            Arc::new(AtomicBool::new(true)),
        );
}

/// The served resource of `group` and `kind`: for a provider kind whose CRD lists the versions
/// of the Cluster API contract (`cluster.x-k8s.io/v1beta1: v1beta1_v1beta2`), the newest of them,
/// as Cluster API reads provider objects; otherwise the group's preferred version, or else the
/// most stable and recent version serving the kind (a v1beta1-only provider kind in a group whose
/// other kinds prefer v1beta2 is served, just not at the group's preferred version).
async fn find_resource(client: &Client, group: &str, kind: &str) -> Option<ApiResource> {
    let discovered = discovery::group(client, group).await.ok()?;
    let served_at = |version: &str| {
        discovered
            .versioned_resources(version)
            .into_iter()
            .find(|(resource, _)| resource.kind == kind)
            .map(|(resource, _)| resource)
    };
    let preferred = std::iter::once(discovered.preferred_version_or_latest())
        .chain(discovered.versions())
        .find_map(served_at);
    let Some(preferred) = preferred else {
        tracing::warn!(group, kind, "kind is not served by the API server");
        return None;
    };
    let Some(version) = contract_version(client, group, kind)
        .await
        .filter(|v| *v != preferred.version)
    else {
        return Some(preferred);
    };
    let at_contract = served_at(&version);
    if at_contract.is_none() {
        tracing::warn!(
            group,
            kind,
            version,
            "the contract version is not served; reading the preferred version"
        );
    }
    Some(at_contract.unwrap_or(preferred))
}

/// The newest version the kind's CRD lists for the Cluster API contract, when it lists any.
async fn contract_version(client: &Client, group: &str, kind: &str) -> Option<String> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let name = crate::contract::crd_name::crd_name(group, kind);
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let labels = crds.get_metadata_opt(&name).await.ok()??.metadata.labels?;
    let labels = labels.into_iter().collect();
    crate::contract::versions::newest_for_contract(&name, &labels).ok()
}

/// Spawns a watcher of `resource` into the store unless one runs already. A `startup` kind
/// counts towards readiness.
fn start_watch(shared: &Arc<Shared>, resource: ApiResource, startup: bool) {
    let synced = Arc::new(AtomicBool::new(false));
    {
        let mut watched = shared.watched.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (resource.group.clone(), resource.kind.clone());
        if watched.contains_key(&key) {
            return;
        }
        watched.insert(key, synced.clone());
    }
    tokio::spawn(watch(shared.clone(), resource, synced, startup));
}

async fn watch(shared: Arc<Shared>, resource: ApiResource, synced: Arc<AtomicBool>, startup: bool) {
    let api: Api<DynamicObject> = Api::all_with(shared.client.clone(), &resource);
    let stream = watcher::watcher(api, watcher::Config::default().any_semantic()).default_backoff();
    let mut stream = std::pin::pin!(stream);
    let mut buffer = Vec::new();
    let label = format!("{}.{}", resource.kind, resource.group);
    loop {
        let next = tokio::select! {
            () = shared.shutdown.cancelled() => return,
            next = stream.next() => next,
        };
        let event = match next {
            None => return,
            Some(Err(err)) => {
                tracing::warn!(resource = %label, error = %err, "watch failed; retrying");
                continue;
            }
            Some(Ok(event)) => as_values(event, &resource),
        };
        let listed = matches!(event, Event::InitDone);
        let changed = changes_of(&shared, &resource, &event, &buffer);
        let count = {
            let mut store = shared.store.write().unwrap_or_else(PoisonError::into_inner);
            if let Event::Delete(object) = &event {
                bury(&shared, &resource, object);
            }
            apply_event(&mut store, &resource.group, &resource.kind, event, &mut buffer);
            store.count_of_kind(&resource.group, &resource.kind)
        };
        if let Some(metrics) = &shared.metrics {
            metrics.set_cache_objects(&label, count);
        }
        for change in changed {
            let _ = shared.changes.send(change);
        }
        if listed && !synced.swap(true, Ordering::AcqRel) {
            tracing::info!(resource = %label, objects = count, "watch cache synced");
            if startup {
                shared.unsynced.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

/// An object from the API server as the store keeps it: with `apiVersion` and `kind` (list items
/// may lack them), without `kubectl apply`'s copy of the object in the
/// `kubectl.kubernetes.io/last-applied-configuration` annotation, which nothing here reads, and
/// with `managedFields` slimmed to what the topology controller's apply model reads (see
/// [`managed_fields::slim`]: none on an object it never applied).
pub fn object_value(object: &DynamicObject, resource: &ApiResource) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or(Value::Null);
    managed_fields::slim(&mut value, TOPOLOGY_MANAGER);
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = metadata.get_mut("annotations").and_then(Value::as_object_mut);
        if let Some(annotations) = annotations {
            // An empty map stays: Cluster API's builtin metadata tells it from none.
            annotations.remove(LAST_APPLIED);
        }
    }
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".to_owned(), Value::from(resource.api_version.clone()));
        map.insert("kind".to_owned(), Value::from(resource.kind.clone()));
    }
    value
}

/// The annotation in which `kubectl apply` keeps a whole copy of the object it applied.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn as_values(event: Event<DynamicObject>, resource: &ApiResource) -> Event<Value> {
    match event {
        Event::Apply(object) => Event::Apply(object_value(&object, resource)),
        Event::Delete(object) => Event::Delete(object_value(&object, resource)),
        Event::Init => Event::Init,
        Event::InitApply(object) => Event::InitApply(object_value(&object, resource)),
        Event::InitDone => Event::InitDone,
    }
}

/// Records the deletion of `object` (see [`Shared::tombstones`]).
fn bury(shared: &Shared, resource: &ApiResource, object: &Value) {
    let Some((namespace, name)) = identity(object) else {
        return;
    };
    let mut tombstones = shared.tombstones.lock().unwrap_or_else(PoisonError::into_inner);
    if tombstones.len() >= MAX_TOMBSTONES {
        tombstones.clear();
    }
    let key = (resource.group.clone(), resource.kind.clone(), namespace, name);
    tombstones.insert(key, resource_version(object));
}

/// The objects `event` is about (a relist: every object listed), when anyone subscribes; sent
/// once the store holds them.
fn changes_of(
    shared: &Shared,
    resource: &ApiResource,
    event: &Event<Value>,
    buffer: &[Value],
) -> Vec<Changed> {
    if shared.changes.receiver_count() == 0 {
        return Vec::new();
    }
    let change = |object: &Value| {
        let (namespace, name) = identity(object)?;
        let cluster_name = object
            .pointer("/metadata/labels")
            .and_then(|labels| labels.get(crate::api::labels::CLUSTER_NAME_LABEL))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Some(Changed {
            group: resource.group.clone(),
            kind: resource.kind.clone(),
            namespace,
            name,
            cluster_name,
        })
    };
    match event {
        Event::Apply(object) | Event::Delete(object) => change(object).into_iter().collect(),
        Event::InitDone => buffer.iter().filter_map(change).collect(),
        Event::Init | Event::InitApply(_) => Vec::new(),
    }
}

/// Applies one watch event for `group`/`kind` to the store. A relist (`Init` .. `InitDone`) is
/// buffered and then replaces every object of the kind at once, dropping those gone meanwhile.
fn apply_event(
    store: &mut MemoryStore,
    group: &str,
    kind: &str,
    event: Event<Value>,
    buffer: &mut Vec<Value>,
) {
    match event {
        Event::Init => buffer.clear(),
        Event::InitApply(object) => buffer.push(object),
        Event::InitDone => {
            let listed: std::collections::HashSet<(String, String)> =
                buffer.iter().filter_map(identity).collect();
            for (namespace, name) in store.names_of_kind(group, kind) {
                if !listed.contains(&(namespace.clone(), name.clone())) {
                    store.remove(group, kind, &namespace, &name);
                }
            }
            for object in buffer.drain(..) {
                insert(store, group, kind, object);
            }
        }
        Event::Apply(object) => insert(store, group, kind, object),
        Event::Delete(object) => {
            if let Some((namespace, name)) = identity(&object) {
                store.remove(group, kind, &namespace, &name);
            }
        }
    }
}

/// An object's resourceVersion as a number (etcd's revision); 0 when it is not one.
fn resource_version(object: &Value) -> u64 {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn identity(object: &Value) -> Option<(String, String)> {
    let metadata = object.get("metadata")?;
    let name = metadata.get("name")?.as_str()?;
    let namespace = metadata
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Some((namespace.to_owned(), name.to_owned()))
}

/// The entry of a ClusterClass read from the API server (converted to the hub as the store
/// converts it); `None` when it does not decode.
fn class_entry(object: &Value) -> Option<Arc<ClassEntry>> {
    let (namespace, name) = identity(object)?;
    let mut store = MemoryStore::default();
    insert(&mut store, CAPI_GROUP, "ClusterClass", object.clone());
    store.cluster_class(&namespace, &name)
}

/// The Clusters of `clusters` (read from the API server) using the class `namespace/name`.
fn clusters_using(clusters: &[Arc<Value>], namespace: &str, name: &str) -> Vec<Arc<Cluster>> {
    let mut store = MemoryStore::default();
    for cluster in clusters {
        insert(&mut store, CAPI_GROUP, "Cluster", (**cluster).clone());
    }
    store.clusters_using_class(namespace, name)
}

/// Stores an object; one that does not decode into its type is dropped (with its older version)
/// and logged, so the webhooks treat it as absent rather than as it was.
fn insert(store: &mut MemoryStore, group: &str, kind: &str, object: Value) {
    let id = identity(&object);
    if let Err(err) = store.insert(object) {
        tracing::warn!(error = %err, "object not cached");
        if let Some((namespace, name)) = id {
            store.remove(group, kind, &namespace, &name);
        }
    }
}

#[cfg(test)]
#[path = "watch_cache_tests.rs"]
mod tests;
