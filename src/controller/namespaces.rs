//! The labels of every Namespace, from a metadata-only watch: what a Runtime Extension handler's
//! `namespaceSelector` is matched against when the topology controller calls it.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::{self, watcher};
use kube::runtime::WatchStreamExt;
use kube::Client;
use tokio_util::sync::CancellationToken;

use crate::runtime::NamespaceLookup;

/// Starts watching the Namespaces until `stop`; the lookup answers from what the watch has seen
/// (a namespace not seen yet is not found, and the call needing it is retried).
pub fn watch(client: Client, stop: CancellationToken) -> NamespaceLookup {
    let (reader, writer) = reflector::store();
    let stream = watcher(
        Api::<PartialObjectMeta<Namespace>>::all(client),
        watcher::Config::default(),
    )
    .default_backoff()
    .reflect(writer)
    .for_each(|event| async move {
        if let Err(error) = event {
            tracing::warn!(error = %error, "watching Namespaces");
        }
    });
    tokio::spawn(async move {
        tokio::select! {
            () = stream => {}
            () = stop.cancelled() => {}
        }
    });
    Arc::new(move |name: &str| {
        let namespace = reader.get(&ObjectRef::new(name))?;
        let labels: BTreeMap<String, String> = namespace.metadata.labels.clone().unwrap_or_default();
        Some(labels)
    })
}
