//! What the controllers of one leading replica share, built once before any of them starts: the
//! client and watch cache, the kinds they read and write, the event reporter, and the Runtime
//! Extensions with their registry (warmed up first, so no controller calls an extension the
//! registry does not know yet).

use std::sync::Arc;

use kube::core::ApiResource;
use kube::runtime::events::Reporter;
use kube::Client;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::cluster_turns::ClusterTurns;
use super::events::EventRecorder;
use super::revisions::Revisions;
use super::sync::{Syncer, FIELD_MANAGER};
use super::{extension_config, namespaces, ControllerOptions};
use crate::runtime::{RuntimeExtensions, SharedRegistry};
use crate::store::WatchCache;

/// What every controller of this replica is built from.
pub struct Shared {
    /// The management cluster.
    pub client: Client,
    /// The watch caches the webhooks also read.
    pub cache: WatchCache,
    /// How the controllers run (which, and over which objects).
    pub options: ControllerOptions,
    /// Clusters at the hub version.
    pub clusters: ApiResource,
    /// ClusterClasses at the hub version.
    pub classes: ApiResource,
    /// MachineDeployments at the hub version.
    pub machine_deployments: ApiResource,
    /// The ExtensionConfig controller's context, whose registry the extensions read.
    pub extension_configs: Arc<extension_config::Context>,
    /// The Runtime Extensions every controller calls through.
    pub extensions: Arc<RuntimeExtensions>,
    /// ClusterClass revisions: which one each Cluster runs, which one it was applied at.
    pub revisions: Arc<Revisions>,
    /// One reconcile of a Cluster at a time across the controllers that write it.
    pub cluster_turns: ClusterTurns,
}

impl Shared {
    /// Builds what the controllers share and warms the extension registry up; also returns the
    /// names of the ExtensionConfigs discovered anew (for the ClusterClass controller).
    pub async fn start(
        client: &Client,
        cache: &WatchCache,
        options: &ControllerOptions,
        stop: &CancellationToken,
    ) -> (Shared, UnboundedReceiver<String>) {
        let registry = SharedRegistry::default();
        let (rediscovered, rediscoveries) = tokio::sync::mpsc::unbounded_channel();
        let extension_configs = Arc::new(extension_config::Context {
            syncer: Syncer::new(client.clone()),
            client: client.clone(),
            registry: registry.clone(),
            rediscovered,
        });
        extension_config::warm_up(&extension_configs).await;
        let extensions = Arc::new(RuntimeExtensions::shared(
            registry,
            tokio::runtime::Handle::current(),
            namespaces::watch(client.clone(), stop.clone()),
            options.metrics.clone(),
        ));
        let shared = Shared {
            client: client.clone(),
            cache: cache.clone(),
            options: options.clone(),
            clusters: capi_resource("Cluster", "clusters"),
            classes: capi_resource("ClusterClass", "clusterclasses"),
            machine_deployments: capi_resource("MachineDeployment", "machinedeployments"),
            extension_configs,
            extensions,
            revisions: Arc::new(Revisions::discover(client).await),
            cluster_turns: ClusterTurns::default(),
        };
        (shared, rediscoveries)
    }

    /// An event recorder naming this replica.
    pub fn recorder(&self) -> EventRecorder {
        let reporter = Reporter {
            controller: FIELD_MANAGER.to_owned(),
            instance: Some(self.options.identity.clone()),
        };
        EventRecorder::new(self.client.clone(), reporter)
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
