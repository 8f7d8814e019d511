//! The three ClusterResourceSet controllers, each with what wakes it: the Cluster controller
//! (the shared Cluster watch, and changes of sets, bindings, Secrets and ConfigMaps), the set
//! controller, and the binding controller (the shared Cluster watch).

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DynamicObject};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{watcher, Controller};
use tokio_util::sync::CancellationToken;

use super::workload::Workloads;
use super::{bindings, clusters, sets, Context};
use crate::addons::matching::clusters_selected;
use crate::api::{ClusterResourceSet, RESOURCE_KIND_CONFIG_MAP, RESOURCE_KIND_SECRET};
use crate::controller::shared_clusters::{all_of, Subscription};
use crate::decode::decode_value;
use crate::store::object_value;

/// The Cluster controller: applies the sets selecting each Cluster, woken by the shared Cluster
/// watch and by changes of sets, bindings, Secrets and ConfigMaps.
pub(super) async fn run_cluster_controller(
    ctx: Arc<Context>,
    reconciled: Subscription,
    stop: CancellationToken,
) {
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
pub(super) async fn run_set_controller(ctx: Arc<Context>, stop: CancellationToken) {
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
pub(super) async fn run_binding_controller(
    ctx: Arc<Context>,
    binding_clusters: Subscription,
    stop: CancellationToken,
) {
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
    clusters_selected(&typed, clusters.iter().map(Arc::as_ref))
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
