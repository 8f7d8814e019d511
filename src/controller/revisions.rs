//! What the topology and class rollout controllers share about ClusterClass revisions: whether
//! our rollout API is served, the revision each Cluster runs (from its class's
//! ClusterClassRollout), the revisions prepared once for reading, the revision the topology
//! controller last applied to each Cluster, and the Clusters a rollout has just moved.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use kube::api::DynamicObject;
use kube::core::ApiResource;
use kube::runtime::reflector::ObjectRef;
use kube::{discovery, Client};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::api::class_rollout::ROLLOUT_GROUP;
use crate::api::Cluster;
use crate::rollout::pin::pin_of;
use crate::rollout::source::PreparedRevision;
use crate::store::WatchCache;
use crate::topology::reconcile::Blocked;

/// Clusters moved by rollouts that the topology controller has not picked up yet, at most.
const MOVED_BUFFER: usize = 1024;

/// Revisions kept prepared at most (each holds one class and its templates).
const MAX_PREPARED: usize = 512;

/// Shared revision state of one leading replica.
pub struct Revisions {
    /// Whether the API server serves `rollout.capi-topology.io` (found at start).
    enabled: bool,
    applied: Mutex<HashMap<(String, String), String>>,
    prepared: Mutex<HashMap<String, Arc<PreparedRevision>>>,
    moved: broadcast::Sender<(String, String)>,
}

/// The revision a Cluster runs, ready to compute its desired state from.
pub struct Pinned {
    /// The ClusterClassRevision's name.
    pub name: String,
    /// Its content.
    pub revision: Arc<PreparedRevision>,
}

impl Revisions {
    /// Finds whether our rollout API is served: if not, every Cluster follows its class as
    /// Cluster API's do, and the class rollout controller idles.
    pub async fn discover(client: &Client) -> Self {
        let enabled = discovery::group(client, ROLLOUT_GROUP).await.is_ok();
        if !enabled {
            tracing::info!("{ROLLOUT_GROUP} is not served: ClusterClass changes reach every Cluster at once");
        }
        Self::new(enabled)
    }

    fn new(enabled: bool) -> Self {
        Self {
            enabled,
            applied: Mutex::default(),
            prepared: Mutex::default(),
            moved: broadcast::channel(MOVED_BUFFER).0,
        }
    }

    /// Whether rollouts can exist here.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The revision `cluster` runs under its class's ClusterClassRollout, prepared; `None`
    /// when it follows its class (see [`pin_of`]).
    pub fn pinned(&self, cache: &WatchCache, cluster: &Cluster) -> Result<Option<Pinned>, Blocked> {
        if !self.enabled {
            // No rollout API: no read of it either (each would be a discovery round trip).
            return Ok(None);
        }
        let Some(pin) = pin_of(cache, cluster) else {
            return Ok(None);
        };
        let object = pin.revision(cache).ok_or_else(|| {
            blocked(format!(
                "ClusterClassRevision {}/{} not found",
                pin.namespace, pin.name
            ))
        })?;
        let revision = self.prepare(&object).map_err(blocked)?;
        Ok(Some(Pinned {
            name: pin.name,
            revision,
        }))
    }

    /// The revision `object` prepared, once per uid (revisions are immutable).
    fn prepare(&self, object: &Value) -> Result<Arc<PreparedRevision>, String> {
        let uid = object
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut prepared = self.prepared.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = prepared.get(&uid).filter(|_| !uid.is_empty()) {
            return Ok(found.clone());
        }
        let revision = Arc::new(PreparedRevision::from_object(object)?);
        if !uid.is_empty() {
            if prepared.len() >= MAX_PREPARED {
                // Deleted revisions are not tracked: past the bound, start again.
                prepared.clear();
            }
            prepared.insert(uid, revision.clone());
        }
        Ok(revision)
    }

    /// Records that the topology controller applied `revision` (empty: the class itself) to the
    /// Cluster `namespace/name`.
    pub fn record_applied(&self, namespace: &str, name: &str, revision: &str) {
        let key = (namespace.to_owned(), name.to_owned());
        let mut applied = self.applied.lock().unwrap_or_else(PoisonError::into_inner);
        applied.insert(key, revision.to_owned());
    }

    /// The revision last applied to the Cluster `namespace/name` by this replica.
    pub fn applied(&self, namespace: &str, name: &str) -> Option<String> {
        let applied = self.applied.lock().unwrap_or_else(PoisonError::into_inner);
        applied.get(&(namespace.to_owned(), name.to_owned())).cloned()
    }

    /// Tells the topology controller a rollout moved the Cluster `namespace/name`.
    pub fn moved(&self, namespace: &str, name: &str) {
        let _ = self.moved.send((namespace.to_owned(), name.to_owned()));
    }

    /// The Clusters rollouts move from now on, as triggers of the topology controller.
    pub fn moved_triggers(
        &self,
        clusters: ApiResource,
    ) -> impl futures::Stream<Item = ObjectRef<DynamicObject>> + use<> {
        let receiver = self.moved.subscribe();
        futures::stream::unfold((receiver, clusters), |(mut receiver, clusters)| async move {
            loop {
                match receiver.recv().await {
                    Ok((namespace, name)) => {
                        let trigger = ObjectRef::new_with(&name, clusters.clone()).within(&namespace);
                        return Some((trigger, (receiver, clusters)));
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
    }
}

fn blocked(message: String) -> Blocked {
    Blocked {
        reason: "ClusterClassRevisionNotReady",
        message,
    }
}
