//! Workload clusters, reached through each Cluster's `<cluster>-kubeconfig` Secret (key `value`):
//! one client per Cluster, kept while that Secret is unchanged and dropped with the Cluster, and
//! the two ways a resource's objects are written into the cluster.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::{self, Scope};
use kube::{Client, Config};
use serde_json::Value;

use crate::addons::work::ApplyMode;
use crate::api::describe;
use crate::controller::FIELD_MANAGER;
use crate::kube_credentials::{self, redacted, redacted_messages};

/// The suffix of the Secret holding a Cluster's kubeconfig.
const KUBECONFIG_SUFFIX: &str = "-kubeconfig";
/// The key of the kubeconfig in that Secret.
const KUBECONFIG_KEY: &str = "value";
/// Bounds on one request to a workload cluster, so an unreachable one fails instead of hanging.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a workload cluster did not take an object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    /// The cluster cannot be reached: no kubeconfig, a bad one, or no answer.
    #[error("{0}")]
    Unreachable(String),
    /// The cluster answered and refused.
    #[error("{0}")]
    Refused(String),
}

/// `(namespace, cluster name)`.
type ClusterKey = (String, String);

/// The clients of the workload clusters.
pub struct Workloads {
    management: Client,
    clients: Mutex<HashMap<ClusterKey, Arc<Workload>>>,
}

impl Workloads {
    /// Reads kubeconfig Secrets through `management`.
    pub fn new(management: Client) -> Self {
        Self {
            management,
            clients: Mutex::default(),
        }
    }

    /// The Cluster whose kubeconfig Secret is `secret`, if the name is one.
    pub fn cluster_of(secret: &str) -> Option<&str> {
        secret.strip_suffix(KUBECONFIG_SUFFIX).filter(|c| !c.is_empty())
    }

    /// Drops the client of the Cluster whose kubeconfig Secret changed to `resource_version`.
    pub fn saw_kubeconfig(&self, namespace: &str, cluster: &str, resource_version: Option<&str>) {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (namespace.to_owned(), cluster.to_owned());
        if clients
            .get(&key)
            .is_some_and(|w| w.kubeconfig_version.as_deref() != resource_version)
        {
            clients.remove(&key);
        }
    }

    /// Drops the client of a Cluster that is gone.
    pub fn forget(&self, namespace: &str, cluster: &str) {
        self.clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&(namespace.to_owned(), cluster.to_owned()));
    }

    /// The client of the Cluster `namespace/cluster`, built from its kubeconfig Secret the first
    /// time and after the Secret changed.
    pub async fn get(&self, namespace: &str, cluster: &str) -> Result<Arc<Workload>, WorkloadError> {
        let key = (namespace.to_owned(), cluster.to_owned());
        if let Some(workload) = self
            .clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Ok(workload.clone());
        }
        let workload = Arc::new(self.connect(namespace, cluster).await?);
        self.clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, workload.clone());
        Ok(workload)
    }

    async fn connect(&self, namespace: &str, cluster: &str) -> Result<Workload, WorkloadError> {
        let name = format!("{cluster}{KUBECONFIG_SUFFIX}");
        let unreachable =
            |why: String| WorkloadError::Unreachable(format!("Secret {namespace}/{name}: {why}"));
        let secret = Api::<Secret>::namespaced(self.management.clone(), namespace)
            .get_opt(&name)
            .await
            .map_err(|e| unreachable(root_cause(&e)))?
            .ok_or_else(|| unreachable("not found".to_owned()))?;
        let bytes = secret
            .data
            .as_ref()
            .and_then(|data| data.get(KUBECONFIG_KEY))
            .ok_or_else(|| unreachable(format!("no {KUBECONFIG_KEY:?} key")))?;
        let text = std::str::from_utf8(&bytes.0)
            .map_err(|_| unreachable("the kubeconfig is not UTF-8".to_owned()))?;
        let kubeconfig = Kubeconfig::from_yaml(text).map_err(|e| unreachable(redacted(&e)))?;
        let mut config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .map_err(|e| unreachable(redacted(&e)))?;
        config.connect_timeout = Some(CONNECT_TIMEOUT);
        config.read_timeout = Some(REQUEST_TIMEOUT);
        config.write_timeout = Some(REQUEST_TIMEOUT);
        // A removed auth provider (a `gcp` one's `cmd-path`) is refused before anything runs.
        let client = kube_credentials::client(config).map_err(unreachable)?;
        Ok(Workload {
            client,
            kubeconfig_version: secret.metadata.resource_version,
            kinds: Mutex::default(),
        })
    }
}

/// A client of one workload cluster, with the kinds it serves as discovered so far.
pub struct Workload {
    client: Client,
    kubeconfig_version: Option<String>,
    kinds: Mutex<HashMap<(String, String), (ApiResource, bool)>>,
}

impl Workload {
    /// Writes `object` as `mode` says: created unless it exists (left as it is then), or
    /// server-side applied under our field manager.
    pub async fn write(&self, object: &Value, mode: ApplyMode) -> Result<(), WorkloadError> {
        let what = describe(object);
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| WorkloadError::Refused(format!("{what}: no metadata.name")))?;
        let api = self.api_for(object).await.map_err(|e| classify(&what, &e))?;
        let result = match mode {
            ApplyMode::CreateMissing => {
                let typed: DynamicObject = serde_json::from_value(object.clone())
                    .map_err(|e| WorkloadError::Refused(format!("{what}: {e}")))?;
                let params = PostParams {
                    field_manager: Some(FIELD_MANAGER.to_owned()),
                    ..PostParams::default()
                };
                match api.create(&params, &typed).await {
                    Err(kube::Error::Api(status)) if status.reason == "AlreadyExists" => Ok(()),
                    other => other.map(drop),
                }
            }
            ApplyMode::ServerSideApply => {
                let params = PatchParams::apply(FIELD_MANAGER).force();
                api.patch(name, &params, &Patch::Apply(object)).await.map(drop)
            }
        };
        result.map_err(|e| classify(&what, &e))
    }

    /// The API of `object`'s kind in its namespace (the kubeconfig's for a namespaced object
    /// without one, so Clusters may share an API server through distinct namespaces), its
    /// resource discovered once.
    async fn api_for(&self, object: &Value) -> Result<Api<DynamicObject>, kube::Error> {
        let text = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let key = (text("/apiVersion").to_owned(), text("/kind").to_owned());
        let known = self
            .kinds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .cloned();
        let (resource, namespaced) = match known {
            Some(known) => known,
            None => {
                let (group, version) = key.0.rsplit_once('/').unwrap_or(("", &key.0));
                let gvk = GroupVersionKind::gvk(group, version, &key.1);
                let (resource, capabilities) = discovery::pinned_kind(&self.client, &gvk).await?;
                let found = (resource, capabilities.scope == Scope::Namespaced);
                self.kinds
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(key, found.clone());
                found
            }
        };
        Ok(if namespaced {
            match text("/metadata/namespace") {
                // As kubectl does: the kubeconfig context's namespace (`default` without one).
                "" => Api::default_namespaced_with(self.client.clone(), &resource),
                namespace => Api::namespaced_with(self.client.clone(), namespace, &resource),
            }
        } else {
            Api::all_with(self.client.clone(), &resource)
        })
    }
}

/// An answer from the API server (a refusal, a kind it does not serve) is a refusal; anything
/// else (no connection, timeout, TLS) means the cluster was not reached.
fn classify(what: &str, error: &kube::Error) -> WorkloadError {
    match error {
        kube::Error::Api(status) => WorkloadError::Refused(format!("{what}: {}", status.message)),
        kube::Error::Discovery(e) => WorkloadError::Refused(format!("{what}: {e}")),
        other => WorkloadError::Unreachable(format!("cannot reach its API server: {}", root_cause(other))),
    }
}

/// The innermost error, which names what actually failed (`Connection refused`), and is the same
/// on every retry; a cause carrying credentials (a failing exec plugin) told without them.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    redacted_messages(error).pop().unwrap_or_default()
}
