//! The controllers `serve` runs beside the webhooks: the topology controller, the ClusterClass
//! controller, the Cluster infrastructure controller and the ExtensionConfig controller (kube-rs
//! `Controller`s), run by whichever replica holds the leader Lease. They read
//! through the same watch caches as the webhooks and decide through the pure engine
//! ([`topology::reconcile`](crate::topology::reconcile),
//! [`topology::class_status`](crate::topology::class_status)); this module only carries that out.

mod backoff;
pub mod cluster_api_webhooks;
mod cluster_class;
pub mod cluster_class_status;
mod cluster_infrastructure;
mod cluster_resource_set;
mod contracts;
mod events;
mod extension_config;
mod leader;
mod lifecycle;
mod namespaces;
mod scope;
mod shared_clusters;
mod sync;
mod topology;
mod topology_finalizers;
mod topology_status;
mod topology_writes;

use std::sync::Arc;

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::core::ApiResource;
use kube::runtime::controller::Config as ControllerConfig;
use kube::runtime::events::Reporter;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{watcher, Controller};
use kube::Client;
use tokio_util::sync::CancellationToken;

use crate::api::labels::CLUSTER_NAME_LABEL;
use crate::metrics::Metrics;
use crate::runtime::{RuntimeExtensions, SharedRegistry};
use crate::store::{object_value, ObjectSource, WatchCache};

pub use leader::LEASE_DURATION;
pub use scope::{Scope, WATCH_FILTER_LABEL};
pub use sync::FIELD_MANAGER;

/// Clusters the topology controller reconciles at once. A ClusterClass change queues every
/// Cluster of the class at once: unbounded, 2,000 reconciles each held their blueprint, desired
/// and current objects in memory together (controller RSS grew by ~0.4 MiB per Cluster during
/// the change). Cluster API's default `--cluster-topology-concurrency` is 10; each reconcile
/// mostly waits on the API server, so more run at once here.
const TOPOLOGY_CONCURRENCY: u16 = 32;

/// A controller `serve` can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum ControllerKind {
    /// The topology controller: a Cluster's desired objects, applied server-side.
    Topology,
    /// The ClusterClass status controller (and DiscoverVariables).
    ClusterClass,
    /// The Cluster's side of the infrastructure provider contract (seed 001). Off beside Cluster
    /// API, whose core manager does it.
    ClusterInfrastructure,
    /// ClusterResourceSets (seed 004). Off beside Cluster API, whose core manager always runs its own.
    ClusterResourceSet,
    /// ExtensionConfig discovery for runtime extensions.
    ExtensionConfig,
    /// Keeps Cluster API's own admission webhooks for Clusters, ClusterClasses and
    /// ExtensionConfigs switched off (beside Cluster API only).
    ClusterApiWebhooks,
}

impl ControllerKind {
    /// What runs when no list is given: everything capi-topology needs on its own.
    pub const STANDALONE: [ControllerKind; 5] = [
        ControllerKind::Topology,
        ControllerKind::ClusterClass,
        ControllerKind::ClusterInfrastructure,
        ControllerKind::ClusterResourceSet,
        ControllerKind::ExtensionConfig,
    ];
}

/// How the controllers run.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// The controllers to run.
    pub controllers: Vec<ControllerKind>,
    /// Namespace of the leader Lease (the pod's namespace).
    pub lease_namespace: String,
    /// This replica's name in the Lease (the pod's name).
    pub identity: String,
    /// Where Runtime Extension calls are counted.
    pub metrics: Option<Metrics>,
    /// The objects this instance reconciles (`--watch-filter`, `--namespace`).
    pub scope: Scope,
}

/// Waits for leadership, then runs both controllers until `shutdown` (returns `Ok`) or until the
/// Lease is lost (returns an error: the process should exit, as another replica may lead now).
pub async fn run(
    client: Client,
    cache: WatchCache,
    options: ControllerOptions,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let elector = leader::LeaderElector::new(
        client.clone(),
        &options.lease_namespace,
        &options.scope.lease_name(),
        &options.identity,
    );
    if !elector.acquire(&shutdown).await {
        return Ok(());
    }
    let lost = CancellationToken::new();
    let stop = CancellationToken::new();
    let holder = tokio::spawn({
        let (shutdown, lost) = (shutdown.clone(), lost.clone());
        async move { elector.hold(shutdown, lost).await }
    });
    let stopper = tokio::spawn({
        let (shutdown, lost, stop) = (shutdown.clone(), lost.clone(), stop.clone());
        async move {
            tokio::select! {
                () = shutdown.cancelled() => {}
                () = lost.cancelled() => {}
            }
            stop.cancel();
        }
    });

    let clusters = capi_resource("Cluster", "clusters");
    let classes = capi_resource("ClusterClass", "clusterclasses");
    let machine_deployments = capi_resource("MachineDeployment", "machinedeployments");
    let reporter = Reporter {
        controller: FIELD_MANAGER.to_owned(),
        instance: Some(options.identity.clone()),
    };
    // The handlers of the ExtensionConfigs, as their controller discovers them (warmed up before
    // any other controller calls an extension).
    let extension_registry = SharedRegistry::default();
    let (rediscovered, rediscoveries) = tokio::sync::mpsc::unbounded_channel();
    let extension_ctx = Arc::new(extension_config::Context {
        syncer: sync::Syncer::new(client.clone()),
        client: client.clone(),
        registry: extension_registry.clone(),
        rediscovered,
    });
    extension_config::warm_up(&extension_ctx).await;
    let extensions = Arc::new(RuntimeExtensions::shared(
        extension_registry.clone(),
        tokio::runtime::Handle::current(),
        namespaces::watch(client.clone(), stop.clone()),
        options.metrics.clone(),
    ));
    let topology_ctx = Arc::new(topology_writes::Context {
        cache: cache.clone(),
        syncer: sync::Syncer::new(client.clone()),
        recorder: events::EventRecorder::new(client.clone(), reporter.clone()),
        resource: clusters.clone(),
        failures: backoff::Backoff::new(topology::FIRST_RETRY, topology::MAX_RETRY),
        extensions: Arc::clone(&extensions),
    });
    let class_ctx = Arc::new(cluster_class::Context {
        cache: cache.clone(),
        syncer: sync::Syncer::new(client.clone()),
        resource: classes.clone(),
        client: client.clone(),
        extensions,
        scope: options.scope.clone(),
    });
    let infrastructure_ctx = Arc::new(cluster_infrastructure::Context {
        cache: cache.clone(),
        syncer: sync::Syncer::new(client.clone()),
        recorder: events::EventRecorder::new(client.clone(), reporter.clone()),
        resource: clusters.clone(),
        failures: backoff::Backoff::new(
            cluster_infrastructure::FIRST_RETRY,
            cluster_infrastructure::MAX_RETRY,
        ),
        contracts: contracts::Contracts::new(client.clone(), cache.clone()),
        waits_for_delete_hook: options.controllers.contains(&ControllerKind::Topology),
    });
    let config = || watcher::Config::default().any_semantic();
    let on = |kind| options.controllers.contains(&kind);
    // One Cluster watch and store for every controller of Clusters; only the controllers that
    // run subscribe (a subscriber not polled would hold the watch back).
    let mut shared = shared_clusters::SharedClusters::new(client.clone(), &clusters, options.scope.clone());
    let topology_clusters = on(ControllerKind::Topology).then(|| shared.subscribe());
    let infrastructure_clusters = on(ControllerKind::ClusterInfrastructure).then(|| shared.subscribe());
    let resource_set_clusters =
        on(ControllerKind::ClusterResourceSet).then(|| cluster_resource_set::Subscriptions {
            reconciled: shared.subscribe(),
            bindings: shared.subscribe(),
        });

    let (users, md_cache) = (cache.clone(), cache.clone());
    let (cluster_ref, owner_ref, class_resource, md_resource) = (
        clusters.clone(),
        clusters.clone(),
        classes.clone(),
        machine_deployments.clone(),
    );
    let topology_controller = topology_clusters.map(|subscription| {
        Controller::for_stream_with(
            shared_clusters::Subscription::triggers(subscription.changes),
            subscription.store,
            clusters.clone(),
        )
        // Cluster API's topology finalizers on MachineSets and MachineDeployments being deleted.
        .reconcile_on(topology_finalizers::triggers(&cache, clusters.clone()))
        .watches_with(
            Api::all_with(client.clone(), &classes),
            classes.clone(),
            config(),
            move |class: DynamicObject| {
                users.observe(object_value(&class, &class_resource));
                let namespace = class.metadata.namespace.clone().unwrap_or_default();
                let name = class.metadata.name.clone().unwrap_or_default();
                users
                    .clusters_using_class(&namespace, &name)
                    .iter()
                    .filter_map(|cluster| {
                        let name = cluster.metadata.name.clone()?;
                        let namespace = cluster.metadata.namespace.clone()?;
                        Some(ObjectRef::new_with(&name, cluster_ref.clone()).within(&namespace))
                    })
                    .collect::<Vec<_>>()
            },
        )
        .watches_with(
            Api::all_with(client.clone(), &machine_deployments),
            machine_deployments,
            config(),
            move |md: DynamicObject| {
                // The reconcile this triggers must see this version, not an older cached one.
                md_cache.observe(object_value(&md, &md_resource));
                let cluster = md
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(CLUSTER_NAME_LABEL))
                    .cloned();
                let namespace = md.metadata.namespace.clone();
                cluster
                    .zip(namespace)
                    .map(|(name, namespace)| ObjectRef::new_with(&name, owner_ref.clone()).within(&namespace))
            },
        )
        .with_config(ControllerConfig::default().concurrency(TOPOLOGY_CONCURRENCY))
        .graceful_shutdown_on(stop.clone().cancelled_owned())
        .run(topology::reconcile_cluster, topology::on_error, topology_ctx)
        .for_each(|result| async move {
            if let Err(err) = result {
                tracing::debug!(error = %err, "topology controller");
            }
        })
    });
    let class_controller = Controller::new_with(
        options.scope.api(client.clone(), &classes),
        options.scope.watcher_config(),
        classes.clone(),
    );
    // Classes whose DiscoverVariables handler's ExtensionConfig was discovered anew are reconciled.
    let class_triggers = cluster_class::classes_of_configs(rediscoveries, class_controller.store(), classes);
    let class_controller = class_controller
        .reconcile_on(class_triggers)
        .graceful_shutdown_on(stop.clone().cancelled_owned())
        .run(cluster_class::reconcile_class, cluster_class::on_error, class_ctx)
        .for_each(|result| async move {
            if let Err(err) = result {
                tracing::debug!(error = %err, "ClusterClass controller");
            }
        });
    let infrastructure_controller = infrastructure_clusters.map(|subscription| {
        Controller::for_stream_with(
            shared_clusters::Subscription::triggers(subscription.changes),
            subscription.store,
            clusters.clone(),
        )
        .reconcile_on(cluster_infrastructure::triggers(cache.clone(), clusters.clone()))
        .graceful_shutdown_on(stop.clone().cancelled_owned())
        .run(
            cluster_infrastructure::reconcile,
            cluster_infrastructure::on_error,
            infrastructure_ctx,
        )
        .for_each(|result| async move {
            if let Err(err) = result {
                tracing::debug!(error = %err, "Cluster infrastructure controller");
            }
        })
    });
    let resource_sets = resource_set_clusters.map(|subscriptions| {
        cluster_resource_set::run(
            client.clone(),
            cache.clone(),
            clusters.clone(),
            subscriptions,
            options.scope.clone(),
            stop.clone(),
        )
    });
    let cluster_watch = shared.run(stop.clone());
    let extension_configs = extension_config::run(client.clone(), extension_ctx, stop.clone());
    let webhooks = cluster_api_webhooks::run(client.clone(), stop.clone());
    tracing::info!(controllers = ?options.controllers, "controllers running");
    tokio::join!(
        maybe(topology_controller),
        when(on(ControllerKind::ClusterClass), class_controller),
        maybe(infrastructure_controller),
        maybe(resource_sets),
        when(on(ControllerKind::ExtensionConfig), extension_configs),
        when(on(ControllerKind::ClusterApiWebhooks), webhooks),
        cluster_watch,
    );
    stopper.abort();
    let _ = holder.await;
    if lost.is_cancelled() {
        anyhow::bail!("leadership lost; exiting so another replica can lead");
    }
    Ok(())
}

/// Runs `controller` when `enabled`; a future never polled starts no watch.
async fn when(enabled: bool, controller: impl std::future::Future<Output = ()>) {
    if enabled {
        controller.await;
    }
}

/// Runs `controller` when there is one.
async fn maybe(controller: Option<impl std::future::Future<Output = ()>>) {
    if let Some(controller) = controller {
        controller.await;
    }
}

/// A `cluster.x-k8s.io/v1beta2` resource (the hub: what the controllers read and write).
fn capi_resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "cluster.x-k8s.io".to_owned(),
        version: crate::api::HUB_VERSION.to_owned(),
        api_version: format!("cluster.x-k8s.io/{}", crate::api::HUB_VERSION),
        kind: kind.to_owned(),
        plural: plural.to_owned(),
    }
}
