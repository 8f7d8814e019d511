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

use crate::managed_fields::{slim, TOPOLOGY_MANAGER};
use crate::topology::reconcile::contains;
use crate::topology::server_side_apply::apply_effect;

/// The field manager of every write (Cluster API's topology controller's, so that server-side
/// apply ownership carries on between the two).
pub const FIELD_MANAGER: &str = TOPOLOGY_MANAGER;

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

    /// Applies `desired` unless the apply would leave `current` as it is: every value of it
    /// already held, no field this manager alone applied left to remove (see [`apply_effect`]).
    pub async fn apply(&self, desired: &Value, current: Option<&Value>) -> Result<Outcome, kube::Error> {
        if current.is_some_and(|current| apply_effect(current, desired).is_noop()) {
            return Ok(Outcome::Unchanged);
        }
        let (api, name) = self.api_for(desired).await?;
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let written = api.patch(&name, &params, &Patch::Apply(desired)).await?;
        Ok(Outcome::Applied(as_value(&written)))
    }

    /// Server-side applies `desired` under the field manager `manager` (another than
    /// [`FIELD_MANAGER`]: an apply owns exactly the fields it names, so each writer of an object
    /// needs its own), unless `current` already holds every value of it.
    pub async fn apply_as(
        &self,
        manager: &str,
        desired: &Value,
        current: &Value,
    ) -> Result<Outcome, kube::Error> {
        if contains(current, desired) {
            return Ok(Outcome::Unchanged);
        }
        let (api, name) = self.api_for(desired).await?;
        let params = PatchParams::apply(manager).force();
        let written = api.patch(&name, &params, &Patch::Apply(desired)).await?;
        Ok(Outcome::Applied(as_value(&written)))
    }

    /// Merge-patches `object` with `patch`, only if it is still at the resourceVersion given (a
    /// write based on an older copy fails with 409 Conflict instead of undoing another's write).
    pub async fn patch_guarded(&self, object: &Value, patch: &Value) -> Result<Value, kube::Error> {
        let (api, name) = self.api_for(object).await?;
        let written = api
            .patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(&guarded(object, patch)),
            )
            .await?;
        Ok(as_value(&written))
    }

    /// The API server's copy of `object` now (read past any cache).
    pub async fn get(&self, object: &Value) -> Result<Value, kube::Error> {
        let (api, name) = self.api_for(object).await?;
        Ok(as_value(&api.get(&name).await?))
    }

    /// Patches the status subresource of `object` with a JSON merge patch of `status`, guarded by
    /// its resourceVersion as [`Syncer::patch_guarded`] is (conditions are one list that several
    /// controllers write), returning the API server's copy.
    pub async fn patch_status(&self, object: &Value, status: &Value) -> Result<Value, kube::Error> {
        let (api, name) = self.api_for(object).await?;
        let patch = guarded(object, &serde_json::json!({ "status": status }));
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

    /// Whether the API server serves `kind` in `api_version` (discovered once, then remembered).
    pub async fn serves(&self, api_version: &str, kind: &str) -> bool {
        self.resource_for(api_version, kind).await.is_ok()
    }

    async fn resource_for(&self, api_version: &str, kind: &str) -> Result<ApiResource, kube::Error> {
        let key = (api_version.to_owned(), kind.to_owned());
        let known = self
            .resources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
            .cloned();
        if let Some(resource) = known {
            return Ok(resource);
        }
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let (resource, _) = discovery::pinned_kind(&self.client, &gvk).await?;
        self.resources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, resource.clone());
        Ok(resource)
    }

    async fn api_for(&self, object: &Value) -> Result<(Api<DynamicObject>, String), kube::Error> {
        let text = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let resource = self.resource_for(text("/apiVersion"), text("/kind")).await?;
        // A cluster-scoped object (an ExtensionConfig) has no namespace in its path.
        let api = match text("/metadata/namespace") {
            "" => Api::all_with(self.client.clone(), &resource),
            namespace => Api::namespaced_with(self.client.clone(), namespace, &resource),
        };
        Ok((api, text("/metadata/name").to_owned()))
    }
}

/// `patch` with the resourceVersion of `object`, so the API server refuses it on a newer object.
fn guarded(object: &Value, patch: &Value) -> Value {
    let mut patch = patch.clone();
    if let (Some(version), Some(map)) = (object.pointer("/metadata/resourceVersion"), patch.as_object_mut()) {
        let metadata = map.entry("metadata").or_insert_with(|| serde_json::json!({}));
        metadata["resourceVersion"] = version.clone();
    }
    patch
}

/// A written object as the plain JSON the caches hold, `managedFields` slimmed as the watch
/// cache slims them (`Null` if it cannot be represented).
fn as_value(object: &DynamicObject) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or(Value::Null);
    slim(&mut value, TOPOLOGY_MANAGER);
    value
}
