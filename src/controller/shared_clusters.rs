//! One watch and one store of the Clusters for every controller that reconciles them (topology,
//! Cluster infrastructure, ClusterResourceSet): one kube `reflector` whose changes are handed to
//! each controller (kube's shared streams need a static kind).
//!
//! Each Cluster the watch delivers goes first into the watch cache (unless it holds that version
//! or a newer one), which is where the controllers read it; the reflector's own store, which
//! only names the Clusters to reconcile, keeps their metadata alone (the whole Clusters held a
//! second time were 19 MB of the heap at 1,000 Clusters).

use futures::channel::mpsc;
use futures::{SinkExt, Stream, StreamExt};
use kube::api::{Api, DynamicObject};
use kube::core::ApiResource;
use kube::runtime::reflector::{self, store::Writer, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::Client;
use kube::Resource;
use tokio_util::sync::CancellationToken;

use super::scope::Scope;
use crate::store::{object_value, WatchCache};

/// Cluster changes a subscriber may lag behind before the watch waits for it.
const BUFFER: usize = 4096;
/// The annotation `kubectl apply` keeps a whole copy of the object in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The shared Cluster watch, before it runs: controllers subscribe, then [`SharedClusters::run`]
/// feeds them all.
pub struct SharedClusters {
    writer: Writer<DynamicObject>,
    api: Api<DynamicObject>,
    scope: Scope,
    cache: WatchCache,
    resource: ApiResource,
    subscribers: Vec<mpsc::Sender<DynamicObject>>,
}

/// What a controller reconciling Clusters is given: the changed Clusters and the store.
pub struct Subscription {
    /// Each Cluster as it changes.
    pub changes: mpsc::Receiver<DynamicObject>,
    /// Every Cluster.
    pub store: Store<DynamicObject>,
}

impl Subscription {
    /// The changes as a controller's trigger stream.
    pub fn triggers(
        changes: mpsc::Receiver<DynamicObject>,
    ) -> impl Stream<Item = Result<DynamicObject, watcher::Error>> + Send + 'static {
        changes.map(Ok)
    }
}

impl SharedClusters {
    /// The Clusters (`resource`) in `scope`, not watched until [`SharedClusters::run`], kept
    /// whole in `cache`.
    pub fn new(client: Client, resource: &ApiResource, scope: Scope, cache: WatchCache) -> Self {
        Self {
            writer: Writer::new(resource.clone()),
            api: scope.api(client, resource),
            scope,
            cache,
            resource: resource.clone(),
            subscribers: Vec::new(),
        }
    }

    /// A subscription; the subscriber must keep reading its changes (a full buffer holds the
    /// watch, and every other subscriber, back).
    pub fn subscribe(&mut self) -> Subscription {
        let (sender, changes) = mpsc::channel(BUFFER);
        self.subscribers.push(sender);
        Subscription {
            changes,
            store: self.writer.as_reader(),
        }
    }

    /// Watches the Clusters into the store and to every subscriber until `stop`; nothing when
    /// nobody subscribed.
    pub async fn run(self, stop: CancellationToken) {
        let Self {
            writer,
            api,
            scope,
            cache,
            resource,
            mut subscribers,
        } = self;

        if subscribers.is_empty() {
            return;
        }
        let stream = reflector::reflector(
            writer,
            watcher(api, scope.watcher_config())
                .default_backoff()
                .filter(move |event| futures::future::ready(in_scope(&scope, event)))
                .inspect(move |event| keep_whole(&cache, &resource, event))
                .modify(keep_metadata),
        )
        .applied_objects();
        let mut stream = std::pin::pin!(stream);
        loop {
            let next = tokio::select! {
                () = stop.cancelled() => return,
                next = stream.next() => next,
            };
            match next {
                None => return,
                Some(Err(err)) => tracing::warn!(error = %err, "Cluster watch failed; retrying"),
                Some(Ok(cluster)) => {
                    for subscriber in &mut subscribers {
                        // A subscriber gone (its controller stopped) is not waited for.
                        let _ = subscriber.send(cluster.clone()).await;
                    }
                }
            }
        }
    }
}

/// False for the event of a Cluster out of `scope` (of a namespace the watch could not leave out).
fn in_scope(scope: &Scope, event: &Result<watcher::Event<DynamicObject>, watcher::Error>) -> bool {
    match event {
        Ok(
            watcher::Event::Apply(cluster)
            | watcher::Event::InitApply(cluster)
            | watcher::Event::Delete(cluster),
        ) => scope.admits(cluster.meta()),
        _ => true,
    }
}

/// Puts the Cluster an event brings into the watch cache, where the controllers read it (a
/// deleted one is left to the cache's own watch, which remembers the deletion).
fn keep_whole(
    cache: &WatchCache,
    resource: &ApiResource,
    event: &Result<watcher::Event<DynamicObject>, watcher::Error>,
) {
    if let Ok(watcher::Event::Apply(cluster) | watcher::Event::InitApply(cluster)) = event {
        cache.observe(object_value(cluster, resource));
    }
}

/// What the reflector's store keeps of a Cluster: its metadata (without `managedFields` and the
/// `last-applied-configuration` annotation); the rest is read from the watch cache.
fn keep_metadata(cluster: &mut DynamicObject) {
    cluster.metadata.managed_fields = None;
    if let Some(annotations) = cluster.metadata.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
    cluster.data = serde_json::Value::Object(serde_json::Map::new());
}

/// Every Cluster in `store` as it is now, as a stream of reconcile requests.
pub fn all_of(
    store: &Store<DynamicObject>,
    resource: &ApiResource,
) -> impl Stream<Item = reflector::ObjectRef<DynamicObject>> + Send + 'static {
    let refs: Vec<_> = store
        .state()
        .iter()
        .map(|cluster| reflector::ObjectRef::from_obj_with(cluster.as_ref(), resource.clone()))
        .collect();
    futures::stream::iter(refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_metadata_is_kept_without_managed_fields_and_the_last_applied_copy() {
        let mut cluster: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Cluster",
            "metadata": {
                "name": "dev",
                "annotations": {LAST_APPLIED: "{}", "keep": "yes"},
                "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
            },
            "spec": {"topology": {"version": "v1.34.0"}},
        }))
        .unwrap();
        keep_metadata(&mut cluster);
        assert!(cluster.metadata.managed_fields.is_none());
        let annotations = cluster.metadata.annotations.as_ref().unwrap();
        assert_eq!(annotations.keys().collect::<Vec<_>>(), ["keep"]);
        assert_eq!(cluster.data, serde_json::json!({}));
        assert_eq!(cluster.metadata.name.as_deref(), Some("dev"));
    }
}
