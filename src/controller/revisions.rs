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

use crate::api::class_revision::ClusterClassRevisionSpec;
use crate::api::class_rollout::{ClusterClassRolloutStatus, ROLLOUT_GROUP};
use crate::api::Cluster;
use crate::decode::decode_value;
use crate::rollout::source::PreparedRevision;
use crate::store::{ObjectSource, WatchCache};
use crate::topology::reconcile::Blocked;

/// Clusters moved by rollouts that the topology controller has not picked up yet, at most.
const MOVED_BUFFER: usize = 1024;

/// Revisions kept prepared at most (each holds one class and its templates).
const MAX_PREPARED: usize = 512;

/// The kind of a rollout policy.
pub const ROLLOUT_KIND: &str = "ClusterClassRollout";
/// The kind of a revision.
pub const REVISION_KIND: &str = "ClusterClassRevision";

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

    /// The revision `cluster` runs: its entry in its class's ClusterClassRollout, else the
    /// rollout's target; `None` when its class has no rollout policy (or none with a status
    /// yet): then the class itself, as Cluster API computes it.
    pub fn pinned(&self, cache: &WatchCache, cluster: &Cluster) -> Result<Option<Pinned>, Blocked> {
        let Some(topology) = cluster.spec.managed_topology().filter(|_| self.enabled) else {
            return Ok(None);
        };
        let namespace = cluster.metadata.namespace.clone().unwrap_or_default();
        let name = cluster.metadata.name.clone().unwrap_or_default();
        let class_namespace = match topology.class_ref.namespace.as_str() {
            "" => namespace.clone(),
            other => other.to_owned(),
        };
        let Some(status) = rollout_status(cache, &class_namespace, &topology.class_ref.name) else {
            return Ok(None);
        };
        let entry = status
            .clusters
            .iter()
            .find(|e| e.namespace == namespace && e.name == name);
        let Some(revision_name) = entry.map(|e| e.revision.clone()).or(status.target_revision) else {
            return Ok(None);
        };
        let object = cache
            .get(ROLLOUT_GROUP, REVISION_KIND, &class_namespace, &revision_name)
            .ok_or_else(|| {
                blocked(format!(
                    "ClusterClassRevision {class_namespace}/{revision_name} not found"
                ))
            })?;
        let revision = self.prepare(&class_namespace, &object).map_err(blocked)?;
        Ok(Some(Pinned {
            name: revision_name,
            revision,
        }))
    }

    /// The revision `object` prepared, once per uid (revisions are immutable).
    fn prepare(&self, namespace: &str, object: &Value) -> Result<Arc<PreparedRevision>, String> {
        let uid = object
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut prepared = self.prepared.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = prepared.get(&uid).filter(|_| !uid.is_empty()) {
            return Ok(found.clone());
        }
        let spec: ClusterClassRevisionSpec = decode_value(object["spec"].clone())?;
        let revision = Arc::new(PreparedRevision::new(namespace, &spec)?);
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

/// The status of the ClusterClassRollout of the class `namespace/name`: the oldest policy naming
/// it, when several do (the others are reported by the rollout controller).
pub fn rollout_status(cache: &WatchCache, namespace: &str, class: &str) -> Option<ClusterClassRolloutStatus> {
    let policy = policies_of(cache, namespace, class).into_iter().next()?;
    decode_value(policy.get("status")?.clone()).ok()
}

/// The ClusterClassRollouts naming the class `namespace/class`, oldest first.
pub fn policies_of(cache: &WatchCache, namespace: &str, class: &str) -> Vec<Arc<Value>> {
    let mut policies: Vec<Arc<Value>> = cache
        .list(ROLLOUT_GROUP, ROLLOUT_KIND, namespace)
        .into_iter()
        .filter(|p| p.pointer("/spec/classRef/name").and_then(Value::as_str) == Some(class))
        .collect();
    let created = |p: &Value| {
        let time = p
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let name = p
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        (time, name)
    };
    policies.sort_by_key(|p| created(p));
    policies
}

fn blocked(message: String) -> Blocked {
    Blocked {
        reason: "ClusterClassRevisionNotReady",
        message,
    }
}
