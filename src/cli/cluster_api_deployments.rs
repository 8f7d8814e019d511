//! The Deployments a take-over or give-back edits (Cluster API's core manager, capi-topology's
//! controller), found by label, edited by a guarded JSON Patch, and waited for until their
//! rollout is complete with no old Pod left. The decisions are in [`crate::beside_cluster_api`].

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::Client;
use serde_json::{json, Value};

use crate::beside_cluster_api::rollout_waiting;

/// How often a rollout is looked at.
const POLL: Duration = Duration::from_secs(2);

/// A Deployment found by its labels, as JSON.
pub struct Found {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The object.
    pub object: Value,
}

impl Found {
    /// `namespace/name`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// The one Deployment matching `selector` in any namespace; `None` when there is none, an error
/// naming them when there are several.
pub async fn find_one(client: &Client, selector: &str) -> Result<Option<Found>> {
    let listed = Api::<Deployment>::all(client.clone())
        .list(&ListParams::default().labels(selector))
        .await
        .with_context(|| format!("cannot list the Deployments labelled {selector}"))?;
    let mut found: Vec<Found> = Vec::new();
    for deployment in listed.items {
        let object = serde_json::to_value(&deployment)?;
        found.push(Found {
            namespace: object["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            name: object["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
            object,
        });
    }
    if found.len() > 1 {
        let names: Vec<String> = found.iter().map(Found::id).collect();
        bail!(
            "{} Deployments are labelled {selector} ({}): expected one",
            found.len(),
            names.join(", ")
        );
    }
    Ok(found.pop())
}

/// Applies JSON Patch `ops` to the Deployment (one new generation).
pub async fn patch(client: &Client, found: &Found, ops: Vec<Value>) -> Result<()> {
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops))?;
    Api::<Deployment>::namespaced(client.clone(), &found.namespace)
        .patch(&found.name, &PatchParams::default(), &Patch::<()>::Json(patch))
        .await
        .with_context(|| format!("cannot patch Deployment {}", found.id()))?;
    Ok(())
}

/// The ops that replace the list at `path` (container args or command) of the Deployment, guarded
/// by a test of the list read, so a Deployment changed meanwhile is not overwritten.
pub fn replace_list(object: &Value, path: &str, new: &[String]) -> Vec<Value> {
    match object.pointer(path) {
        Some(old) => vec![
            json!({"op": "test", "path": path, "value": old}),
            json!({"op": "replace", "path": path, "value": new}),
        ],
        None => vec![json!({"op": "add", "path": path, "value": new})],
    }
}

/// Waits until the Deployment's rollout is complete with no old Pod left, at most `timeout`.
pub async fn wait_rolled_out(client: &Client, found: &Found, timeout: Duration) -> Result<()> {
    let deployments = Api::<Deployment>::namespaced(client.clone(), &found.namespace);
    let pods = Api::<Pod>::namespaced(client.clone(), &found.namespace);
    let started = Instant::now();
    loop {
        let deployment = serde_json::to_value(deployments.get(&found.name).await?)?;
        let selector = deployment["spec"]["selector"]["matchLabels"]
            .as_object()
            .map(|labels| {
                labels
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default();
        let listed = pods.list(&ListParams::default().labels(&selector)).await?;
        let pods: Vec<Value> = listed
            .items
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<_, _>>()?;
        let Some(waiting) = rollout_waiting(&deployment, &pods) else {
            return Ok(());
        };
        if started.elapsed() >= timeout {
            bail!(
                "Deployment {} did not finish its rollout within {timeout:?}: {waiting} (see `kubectl -n {} rollout status deployment/{}`)",
                found.id(),
                found.namespace,
                found.name
            );
        }
        tokio::time::sleep(POLL).await;
    }
}
