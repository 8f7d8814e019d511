//! The contract a provider kind implements and the version it is read at, from the contract
//! labels of its CRD (`cluster.x-k8s.io/v1beta2` tried before `cluster.x-k8s.io/v1beta1`), as
//! Cluster API resolves a `ContractVersionedObjectReference`. CRD labels are read once per kind
//! and looked at again after [`RECHECK`] (a provider upgrade may move them). Each CRD read is also
//! put, reduced to its name, contract labels, group and kind, into the watch cache, whose
//! [`ContractVersions`](crate::api::convert::ContractVersions) the topology engine asks.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::Api;
use kube::Client;
use serde_json::json;

use crate::contract::crd_name::crd_name;
use crate::contract::versions::contract_and_version;
use crate::store::WatchCache;

/// How long a CRD's contract labels are trusted before they are read again.
pub const RECHECK: Duration = Duration::from_secs(300);

/// A provider kind's contract and the API version it is read and written at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractVersion {
    /// `v1beta2` or `v1beta1`.
    pub contract: &'static str,
    /// `<group>/<version>`.
    pub api_version: String,
}

/// What was found for a (group, kind), and when.
type Known = HashMap<(String, String), (Instant, Result<ContractVersion, String>)>;

/// Contract versions of provider kinds, read from their CRDs.
pub struct Contracts {
    client: Client,
    cache: WatchCache,
    known: Mutex<Known>,
}

impl Contracts {
    /// Reads CRDs through `client`, sharing what it learns with `cache`.
    pub fn new(client: Client, cache: WatchCache) -> Self {
        Self {
            client,
            cache,
            known: Mutex::new(HashMap::new()),
        }
    }

    /// The contract and version of `kind` in `group`, or why they cannot be told (no CRD, no
    /// contract label), worded for the Cluster's condition.
    pub async fn of(&self, group: &str, kind: &str) -> Result<ContractVersion, String> {
        let key = (group.to_owned(), kind.to_owned());
        let fresh = self
            .known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
            .filter(|(read, _)| read.elapsed() < RECHECK)
            .map(|(_, found)| found.clone());
        if let Some(found) = fresh {
            return found;
        }
        let name = crd_name(group, kind);
        let found = match self.labels(&name).await {
            Ok(Some(labels)) => {
                self.cache.observe(json!({
                    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                    "metadata": {"name": name, "labels": labels},
                    "spec": {"group": group, "names": {"kind": kind}},
                }));
                contract_and_version(&name, &labels).map(|(contract, version)| ContractVersion {
                    contract,
                    api_version: format!("{group}/{version}"),
                })
            }
            Ok(None) => Err(format!(
                "the API server does not serve {kind} ({group}): is the provider's CRD {name} installed?"
            )),
            // Not remembered: the next reconcile asks again.
            Err(error) => return Err(format!("cannot read CustomResourceDefinition {name}: {error}")),
        };
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, (Instant::now(), found.clone()));
        found
    }

    async fn labels(&self, name: &str) -> Result<Option<BTreeMap<String, String>>, kube::Error> {
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let found = api.get_metadata_opt(name).await?;
        Ok(found.map(|crd| crd.metadata.labels.unwrap_or_default()))
    }
}
