//! Reads before a kind is listed: a kind not cached yet is read straight from the API server
//! (bounded in time) and watched from then on; a ClusterClass or the Clusters using one read that
//! way are decoded as the store decodes them.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;
use tokio::runtime::{Handle, RuntimeFlavor};

use super::discovery::find_resource;
use super::objects::{identity, insert, object_value};
use super::stream::start_watch;
use super::{WatchCache, CAPI_GROUP};
use crate::api::Cluster;
use crate::store::{ClassEntry, MemoryStore, ObjectSource};

/// How long a direct read of a kind not cached yet may take before it counts as not found.
const DIRECT_READ_TIMEOUT: Duration = Duration::from_secs(5);

impl WatchCache {
    /// Reads a kind not cached yet straight from the API server (blocking this thread, bounded by
    /// [`DIRECT_READ_TIMEOUT`]) and starts watching it for the next time.
    pub(super) fn read_direct(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
        name: Option<&str>,
    ) -> Vec<Arc<Value>> {
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

/// The entry of a ClusterClass read from the API server (converted to the hub as the store
/// converts it); `None` when it does not decode.
pub(super) fn class_entry(object: &Value) -> Option<Arc<ClassEntry>> {
    let (namespace, name) = identity(object)?;
    let mut store = MemoryStore::default();
    insert(&mut store, CAPI_GROUP, "ClusterClass", object.clone());
    store.cluster_class(&namespace, &name)
}

/// The Clusters of `clusters` (read from the API server) using the class `namespace/name`.
pub(super) fn clusters_using(clusters: &[Arc<Value>], namespace: &str, name: &str) -> Vec<Arc<Cluster>> {
    let mut store = MemoryStore::default();
    for cluster in clusters {
        insert(&mut store, CAPI_GROUP, "Cluster", (**cluster).clone());
    }
    store.clusters_using_class(namespace, name)
}
