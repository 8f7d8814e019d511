//! The contract versions of the kinds our objects reference, read from the CRDs among a set of
//! manifests: what `plan --output-version v1beta1` and `convert --to v1beta1` need to give a
//! Cluster's `infrastructureRef`/`controlPlaneRef` back their apiVersion.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::convert::ContractVersions;
use crate::contract::crd_name::crd_name;
use crate::contract::versions::newest_for_contract;

/// The `cluster.x-k8s.io/<contract>` labels of each CRD, by CRD name.
#[derive(Debug, Clone, Default)]
pub struct CrdContracts {
    labels: BTreeMap<String, BTreeMap<String, String>>,
}

impl CrdContracts {
    /// The CRDs (`apiextensions.k8s.io/v1` CustomResourceDefinition) among `objects`.
    pub fn from_objects<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Self {
        let labels = objects
            .into_iter()
            .filter(|o| o["kind"] == "CustomResourceDefinition")
            .filter_map(|crd| {
                let name = crd.pointer("/metadata/name")?.as_str()?.to_owned();
                let labels = crd
                    .pointer("/metadata/labels")
                    .and_then(Value::as_object)
                    .map(|labels| {
                        labels
                            .iter()
                            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                            .collect()
                    })
                    .unwrap_or_default();
                Some((name, labels))
            })
            .collect();
        Self { labels }
    }
}

impl ContractVersions for CrdContracts {
    fn version_of(&self, group: &str, kind: &str) -> Option<String> {
        let name = crd_name(group, kind);
        newest_for_contract(&name, self.labels.get(&name)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_newest_version_of_the_contract_label_is_used() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "dockerclusters.infrastructure.cluster.x-k8s.io",
                "labels": {"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"}}});
        let contracts = CrdContracts::from_objects([&crd]);
        assert_eq!(
            contracts.version_of("infrastructure.cluster.x-k8s.io", "DockerCluster"),
            Some("v1beta2".to_owned())
        );
        assert_eq!(
            contracts.version_of("infrastructure.cluster.x-k8s.io", "Other"),
            None
        );
    }
}
