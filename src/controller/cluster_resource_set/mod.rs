//! The ClusterResourceSet controllers: one per Cluster applies the resources of the sets that
//! select it to its workload cluster and records them in its binding; one per set keeps the
//! set's finalizer and resource owners and cleans its bindings on deletion; one per binding
//! deletes it with its Cluster. The decisions are [`addons`](crate::addons)'; these only carry
//! them out.

mod bindings;
mod clusters;
mod controllers;
mod ledger;
mod resources;
mod sets;
mod status;
mod workload;

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use kube::api::DynamicObject;
use kube::core::ApiResource;
use kube::runtime::reflector::ObjectRef;
use kube::Client;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::addons::matching::clusters_selected;
use crate::api::{Cluster, ClusterResourceSet, ADDONS_GROUP};
use crate::decode::decode_value;
use crate::store::{ObjectSource, WatchCache};

use super::scope::Scope;
use super::shared_clusters::Subscription;

use ledger::Ledger;
use resources::Resources;
use workload::Workloads;

const CAPI_GROUP: &str = "cluster.x-k8s.io";
const SET_KIND: &str = "ClusterResourceSet";
const BINDING_KIND: &str = "ClusterResourceSetBinding";
/// How often start-up checks whether the sets and bindings are cached.
const CACHE_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// What the three controllers share.
pub struct Context {
    /// The management cluster.
    pub client: Client,
    /// Clusters, sets and bindings, from the watch caches the webhooks also read.
    pub cache: WatchCache,
    /// The Secrets and ConfigMaps the sets list.
    resources: Resources,
    /// The workload clusters' clients.
    workloads: Workloads,
    /// What failed, and when to retry.
    ledger: Mutex<Ledger>,
    /// Serializes the status writes of each set.
    status_locks: status::Locks,
    /// The kinds, as the API serves them.
    clusters: ApiResource,
    sets: ApiResource,
    bindings: ApiResource,
    /// The sets and Clusters this instance reconciles.
    scope: Scope,
}

impl Context {
    /// The sets of `namespace`, decoded, not being deleted.
    fn sets_in(&self, namespace: &str) -> Vec<ClusterResourceSet> {
        self.cache
            .list(ADDONS_GROUP, SET_KIND, namespace)
            .iter()
            .filter(|set| self.scope.admits_value(set))
            .filter_map(|set| decode_value::<ClusterResourceSet>((**set).clone()).ok())
            .filter(|set| set.metadata.deletion_timestamp.is_none())
            .collect()
    }

    /// The Clusters of `namespace` in this instance's scope, typed as the cache keeps them.
    fn clusters_in(&self, namespace: &str) -> Vec<Arc<Cluster>> {
        let mut clusters = self.cache.clusters_in(namespace);
        clusters.retain(|cluster| self.scope.admits(&cluster.metadata));
        clusters
    }

    /// The Clusters selected by the sets of `namespace` that list the resource `kind`/`name`.
    fn clusters_using(&self, kind: &str, namespace: &str, name: &str) -> Vec<ObjectRef<DynamicObject>> {
        let sets: Vec<ClusterResourceSet> = self
            .sets_in(namespace)
            .into_iter()
            .filter(|set| {
                set.spec
                    .resources
                    .iter()
                    .any(|r| r.kind == kind && r.name == name)
            })
            .collect();
        if sets.is_empty() {
            return Vec::new();
        }
        let clusters = self.clusters_in(namespace);
        let mut selected: Vec<ObjectRef<DynamicObject>> = sets
            .iter()
            .filter_map(|set| clusters_selected(set, clusters.iter().map(Arc::as_ref)).ok())
            .flatten()
            .map(|cluster| self.cluster_ref(namespace, cluster.metadata.name.as_deref().unwrap_or_default()))
            .collect();
        selected.sort_by(|a, b| a.name.cmp(&b.name));
        selected.dedup();
        selected
    }

    fn cluster_ref(&self, namespace: &str, name: &str) -> ObjectRef<DynamicObject> {
        ObjectRef::new_with(name, self.clusters.clone()).within(namespace)
    }
}

fn addons_resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: ADDONS_GROUP.to_owned(),
        version: crate::api::HUB_VERSION.to_owned(),
        api_version: format!("{ADDONS_GROUP}/{}", crate::api::HUB_VERSION),
        kind: kind.to_owned(),
        plural: plural.to_owned(),
    }
}

/// The shared Cluster watch, as the Cluster and binding controllers read it.
pub struct Subscriptions {
    /// The Clusters the Cluster controller reconciles.
    pub reconciled: Subscription,
    /// The Clusters whose deletion the binding controller follows.
    pub bindings: Subscription,
}

/// Runs the three controllers until `stop`.
pub async fn run(
    client: Client,
    cache: WatchCache,
    clusters: ApiResource,
    subscriptions: Subscriptions,
    scope: Scope,
    stop: CancellationToken,
) {
    let Subscriptions {
        reconciled,
        bindings: mut binding_clusters,
    } = subscriptions;
    let mut reconciled = reconciled;
    let ctx = Arc::new(Context {
        client: client.clone(),
        cache: cache.clone(),
        resources: Resources::new(client.clone()),
        workloads: Workloads::new(client.clone()),
        ledger: Mutex::default(),
        status_locks: status::Locks::default(),
        clusters: clusters.clone(),
        sets: addons_resource(SET_KIND, "clusterresourcesets"),
        bindings: addons_resource(BINDING_KIND, "clusterresourcesetbindings"),
        scope,
    });
    if !wait_for_sets_and_bindings(&cache, &mut reconciled, &mut binding_clusters, &stop).await {
        return;
    }
    tokio::join!(
        controllers::run_cluster_controller(ctx.clone(), reconciled, stop.clone()),
        controllers::run_set_controller(ctx.clone(), stop.clone()),
        controllers::run_binding_controller(ctx, binding_clusters, stop),
    );
}

/// Starts caching sets and bindings and waits for their first lists, draining the shared
/// Cluster watch meanwhile; false when `stop` comes first.
async fn wait_for_sets_and_bindings(
    cache: &WatchCache,
    reconciled: &mut Subscription,
    binding_clusters: &mut Subscription,
    stop: &CancellationToken,
) -> bool {
    // Start caching sets and bindings (the first read does) and wait for their first lists, so
    // the mapping of every Secret and ConfigMap listed at start-up reads memory, not the API.
    // A kind not served (its CRD not installed) is asked for again until it is.
    while ![SET_KIND, BINDING_KIND]
        .iter()
        .all(|kind| cache.is_kind_synced(ADDONS_GROUP, kind))
    {
        for kind in [SET_KIND, BINDING_KIND] {
            if !cache.is_kind_synced(ADDONS_GROUP, kind) {
                cache.list(ADDONS_GROUP, kind, "default");
            }
        }
        // The shared Cluster watch must not wait for us meanwhile: its changes are dropped,
        // and every Cluster is reconciled once the controller starts.
        let wait = tokio::time::sleep(CACHE_POLL);
        tokio::pin!(wait);
        loop {
            tokio::select! {
                () = stop.cancelled() => return false,
                () = &mut wait => break,
                _ = reconciled.changes.next() => {}
                _ = binding_clusters.changes.next() => {}
            }
        }
    }
    true
}

/// The `namespace/name` of a set.
fn set_key(set: &ClusterResourceSet) -> ledger::SetKey {
    (set.namespace().to_owned(), set.name().to_owned())
}

/// A reconcile's failure: an API call to the management cluster.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct ReconcileError {
    what: String,
    source: kube::Error,
}

impl ReconcileError {
    fn new(what: impl Into<String>, source: kube::Error) -> Self {
        Self {
            what: what.into(),
            source,
        }
    }

    /// A write lost a race with another writer: retry at once rather than back off.
    fn is_conflict(&self) -> bool {
        matches!(&self.source, kube::Error::Api(status) if status.code == 409)
    }
}

/// `value` as a `DynamicObject`, for a write.
fn dynamic(value: &Value) -> Result<DynamicObject, kube::Error> {
    serde_json::from_value(value.clone()).map_err(kube::Error::SerdeError)
}
