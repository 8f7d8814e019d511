//! The watch streams: one task per watched kind applies its events to the store, records
//! deletions, tells subscribers what changed and marks the kind synced once listed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::core::ApiResource;
use kube::runtime::watcher::{self, Event};
use kube::runtime::WatchStreamExt;
use serde_json::Value;

use super::objects::{identity, insert, owned_object_value, resource_version};
use super::{Changed, Shared};
use crate::store::MemoryStore;

/// Tombstones kept at most; beyond, the oldest knowledge is dropped (a relist corrects the rest).
const MAX_TOMBSTONES: usize = 10_000;

/// Spawns a watcher of `resource` into the store unless one runs already. A `startup` kind
/// counts towards readiness.
pub(super) fn start_watch(shared: &Arc<Shared>, resource: ApiResource, startup: bool) {
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

/// Watches `resource` until shutdown, applying each event to the store (see [`apply_event`]).
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

fn as_values(event: Event<DynamicObject>, resource: &ApiResource) -> Event<Value> {
    match event {
        Event::Apply(object) => Event::Apply(owned_object_value(object, resource)),
        Event::Delete(object) => Event::Delete(owned_object_value(object, resource)),
        Event::Init => Event::Init,
        Event::InitApply(object) => Event::InitApply(owned_object_value(object, resource)),
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
pub(super) fn apply_event(
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
                insert_unless_older(store, group, kind, object);
            }
        }
        Event::Apply(object) => insert_unless_older(store, group, kind, object),
        Event::Delete(object) => {
            if let Some((namespace, name)) = identity(&object) {
                store.remove(group, kind, &namespace, &name);
            }
        }
    }
}

/// Stores `object` unless the store holds a newer version of it: a write of this process, kept
/// as the API server answered it ([`WatchCache::observe`](super::WatchCache::observe)), before
/// this stream delivered the versions that came before it. The cache never moves an object back
/// in time (a reconcile reading the older version would act on what it has already done, e.g.
/// call a lifecycle hook it had just marked done). The same version is stored again: it
/// replaces a kept API answer (whole `managedFields`) with the watch's slimmed form.
fn insert_unless_older(store: &mut MemoryStore, group: &str, kind: &str, object: Value) {
    if let Some((namespace, name)) = identity(&object) {
        let cached = store.resource_version_of(group, kind, &namespace, &name);
        if cached.is_some_and(|cached| cached > resource_version(&object)) {
            return;
        }
    }
    insert(store, group, kind, object);
}
