//! Making the cluster match the desired objects: server-side apply (field manager
//! `capi-topology`) of each object the current state does not already satisfy, and deletion of
//! owned objects no longer desired. An object already carrying every desired value is not
//! written, so a settled topology costs no API writes.

use std::collections::HashMap;
use std::sync::Mutex;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{discovery, Client};
use serde_json::Value;

use crate::topology::reconcile::contains;

/// The field manager of every write.
pub const FIELD_MANAGER: &str = "capi-topology";

/// What a sync did to one object.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The object already matched.
    Unchanged,
    /// The object was created or updated; the API server's copy of it.
    Applied(Value),
}

/// Writes objects through the API server, discovering each kind's resource once.
pub struct Syncer {
    client: Client,
    resources: Mutex<HashMap<(String, String), ApiResource>>,
}

impl Syncer {
    /// A syncer writing through `client`.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            resources: Mutex::new(HashMap::new()),
        }
    }

    /// Applies `desired` unless `current` already holds every value of it.
    pub async fn apply(&self, desired: &Value, current: Option<&Value>) -> Result<Outcome, kube::Error> {
        if current.is_some_and(|current| contains(current, desired)) {
            return Ok(Outcome::Unchanged);
        }
        let (api, name) = self.api_for(desired).await?;
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let written = api.patch(&name, &params, &Patch::Apply(desired)).await?;
        Ok(Outcome::Applied(as_value(&written)))
    }

    /// Patches the status subresource of `object` with a JSON merge patch of `status`, returning
    /// the API server's copy.
    pub async fn patch_status(&self, object: &Value, status: &Value) -> Result<Value, kube::Error> {
        let (api, name) = self.api_for(object).await?;
        let patch = serde_json::json!({ "status": status });
        let written = api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(as_value(&written))
    }

    /// Deletes `object`; one already gone is not an error.
    pub async fn delete(&self, object: &Value) -> Result<(), kube::Error> {
        let (api, name) = self.api_for(object).await?;
        match api.delete(&name, &DeleteParams::background()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(err) => Err(err),
        }
    }

    async fn api_for(&self, object: &Value) -> Result<(Api<DynamicObject>, String), kube::Error> {
        let text = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let (api_version, kind) = (text("/apiVersion"), text("/kind"));
        let key = (api_version.to_owned(), kind.to_owned());
        let known = self
            .resources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
            .cloned();
        let resource = match known {
            Some(resource) => resource,
            None => {
                let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
                let gvk = GroupVersionKind::gvk(group, version, kind);
                let (resource, _) = discovery::pinned_kind(&self.client, &gvk).await?;
                self.resources
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(key, resource.clone());
                resource
            }
        };
        let api = Api::namespaced_with(self.client.clone(), text("/metadata/namespace"), &resource);
        Ok((api, text("/metadata/name").to_owned()))
    }
}

/// A written object as the plain JSON the caches hold (`Null` if it cannot be represented).
fn as_value(object: &DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
}
