//! The controllers `serve` runs beside the webhooks: the topology controller, the ClusterClass
//! controller, the Cluster infrastructure controller and the ExtensionConfig controller (kube-rs
//! `Controller`s), run by whichever replica holds the leader Lease. They read
//! through the same watch caches as the webhooks and decide through the pure engine
//! ([`topology::reconcile`](crate::topology::reconcile),
//! [`topology::class_status`](crate::topology::class_status)); this module only carries that out.

mod backoff;
mod class_rollout;
mod class_rollout_facts;
pub mod cluster_api_webhooks;
mod cluster_class;
pub mod cluster_class_status;
mod cluster_infrastructure;
mod cluster_resource_set;
mod cluster_turns;
mod contracts;
mod events;
mod extension_config;
mod leader;
mod lifecycle;
mod namespaces;
mod revisions;
mod scope;
mod shared;
mod shared_clusters;
mod sync;
mod topology;
mod topology_finalizers;
mod topology_status;
mod topology_writes;

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use kube::Client;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use crate::store::WatchCache;
use shared::Shared;
use shared_clusters::SharedClusters;

pub use leader::LEASE_DURATION;
pub use scope::{Scope, WATCH_FILTER_LABEL};
pub use sync::FIELD_MANAGER;

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
    /// ClusterClass changes rolled out in waves under a ClusterClassRollout (idle when
    /// `rollout.capi-topology.io` is not served).
    ClassRollout,
    /// Keeps Cluster API's own admission webhooks for Clusters, ClusterClasses and
    /// ExtensionConfigs switched off (beside Cluster API only).
    ClusterApiWebhooks,
}

impl ControllerKind {
    /// What runs when no list is given: everything capi-topology needs on its own.
    pub const STANDALONE: [ControllerKind; 6] = [
        ControllerKind::Topology,
        ControllerKind::ClusterClass,
        ControllerKind::ClusterInfrastructure,
        ControllerKind::ClusterResourceSet,
        ControllerKind::ExtensionConfig,
        ControllerKind::ClassRollout,
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

/// Waits for leadership, then runs the controllers `options` names until `shutdown` (returns
/// `Ok`) or until the Lease is lost (returns an error: the process should exit, as another
/// replica may lead now).
pub async fn run(
    client: Client,
    cache: WatchCache,
    options: ControllerOptions,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let lease = options.scope.lease_name();
    let elector = leader::LeaderElector::new(
        client.clone(),
        &options.lease_namespace,
        &lease,
        &options.identity,
    );
    let Some(leadership) = elector.lead(&shutdown).await else {
        return Ok(());
    };
    let stop = leadership.stop();
    let (shared, rediscoveries) = Shared::start(&client, &cache, &options, &stop).await;
    let on = |kind| options.controllers.contains(&kind);
    // One Cluster watch and store for every controller of Clusters; only the controllers that
    // run subscribe (a subscriber not polled would hold the watch back).
    let mut clusters = SharedClusters::new(
        client.clone(),
        &shared.clusters,
        options.scope.clone(),
        cache.clone(),
    );
    let mut running: Vec<BoxFuture<'static, ()>> = Vec::new();
    if on(ControllerKind::Topology) {
        running.push(topology::run(&shared, clusters.subscribe(), stop.clone()).boxed());
    }
    if on(ControllerKind::ClusterClass) {
        running.push(cluster_class::run(&shared, rediscoveries, stop.clone()).boxed());
    }
    if on(ControllerKind::ClassRollout) {
        running.push(class_rollout::run(&shared, stop.clone()).boxed());
    }
    if on(ControllerKind::ClusterInfrastructure) {
        running.push(cluster_infrastructure::run(&shared, clusters.subscribe(), stop.clone()).boxed());
    }
    if on(ControllerKind::ClusterResourceSet) {
        let subscriptions = cluster_resource_set::Subscriptions {
            reconciled: clusters.subscribe(),
            bindings: clusters.subscribe(),
        };
        let (cache, resource, scope) = (cache.clone(), shared.clusters.clone(), options.scope.clone());
        let run = cluster_resource_set::run(
            client.clone(),
            cache,
            resource,
            subscriptions,
            scope,
            stop.clone(),
        );
        running.push(run.boxed());
    }
    if on(ControllerKind::ExtensionConfig) {
        let ctx = Arc::clone(&shared.extension_configs);
        running.push(extension_config::run(client.clone(), ctx, stop.clone()).boxed());
    }
    if on(ControllerKind::ClusterApiWebhooks) {
        running.push(cluster_api_webhooks::run(client.clone(), stop.clone()).boxed());
    }
    running.push(clusters.run(stop).boxed());
    tracing::info!(controllers = ?options.controllers, %lease, "controllers running");
    futures::future::join_all(running).await;
    leadership.finish().await
}
