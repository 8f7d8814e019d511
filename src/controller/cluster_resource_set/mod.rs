//! The ClusterResourceSet controllers: one per Cluster applies the resources of the sets that
//! select it to its workload cluster and records them in its binding; one per set keeps the
//! set's finalizer and resource owners and cleans its bindings on deletion; one per binding
//! deletes it with its Cluster. The decisions are [`addons`](crate::addons)'; these only carry
//! them out.

mod bindings;
mod clusters;
mod ledger;
mod resources;
mod sets;
mod status;
mod workload;

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, PartialObjectMeta};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{watcher, Controller};
use kube::Client;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::addons::matching::clusters_selected;
use crate::api::{Cluster, ClusterResourceSet, ADDONS_GROUP, RESOURCE_KIND_CONFIG_MAP, RESOURCE_KIND_SECRET};
use crate::decode::decode_value;
use crate::store::{object_value, ObjectSource, WatchCache};

use super::scope::Scope;
use super::shared_clusters::{all_of, Subscription};

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

    /// The Clusters of `namespace`, decoded.
    fn clusters_in(&self, namespace: &str) -> Vec<Cluster> {
        self.cache
            .list(CAPI_GROUP, "Cluster", namespace)
            .iter()
            .filter(|cluster| self.scope.admits_value(cluster))
            .filter_map(|cluster| decode_value::<Cluster>((**cluster).clone()).ok())
            .collect()
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
            .filter_map(|set| clusters_selected(set, &clusters).ok())
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
        run_cluster_controller(ctx.clone(), reconciled, stop.clone()),
        run_set_controller(ctx.clone(), stop.clone()),
        run_binding_controller(ctx, binding_clusters, stop),
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

/// The Cluster controller: applies the sets selecting each Cluster, woken by the shared Cluster
/// watch and by changes of sets, bindings, Secrets and ConfigMaps.
async fn run_cluster_controller(ctx: Arc<Context>, reconciled: Subscription, stop: CancellationToken) {
    let client = ctx.client.clone();
    let clusters = ctx.clusters.clone();
    let config = || watcher::Config::default().any_semantic();
    let every_cluster = all_of(&reconciled.store, &clusters);
    Controller::for_stream_with(
        Subscription::triggers(reconciled.changes),
        reconciled.store,
        clusters.clone(),
    )
    .reconcile_on(every_cluster)
    .watches_with(
        Api::all_with(client.clone(), &ctx.sets),
        ctx.sets.clone(),
        config(),
        {
            let ctx = ctx.clone();
            move |set: DynamicObject| set_changed(&ctx, &set)
        },
    )
    .watches_with(
        Api::all_with(client.clone(), &ctx.bindings),
        ctx.bindings.clone(),
        config(),
        {
            let ctx = ctx.clone();
            move |binding: DynamicObject| {
                let namespace = binding.metadata.namespace.clone().unwrap_or_default();
                let value = object_value(&binding, &ctx.bindings);
                let cluster = value["spec"]["clusterName"]
                    .as_str()
                    .or(binding.metadata.name.as_deref())
                    .unwrap_or_default()
                    .to_owned();
                Some(ctx.cluster_ref(&namespace, &cluster))
            }
        },
    )
    .watches(Api::<PartialObjectMeta<Secret>>::all(client.clone()), config(), {
        let ctx = ctx.clone();
        move |secret: PartialObjectMeta<Secret>| {
            resource_changed(&ctx, RESOURCE_KIND_SECRET, &secret.metadata)
        }
    })
    .watches(
        Api::<PartialObjectMeta<ConfigMap>>::all(client.clone()),
        config(),
        {
            let ctx = ctx.clone();
            move |config_map: PartialObjectMeta<ConfigMap>| {
                resource_changed(&ctx, RESOURCE_KIND_CONFIG_MAP, &config_map.metadata)
            }
        },
    )
    .graceful_shutdown_on(stop.clone().cancelled_owned())
    .run(clusters::reconcile_cluster, clusters::on_error, ctx.clone())
    .for_each(|result| async move {
        if let Err(err) = result {
            tracing::debug!(error = %err, "ClusterResourceSet controller (Clusters)");
        }
    })
    .await;
}

/// The set controller: keeps each set's finalizer and resource owners, and cleans its bindings
/// on deletion.
async fn run_set_controller(ctx: Arc<Context>, stop: CancellationToken) {
    let client = ctx.client.clone();
    Controller::new_with(
        ctx.scope.api(client.clone(), &ctx.sets),
        ctx.scope.watcher_config(),
        ctx.sets.clone(),
    )
    .graceful_shutdown_on(stop.clone().cancelled_owned())
    .run(sets::reconcile_set, sets::on_error, ctx.clone())
    .for_each(|result| async move {
        if let Err(err) = result {
            tracing::debug!(error = %err, "ClusterResourceSet controller (sets)");
        }
    })
    .await;
}

/// The binding controller: deletes each binding with its Cluster, followed through the shared
/// Cluster watch.
async fn run_binding_controller(ctx: Arc<Context>, binding_clusters: Subscription, stop: CancellationToken) {
    let client = ctx.client.clone();
    let clusters = ctx.clusters.clone();
    let config = || watcher::Config::default().any_semantic();
    Controller::new_with(
        Api::all_with(client.clone(), &ctx.bindings),
        config(),
        ctx.bindings.clone(),
    )
    .watches_stream_with(
        Subscription::triggers(binding_clusters.changes),
        {
            let bindings = ctx.bindings.clone();
            move |cluster: DynamicObject| {
                let namespace = cluster.metadata.namespace.clone()?;
                let name = cluster.metadata.name.clone()?;
                Some(ObjectRef::new_with(&name, bindings.clone()).within(&namespace))
            }
        },
        clusters.clone(),
    )
    .graceful_shutdown_on(stop.clone().cancelled_owned())
    .run(bindings::reconcile_binding, bindings::on_error, ctx)
    .for_each(|result| async move {
        if let Err(err) = result {
            tracing::debug!(error = %err, "ClusterResourceSet controller (bindings)");
        }
    })
    .await;
}

/// A set changed: cache it (the reconciles it triggers must see this version; a set we let go
/// of is not cached again) and reconcile the Clusters of its namespace it selects.
fn set_changed(ctx: &Context, set: &DynamicObject) -> Vec<ObjectRef<DynamicObject>> {
    let value = object_value(set, &ctx.sets);
    let released = set.metadata.deletion_timestamp.is_some()
        && set.metadata.finalizers.as_ref().is_none_or(Vec::is_empty);
    if !released {
        ctx.cache.observe(value.clone());
    }
    let Ok(typed) = decode_value::<ClusterResourceSet>(value) else {
        return Vec::new();
    };
    let namespace = typed.namespace().to_owned();
    let clusters = ctx.clusters_in(&namespace);
    clusters_selected(&typed, &clusters)
        .unwrap_or_default()
        .into_iter()
        .map(|cluster| ctx.cluster_ref(&namespace, cluster.metadata.name.as_deref().unwrap_or_default()))
        .collect()
}

/// A Secret or ConfigMap changed: the next read fetches it; reconcile the Clusters whose sets
/// list it, and the Cluster whose kubeconfig it is.
fn resource_changed(
    ctx: &Context,
    kind: &str,
    metadata: &kube::api::ObjectMeta,
) -> Vec<ObjectRef<DynamicObject>> {
    let (Some(namespace), Some(name)) = (metadata.namespace.as_deref(), metadata.name.as_deref()) else {
        return Vec::new();
    };
    let version = metadata.resource_version.as_deref();
    ctx.resources.saw(kind, namespace, name, version);
    let mut clusters = ctx.clusters_using(kind, namespace, name);
    if kind == RESOURCE_KIND_SECRET {
        if let Some(cluster) = Workloads::cluster_of(name) {
            ctx.workloads.saw_kubeconfig(namespace, cluster, version);
            clusters.push(ctx.cluster_ref(namespace, cluster));
        }
    }
    clusters
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
