//! The ExtensionConfig controller: injects each config's CA from the Secret its annotation names,
//! calls its Discovery hook, registers the handlers found in the shared registry every caller of
//! extensions reads, and writes `status.handlers` and the `Discovered` condition. A config is
//! discovered again when it or its CA Secret changes, and every [`REDISCOVER`]; a deleted one is
//! removed from the registry. [`warm_up`] discovers every config once before the other
//! controllers call extensions, as Cluster API's warmup does.

mod ca;
mod status;

use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, PartialObjectMeta};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{watcher, Controller, WatchStreamExt};
use kube::{Client, ResourceExt};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::sync::Syncer;
use crate::api::runtime::{ExtensionConfig, RUNTIME_GROUP, RUNTIME_VERSION};
use crate::clock::now_rfc3339;
use crate::decode::decode_value;
use crate::runtime::{discover_config, SharedRegistry};
use crate::store::object_value;
use ca::{ca_patch, ca_secret, injected_ca, INJECT_CA_FROM_SECRET_ANNOTATION};
use status::{discovered_status, says_the_same, status_handler};

/// How often a config is discovered again without any change: Cluster API re-discovers on every
/// reconcile, and an Extension server may be redeployed with other handlers (or come back after
/// failing) with no change to its ExtensionConfig. One Discovery call per config every five
/// minutes is cheap, and bounds how long a redeployed server's new handlers go unseen.
pub const REDISCOVER: Duration = Duration::from_secs(300);
/// How soon a config whose discovery or CA injection failed is tried again.
const RETRY: Duration = Duration::from_secs(15);
/// How often to look again for the ExtensionConfig kind when the API server does not serve it.
const KIND_RETRY: Duration = Duration::from_secs(60);
/// How long [`warm_up`] may take: Cluster API's warmup timeout.
const WARMUP_TIMEOUT: Duration = Duration::from_secs(60);

/// What every reconcile shares.
pub struct Context {
    /// Writes the configs' CA and status.
    pub syncer: Syncer,
    /// Reads the CA Secrets.
    pub client: Client,
    /// The handlers found, shared with every caller of extensions.
    pub registry: SharedRegistry,
    /// Gets the name of each config whose discovery outcome changed (the ClusterClass
    /// controller then calls its DiscoverVariables handlers again).
    pub rediscovered: UnboundedSender<String>,
}

/// Why a reconcile failed; the config is tried again after [`RETRY`].
#[derive(Debug, thiserror::Error)]
#[error("ExtensionConfig {name}: {reason}")]
pub struct ReconcileError {
    name: String,
    reason: String,
}

/// The ExtensionConfig resource (cluster-scoped).
pub fn resource() -> ApiResource {
    ApiResource {
        group: RUNTIME_GROUP.to_owned(),
        version: RUNTIME_VERSION.to_owned(),
        api_version: format!("{RUNTIME_GROUP}/{RUNTIME_VERSION}"),
        kind: "ExtensionConfig".to_owned(),
        plural: "extensionconfigs".to_owned(),
    }
}

/// Whether the API server serves ExtensionConfigs; when it does not, says so once and looks again
/// every [`KIND_RETRY`] until it does (true) or `stop` (false).
async fn wait_for_kind(syncer: &Syncer, stop: &CancellationToken) -> bool {
    let api_version = format!("{RUNTIME_GROUP}/{RUNTIME_VERSION}");
    let mut told = false;
    loop {
        if syncer.serves(&api_version, "ExtensionConfig").await {
            return true;
        }
        if !told {
            tracing::info!(
                "ExtensionConfig ({api_version}) is not served: Runtime Extensions are off until its CRD is installed"
            );
            told = true;
        }
        tokio::select! {
            () = stop.cancelled() => return false,
            () = tokio::time::sleep(KIND_RETRY) => {}
        }
    }
}

/// Discovers every ExtensionConfig once (injecting CAs and writing statuses as a reconcile does),
/// so the registry is complete before other controllers call extensions. Gives up after
/// [`WARMUP_TIMEOUT`] or when the kind is not served; the controller carries on from there.
pub async fn warm_up(ctx: &Context) {
    if !ctx
        .syncer
        .serves(&format!("{RUNTIME_GROUP}/{RUNTIME_VERSION}"), "ExtensionConfig")
        .await
    {
        return;
    }
    let warm = async {
        let api: Api<DynamicObject> = Api::all_with(ctx.client.clone(), &resource());
        let configs = match api.list(&ListParams::default()).await {
            Ok(list) => list.items,
            Err(err) => {
                tracing::warn!(error = %err, "cannot list ExtensionConfigs to warm up the registry");
                return;
            }
        };
        for config in configs {
            if let Err(err) = reconcile_config(ctx, object_value(&config, &resource())).await {
                tracing::warn!(error = %err, "ExtensionConfig not discovered at start-up");
            }
        }
        tracing::info!("the extension registry is warmed up");
    };
    if tokio::time::timeout(WARMUP_TIMEOUT, warm).await.is_err() {
        tracing::warn!("the extension registry warmup timed out after {WARMUP_TIMEOUT:?}");
    }
}

/// Runs the controller until `stop`: reconciles on changes of the configs and of Secrets
/// (by metadata), and removes deleted configs from the registry.
pub async fn run(client: Client, ctx: Arc<Context>, stop: CancellationToken) {
    if !wait_for_kind(&ctx.syncer, &stop).await {
        return;
    }
    let resource = resource();
    let configs: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let controller = Controller::new_with(
        configs.clone(),
        watcher::Config::default().any_semantic(),
        resource.clone(),
    );
    let store = controller.store();
    let secrets = secret_triggers(Api::<PartialObjectMeta<Secret>>::all(client), store);
    let deletions = forget_deleted(configs, Arc::clone(&ctx), stop.clone());
    let controller = controller
        .reconcile_on(secrets)
        .graceful_shutdown_on(stop.cancelled_owned())
        .run(reconcile, on_error, Arc::clone(&ctx))
        .for_each(|result| {
            let registry = ctx.registry.clone();
            async move {
                match result {
                    // A config deleted while queued: the registry must forget it too.
                    Err(kube::runtime::controller::Error::ObjectNotFound(object)) => {
                        registry.remove(&object.name)
                    }
                    Err(err) => tracing::debug!(error = %err, "ExtensionConfig controller"),
                    Ok(_) => {}
                }
            }
        });
    tokio::join!(controller, deletions);
}

/// Reconciles one ExtensionConfig.
pub async fn reconcile(config: Arc<DynamicObject>, ctx: Arc<Context>) -> Result<Action, ReconcileError> {
    if config.metadata.deletion_timestamp.is_some() {
        ctx.forget(&config.name_any());
        return Ok(Action::await_change());
    }
    reconcile_config(&ctx, object_value(&config, &resource()))
        .await
        .map_err(|reason| ReconcileError {
            name: config.name_any(),
            reason,
        })?;
    Ok(Action::requeue(REDISCOVER))
}

/// Retry after a failed reconcile.
pub fn on_error(_config: Arc<DynamicObject>, error: &ReconcileError, _ctx: Arc<Context>) -> Action {
    tracing::warn!(error = %error, "ExtensionConfig reconcile failed; retrying");
    Action::requeue(RETRY)
}

/// Injects the CA, discovers, writes the status, registers: Cluster API's reconcile of one
/// config. A discovery failure is written to the status (the last handlers found stay registered), then returned.
async fn reconcile_config(ctx: &Context, mut object: Value) -> Result<(), String> {
    if let Some(secret) = ca_secret(&object) {
        let ca = secret_ca(&ctx.client, secret?).await?;
        if let Some(patch) = ca_patch(&object, &ca) {
            object = ctx
                .syncer
                .patch_guarded(&object, &patch)
                .await
                .map_err(|e| format!("failed to reconcile caBundle: {e}"))?;
        }
    }
    let config: ExtensionConfig = decode_value(object.clone()).map_err(|e| e.to_string())?;
    let outcome = discover_config(&config).await;
    let handlers = outcome
        .as_ref()
        .map(|found| found.iter().map(status_handler).collect())
        .map_err(Clone::clone);
    let generation = config.metadata.generation.unwrap_or(1);
    let desired = discovered_status(object.get("status"), generation, &handlers, &now_rfc3339());
    // Registered before the status says so: whoever reads the status finds the handlers.
    ctx.registry.set(config.name(), outcome);
    // A restarted extension may list the same handlers in another order: not a change.
    if !says_the_same(object.get("status"), &desired) {
        // The receiver stops only with the controllers.
        let _ = ctx.rediscovered.send(config.name().to_owned());
        ctx.syncer
            .patch_status(&object, &desired)
            .await
            .map_err(|e| format!("failed to patch the status: {e}"))?;
    }
    handlers.map(drop)
}

/// The caBundle the Secret `(raw, namespace, name)` holds.
async fn secret_ca(
    client: &Client,
    (raw, namespace, name): (String, String, String),
) -> Result<String, String> {
    let secret = Api::<Secret>::namespaced(client.clone(), &namespace)
        .get(&name)
        .await
        .map_err(|e| format!("failed to reconcile caBundle: failed to get secret {raw:?}: {e}"))?;
    let secret = serde_json::to_value(secret).map_err(|e| e.to_string())?;
    injected_ca(&raw, &secret)
}

/// The configs to reconcile when a Secret changes: those whose annotation names it.
fn secret_triggers(
    secrets: Api<PartialObjectMeta<Secret>>,
    configs: Store<DynamicObject>,
) -> impl Stream<Item = ObjectRef<DynamicObject>> + Send {
    watcher(secrets, watcher::Config::default().any_semantic())
        .default_backoff()
        .touched_objects()
        .filter_map(|secret| async move { secret.ok() })
        .flat_map(move |secret| {
            let named = format!("{}/{}", secret.namespace().unwrap_or_default(), secret.name_any());
            let refs: Vec<ObjectRef<DynamicObject>> = configs
                .state()
                .iter()
                .filter(|config| config.annotations().get(INJECT_CA_FROM_SECRET_ANNOTATION) == Some(&named))
                .map(|config| ObjectRef::from_obj_with(config.as_ref(), resource()))
                .collect();
            futures::stream::iter(refs)
        })
}

impl Context {
    /// Removes the config `name` from the registry, and has the classes using it reconciled.
    fn forget(&self, name: &str) {
        self.registry.remove(name);
        // The receiver stops only with the controllers.
        let _ = self.rediscovered.send(name.to_owned());
    }
}

/// Forgets each config the watch sees deleted, until `stop`.
async fn forget_deleted(configs: Api<DynamicObject>, ctx: Arc<Context>, stop: CancellationToken) {
    let events = watcher(configs, watcher::Config::default().any_semantic()).default_backoff();
    let forgetting = events.for_each(|event| {
        if let Ok(watcher::Event::Delete(config)) = event {
            ctx.forget(&config.name_any());
        }
        futures::future::ready(())
    });
    tokio::select! {
        () = forgetting => {}
        () = stop.cancelled() => {}
    }
}
