//! [`ContractVersions`] over an [`ObjectSource`]: the version of a referenced kind is read from
//! its CRD (`<plural>.<group>`, as Cluster API names it) in the source, from the label
//! `cluster.x-k8s.io/v1beta2` and then `cluster.x-k8s.io/v1beta1` (Cluster API v1.14 speaks the
//! v1beta2 contract and still accepts v1beta1), the newest version listed there.
//!
//! The source must hold the CRDs: the in-memory store does when the manifests include them;
//! the watch cache (`WATCHED_KINDS`) does not watch CRDs yet, so behind the server every
//! conversion to v1beta1 of a Cluster with refs fails until it does (see the `/convert` route).

use serde_json::Value;

use super::ObjectSource;
use crate::api::convert::ContractVersions;
use crate::contract::crd_name::crd_name;
use crate::contract::versions::compare_versions;

/// The contract labels tried, newest contract first.
const LABELS: [&str; 2] = ["cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta1"];

/// Reads contract versions from the CRDs an [`ObjectSource`] holds.
pub struct SourceContractVersions<'a>(pub &'a dyn ObjectSource);

impl ContractVersions for SourceContractVersions<'_> {
    fn version_of(&self, group: &str, kind: &str) -> Option<String> {
        let name = crd_name(group, kind);
        // CRDs are cluster-scoped; the in-memory store files objects without a namespace under
        // `default`.
        let crd = ["", "default"].iter().find_map(|namespace| {
            self.0.get(
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                namespace,
                &name,
            )
        })?;
        let labels = crd.pointer("/metadata/labels")?;
        LABELS.iter().find_map(|label| newest(labels.get(*label)?))
    }
}

/// The newest of the `_`-separated versions a label lists.
fn newest(listed: &Value) -> Option<String> {
    listed
        .as_str()?
        .split('_')
        .filter(|v| !v.is_empty())
        .max_by(|a, b| compare_versions(a, b))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    #[test]
    fn prefers_the_v1beta2_contract_and_the_newest_version() {
        let store = MemoryStore::from_yaml(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  \
             name: dockerclusters.infrastructure.cluster.x-k8s.io\n  labels:\n    \
             cluster.x-k8s.io/v1beta1: v1alpha4_v1beta1\n    cluster.x-k8s.io/v1beta2: v1beta1_v1beta2\n\
             ---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  \
             name: kubeadmcontrolplanes.controlplane.cluster.x-k8s.io\n  labels:\n    \
             cluster.x-k8s.io/v1beta1: v1beta1\n",
        )
        .expect("the CRDs parse");
        let versions = SourceContractVersions(&store);
        let docker = versions.version_of("infrastructure.cluster.x-k8s.io", "DockerCluster");
        assert_eq!(docker.as_deref(), Some("v1beta2"));
        let kcp = versions.version_of("controlplane.cluster.x-k8s.io", "KubeadmControlPlane");
        assert_eq!(kcp.as_deref(), Some("v1beta1"));
        assert_eq!(
            versions.version_of("infrastructure.cluster.x-k8s.io", "AWSCluster"),
            None
        );
    }
}
