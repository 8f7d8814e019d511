//! Beside Cluster API: keeps Cluster API's own admission webhooks for Clusters, ClusterClasses
//! and ExtensionConfigs switched off (see [`crate::beside_cluster_api`]), also after `clusterctl
//! upgrade` re-applies them: every change of the core provider's webhook configurations is looked
//! at, and switched again when it needs to be.

use std::fmt::Debug;

use futures::StreamExt;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::watcher::{self, watcher};
use kube::runtime::WatchStreamExt;
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::beside_cluster_api::{switch_ops, Switch, CLUSTER_API_PROVIDER_SELECTOR};

/// Switches the core provider's webhook entries for the resources capi-topology serves `switch`
/// in every configuration of kind `K` now, and returns the names changed.
pub async fn switch_all<K>(client: &Client, switch: Switch) -> anyhow::Result<Vec<String>>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
{
    let api = Api::<K>::all(client.clone());
    let listed = api
        .list(&kube::api::ListParams::default().labels(CLUSTER_API_PROVIDER_SELECTOR))
        .await?;
    let mut changed = Vec::new();
    for configuration in listed {
        if switch_one(&api, &configuration, switch).await? {
            changed.push(configuration.name_any());
        }
    }
    Ok(changed)
}

/// Patches one configuration; `true` when it changed.
async fn switch_one<K>(api: &Api<K>, configuration: &K, switch: Switch) -> anyhow::Result<bool>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
{
    let ops = switch_ops(&serde_json::to_value(configuration)?, switch);
    if ops.is_empty() {
        return Ok(false);
    }
    let patch: json_patch::Patch = serde_json::from_value(serde_json::Value::Array(ops))?;
    api.patch(
        &configuration.name_any(),
        &PatchParams::default(),
        &Patch::<()>::Json(patch),
    )
    .await?;
    Ok(true)
}

async fn keep_off<K>(client: Client, stop: CancellationToken)
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    let api = Api::<K>::all(client);
    let config = watcher::Config::default().labels(CLUSTER_API_PROVIDER_SELECTOR);
    let stream = watcher(api.clone(), config)
        .default_backoff()
        .applied_objects()
        .for_each(|event| {
            let api = api.clone();
            async move {
                let result = match event {
                    Ok(configuration) => switch_one(&api, &configuration, Switch::Off)
                        .await
                        .map(|changed| (configuration.name_any(), changed)),
                    Err(error) => Err(error.into()),
                };
                match result {
                    Ok((name, true)) => tracing::info!(
                        configuration = %name,
                        "switched off Cluster API's own webhooks for the resources capi-topology serves"
                    ),
                    Ok((_, false)) => {}
                    // The next change (or the watch's periodic relist) tries again.
                    Err(error) => tracing::warn!(error = %error, "switching off Cluster API's webhooks"),
                }
            }
        });
    tokio::select! {
        () = stream => {}
        () = stop.cancelled() => {}
    }
}

/// Runs until `stop`: keeps both kinds of the core provider's webhook configurations switched off.
pub async fn run(client: Client, stop: CancellationToken) {
    tokio::join!(
        keep_off::<ValidatingWebhookConfiguration>(client.clone(), stop.clone()),
        keep_off::<MutatingWebhookConfiguration>(client, stop),
    );
}

/// Switches the entries for the resources capi-topology serves of the configuration of kind `K`
/// named `name` `switch`; `Ok(None)` when there is no such configuration, else whether it changed.
pub async fn switch_named<K>(client: &Client, name: &str, switch: Switch) -> anyhow::Result<Option<bool>>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
{
    let api = Api::<K>::all(client.clone());
    match api.get_opt(name).await? {
        Some(configuration) => Ok(Some(switch_one(&api, &configuration, switch).await?)),
        None => Ok(None),
    }
}
