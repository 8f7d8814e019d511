//! The ClusterClass controller: writes each (v1beta2) class's `status.variables`,
//! `observedGeneration` and `VariablesReady`, which the Cluster webhooks and the topology
//! controller read, and `RefVersionsUpToDate` (whether its template references use the version of
//! the contract), with their v1beta1 twins under `status.deprecated.v1beta1` (see
//! [`cluster_class_status`](super::cluster_class_status)). The variables of external patches come
//! from their DiscoverVariables hooks, called here.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject};
use kube::core::ApiResource;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::Controller;
use kube::Client;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::cluster_class_status::class_status_patch;
use super::scope::Scope;
use super::shared::Shared;
use super::sync::Syncer;
use crate::api::runtime::DiscoverVariablesRequest;
use crate::api::ClusterClass;
use crate::clock::now_rfc3339;
use crate::contract::ref_versions::{crd_of, ref_versions_condition, template_refs};
use crate::decode::decode_value;
use crate::runtime::RuntimeExtensions;
use crate::store::object_value;
use crate::store::WatchCache;
use crate::topology::blueprint::Blueprint;
use crate::topology::class_status::{class_status, discovering_patches, Discovery};

/// How often a settled class's template references are checked against the CRDs' contract
/// versions.
const REF_VERSIONS_RECHECK: Duration = Duration::from_secs(600);
/// How soon a class whose templates are missing is looked at again.
const MISSING_TEMPLATE_RETRY: Duration = Duration::from_secs(30);
/// How soon a class whose variables could not be discovered is looked at again.
const DISCOVERY_RETRY: Duration = Duration::from_secs(15);

/// What every reconcile shares.
pub struct Context {
    /// The templates the classes reference, from the watch caches.
    pub cache: WatchCache,
    /// Writes.
    pub syncer: Syncer,
    /// The ClusterClass resource.
    pub resource: ApiResource,
    /// Reads template CRDs' metadata (their contract labels).
    pub client: Client,
    /// The Runtime Extensions, for DiscoverVariables.
    pub extensions: Arc<RuntimeExtensions>,
    /// The classes this instance reconciles.
    pub scope: Scope,
}

/// Why a reconcile failed; the class is retried.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the status of ClusterClass {name}: {source}")]
pub struct ReconcileError {
    name: String,
    source: kube::Error,
}

/// The ClusterClass controller over the classes in scope, until `stop`: reconciles a class when
/// it changes and when an ExtensionConfig its DiscoverVariables calls is discovered anew (the
/// names `rediscoveries` brings).
pub fn run(
    shared: &Shared,
    rediscoveries: UnboundedReceiver<String>,
    stop: CancellationToken,
) -> impl Future<Output = ()> {
    let ctx = Arc::new(Context {
        cache: shared.cache.clone(),
        syncer: Syncer::new(shared.client.clone()),
        resource: shared.classes.clone(),
        client: shared.client.clone(),
        extensions: Arc::clone(&shared.extensions),
        scope: shared.options.scope.clone(),
    });
    let scope = &shared.options.scope;
    let controller = Controller::new_with(
        scope.api(shared.client.clone(), &shared.classes),
        scope.watcher_config(),
        shared.classes.clone(),
    );
    let triggers = classes_of_configs(rediscoveries, controller.store(), shared.classes.clone());
    controller
        .reconcile_on(triggers)
        .graceful_shutdown_on(stop.cancelled_owned())
        .run(reconcile_class, on_error, ctx)
        .for_each(|result| async move {
            if let Err(err) = result {
                tracing::debug!(error = %err, "ClusterClass controller");
            }
        })
}

/// Reconciles one ClusterClass.
pub async fn reconcile_class(class: Arc<DynamicObject>, ctx: Arc<Context>) -> Result<Action, ReconcileError> {
    if !ctx.scope.admits(&class.metadata) {
        return Ok(Action::await_change());
    }
    let object = object_value(&class, &ctx.resource);
    let typed = match decode_value::<ClusterClass>(object.clone()) {
        Ok(typed) => typed,
        Err(reason) => {
            tracing::warn!(%reason, "ClusterClass does not decode; not reconciled");
            return Ok(Action::await_change());
        }
    };
    let generation = class.metadata.generation.unwrap_or(1);
    let now = now_rfc3339();
    let namespace = class.metadata.namespace.clone().unwrap_or_default();
    let mut discoveries: Vec<Discovery> = Vec::new();
    for (patch, handler, settings) in discovering_patches(&typed) {
        let request = DiscoverVariablesRequest {
            settings: settings.clone(),
            ..DiscoverVariablesRequest::default()
        };
        let outcome = ctx
            .extensions
            .discover_variables(handler, &namespace, &request)
            .await;
        discoveries.push((patch.to_owned(), outcome));
    }
    let discovered = discoveries.iter().all(|(_, outcome)| outcome.is_ok());
    let engine = class_status(&typed, generation, &discoveries, &now);
    let refs = template_refs(&object);
    let mut crd_labels = HashMap::new();
    for reference in &refs {
        let crd = crd_of(reference);
        if let std::collections::hash_map::Entry::Vacant(slot) = crd_labels.entry(crd) {
            let labels = crd_metadata_labels(&ctx.client, slot.key()).await;
            slot.insert(labels);
        }
    }
    let ref_versions = ref_versions_condition(&refs, |crd| crd_labels.get(crd).cloned().flatten());
    if let Some(patch) = class_status_patch(object.get("status"), &engine, ref_versions, generation, &now) {
        let written = ctx
            .syncer
            .patch_status(&object, &patch)
            .await
            .map_err(|source| ReconcileError {
                name: class.metadata.name.clone().unwrap_or_default(),
                source,
            })?;
        // Clusters of the class wait for this status: let them see it without waiting for the watch.
        ctx.cache.observe(written);
    }
    if !discovered {
        return Ok(Action::requeue(DISCOVERY_RETRY));
    }
    // The templates must exist for Clusters of the class to be reconciled; say so while not.
    if let Err(missing) = Blueprint::new(typed, &ctx.cache) {
        tracing::warn!(class = %class.metadata.name.clone().unwrap_or_default(), error = %missing, "ClusterClass not usable yet");
        return Ok(Action::requeue(MISSING_TEMPLATE_RETRY));
    }
    // A provider upgrade may move its contract versions: look again now and then.
    Ok(Action::requeue(REF_VERSIONS_RECHECK))
}

/// The classes to reconcile when an ExtensionConfig is discovered anew (its name comes from
/// `rediscovered`): those of `classes` (of the ClusterClass `resource`) with a DiscoverVariables handler of that config, as
/// Cluster API's ClusterClass controller maps ExtensionConfig changes.
pub fn classes_of_configs(
    rediscovered: UnboundedReceiver<String>,
    classes: Store<DynamicObject>,
    resource: ApiResource,
) -> impl Stream<Item = ObjectRef<DynamicObject>> + Send {
    futures::stream::unfold(rediscovered, |mut rediscovered| async move {
        let config = rediscovered.recv().await?;
        Some((config, rediscovered))
    })
    .flat_map(move |config| {
        let refs: Vec<ObjectRef<DynamicObject>> = classes
            .state()
            .into_iter()
            .filter(|class| discovers_from(class, &config))
            .map(|class| ObjectRef::from_obj_with(class.as_ref(), resource.clone()))
            .collect();
        futures::stream::iter(refs)
    })
}

/// Whether `class` has a DiscoverVariables handler of the ExtensionConfig `config`
/// (`<handler>.<config>`).
fn discovers_from(class: &DynamicObject, config: &str) -> bool {
    class.data["spec"]["patches"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|patch| patch["external"]["discoverVariablesExtension"].as_str())
        .any(|handler| handler.split_once('.').is_some_and(|(_, of)| of == config))
}

/// The labels of the CRD named `name`; `None` when it cannot be read.
async fn crd_metadata_labels(client: &Client, name: &str) -> Option<BTreeMap<String, String>> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    match api.get_metadata_opt(name).await {
        Ok(found) => found.map(|crd| crd.metadata.labels.unwrap_or_default()),
        Err(err) => {
            tracing::warn!(crd = name, error = %err, "cannot read the CRD's contract labels");
            None
        }
    }
}

/// Requeue after a failed reconcile.
pub fn on_error(_class: Arc<DynamicObject>, error: &ReconcileError, _ctx: Arc<Context>) -> Action {
    tracing::warn!(error = %error, "ClusterClass reconcile failed; retrying");
    Action::requeue(Duration::from_secs(5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_is_mapped_to_the_configs_of_its_discover_variables_handlers() {
        let class: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {"patches": [
                {"name": "inline", "definitions": []},
                {"name": "lb", "external": {"generatePatchesExtension": "generate.other",
                                            "discoverVariablesExtension": "discover.ext.example"}}]}
        }))
        .unwrap();
        assert!(discovers_from(&class, "ext.example"));
        assert!(!discovers_from(&class, "other"));
        assert!(!discovers_from(&class, "ext"));
    }
}
