//! The Secrets and ConfigMaps ClusterResourceSets list, read from the API server only when their
//! resourceVersion moved past the copy already read, and parsed once per content however many
//! sets, references, Clusters and versions (an owner added, a label changed) share it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::ApiResource;
use kube::Client;
use serde_json::json;

use crate::addons::binding::owner_reference;
use crate::addons::{Resource, ResourceError, SharedParses};
use crate::api::{ClusterResourceSet, RESOURCE_KIND_SECRET};
use crate::controller::FIELD_MANAGER;
use crate::store::object_value;

/// `(kind, namespace, name)` of a Secret or ConfigMap.
type Key = (String, String, String);

/// One version of a Secret or ConfigMap, as read.
#[derive(Debug)]
pub struct Fetched {
    /// Its resourceVersion.
    version: u64,
    /// Its owners.
    pub owners: Vec<OwnerReference>,
    /// Its objects and hash, or why its data holds none.
    pub content: Result<Resource, ResourceError>,
}

#[derive(Default)]
struct Entry {
    /// The newest resourceVersion a watch reported.
    seen: u64,
    /// The copy read last; `None` when it was not found.
    fetched: Option<Arc<Fetched>>,
}

/// Reads of Secrets and ConfigMaps, cached by resourceVersion.
pub struct Resources {
    client: Client,
    entries: Mutex<HashMap<Key, Entry>>,
    parses: Mutex<SharedParses>,
}

impl Resources {
    /// Reads through `client`.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            entries: Mutex::default(),
            parses: Mutex::default(),
        }
    }

    /// Notes a version a watch reported (a deletion reports a newer version too), so the next
    /// read fetches it.
    pub fn saw(&self, kind: &str, namespace: &str, name: &str, resource_version: Option<&str>) {
        let version = parse_version(resource_version);
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = entries
            .entry((kind.to_owned(), namespace.to_owned(), name.to_owned()))
            .or_default();
        entry.seen = entry.seen.max(version);
    }

    /// The Secret or ConfigMap `kind` `namespace/name`, `None` when it does not exist. Fetched
    /// only when no copy as new as the newest seen version is cached.
    pub async fn read(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Fetched>>, kube::Error> {
        let key = (kind.to_owned(), namespace.to_owned(), name.to_owned());
        if let Some(fetched) = self.cached(&key) {
            return Ok(Some(fetched));
        }
        let api = self.api(kind, namespace);
        let fetched = api.get_opt(name).await?.map(|object| {
            let value = object_value(&object, &resource_of(kind));
            let content = self
                .parses
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .read(&value);
            Arc::new(Fetched {
                version: parse_version(object.metadata.resource_version.as_deref()),
                owners: object.metadata.owner_references.clone().unwrap_or_default(),
                content,
            })
        });
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = entries.entry(key).or_default();
        if let Some(fetched) = &fetched {
            entry.seen = entry.seen.max(fetched.version);
        }
        entry.fetched.clone_from(&fetched);
        Ok(fetched)
    }

    /// Adds `set` as a (non-controller) owner of the Secret or ConfigMap unless it is one already;
    /// a strategic merge keeps the other owners.
    pub async fn ensure_owner(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
        fetched: &Fetched,
        set: &ClusterResourceSet,
    ) -> Result<(), kube::Error> {
        let owner = owner_reference(set);
        if fetched.owners.iter().any(|o| o.uid == owner.uid) {
            return Ok(());
        }
        let patch = json!({"metadata": {"ownerReferences": [owner]}});
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        self.api(kind, namespace)
            .patch(name, &params, &Patch::Strategic(&patch))
            .await?;
        Ok(())
    }

    /// The cached copy when it is as new as the newest seen version (a missing one is always
    /// looked up again).
    fn cached(&self, key: &Key) -> Option<Arc<Fetched>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = entries.get(key)?;
        let fetched = entry.fetched.as_ref()?;
        (fetched.version >= entry.seen).then(|| fetched.clone())
    }

    fn api(&self, kind: &str, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), namespace, &resource_of(kind))
    }
}

fn resource_of(kind: &str) -> ApiResource {
    if kind == RESOURCE_KIND_SECRET {
        ApiResource::erase::<Secret>(&())
    } else {
        ApiResource::erase::<ConfigMap>(&())
    }
}

/// A resourceVersion as a number (etcd's revision); 0 when it is not one.
fn parse_version(resource_version: Option<&str>) -> u64 {
    resource_version.and_then(|v| v.parse().ok()).unwrap_or(0)
}
