//! The CustomResourceDefinitions of our own group, `rollout.capi-topology.io`: ClusterClassRollout
//! and ClusterClassRevision, generated from their types (kube's derive, with the CEL rules the
//! types declare).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use super::class_revision::ClusterClassRevision;
use super::class_rollout::ClusterClassRollout;

/// The CRDs of ClusterClassRollout and ClusterClassRevision.
pub fn rollout_custom_resource_definitions() -> Vec<CustomResourceDefinition> {
    vec![ClusterClassRollout::crd(), ClusterClassRevision::crd()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crds_are_namespaced_with_a_status_only_for_the_rollout() {
        let crds = rollout_custom_resource_definitions();
        let names: Vec<_> = crds
            .iter()
            .map(|c| c.metadata.name.clone().unwrap_or_default())
            .collect();
        assert_eq!(
            names,
            [
                "clusterclassrollouts.rollout.capi-topology.io",
                "clusterclassrevisions.rollout.capi-topology.io"
            ]
        );
        assert!(crds.iter().all(|c| c.spec.scope == "Namespaced"));
        let status = |c: &CustomResourceDefinition| {
            c.spec.versions[0]
                .subresources
                .as_ref()
                .and_then(|s| s.status.clone())
                .is_some()
        };
        assert!(status(&crds[0]) && !status(&crds[1]));
    }

    #[test]
    fn revisions_are_immutable_and_rollouts_keep_their_class() {
        let crds = serde_json::to_string(&rollout_custom_resource_definitions()).unwrap();
        assert!(crds.contains("a ClusterClassRevision is immutable"));
        assert!(crds.contains("classRef is immutable"));
    }
}
