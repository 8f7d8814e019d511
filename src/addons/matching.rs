//! Which ClusterResourceSets select which Clusters: same namespace, a selector that parses and
//! is not empty (an empty one selects nothing), and the Cluster's labels matching it.

use std::collections::BTreeMap;

use crate::api::selector::{Selector, SelectorError};
use crate::api::{Cluster, ClusterResourceSet};
use crate::contract::cluster_status::CONTROL_PLANE_INITIALIZED;

/// The selector of `set`, None when it is empty (it then selects no Cluster).
pub fn cluster_selector(set: &ClusterResourceSet) -> Result<Option<Selector>, SelectorError> {
    let selector = Selector::parse(&set.spec.cluster_selector)?;
    Ok((!selector.is_empty()).then_some(selector))
}

/// The Clusters `set` applies to, in the order given: those of its namespace that its selector
/// matches and that are not being deleted. An error when the selector does not parse.
pub fn clusters_selected<'a>(
    set: &ClusterResourceSet,
    clusters: impl IntoIterator<Item = &'a Cluster>,
) -> Result<Vec<&'a Cluster>, SelectorError> {
    let Some(selector) = cluster_selector(set)? else {
        return Ok(Vec::new());
    };
    Ok(clusters
        .into_iter()
        .filter(|cluster| namespace_of(cluster) == set.namespace())
        .filter(|cluster| cluster.metadata.deletion_timestamp.is_none())
        .filter(|cluster| selector.matches(labels_of(cluster)))
        .collect())
}

/// The ClusterResourceSets that select `cluster`, in the order given. A set whose selector does
/// not parse selects nothing (its own reconcile reports the error).
pub fn sets_selecting<'a>(
    cluster: &Cluster,
    sets: impl IntoIterator<Item = &'a ClusterResourceSet>,
) -> Vec<&'a ClusterResourceSet> {
    let labels = labels_of(cluster);
    sets.into_iter()
        .filter(|set| set.namespace() == namespace_of(cluster))
        .filter(|set| matches!(cluster_selector(set), Ok(Some(selector)) if selector.matches(labels)))
        .collect()
}

/// Whether `cluster`'s control plane is initialized (`status.initialization.controlPlaneInitialized`,
/// or its `ControlPlaneInitialized` condition is True): only then can its API server take the
/// resources.
pub fn control_plane_initialized(cluster: &Cluster) -> bool {
    let status = cluster.status.as_ref();
    let initialized = status
        .and_then(|status| status.pointer("/initialization/controlPlaneInitialized"))
        .and_then(serde_json::Value::as_bool);
    initialized == Some(true)
        || status
            .and_then(|status| status.get("conditions"))
            .and_then(serde_json::Value::as_array)
            .is_some_and(|conditions| {
                conditions
                    .iter()
                    .any(|c| c["type"] == CONTROL_PLANE_INITIALIZED && c["status"] == "True")
            })
}

fn namespace_of(cluster: &Cluster) -> &str {
    cluster.metadata.namespace.as_deref().unwrap_or_default()
}

fn labels_of(cluster: &Cluster) -> &BTreeMap<String, String> {
    static NONE: BTreeMap<String, String> = BTreeMap::new();
    cluster.metadata.labels.as_ref().unwrap_or(&NONE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(yaml: &str) -> Cluster {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    fn set(name: &str, selector: &str) -> ClusterResourceSet {
        serde_yaml_ng::from_str(&format!(
            "metadata: {{name: {name}, namespace: default}}\nspec: {{clusterSelector: {selector}}}"
        ))
        .unwrap()
    }

    fn names<'a>(sets: impl IntoIterator<Item = &'a ClusterResourceSet>) -> Vec<&'a str> {
        sets.into_iter().map(ClusterResourceSet::name).collect()
    }

    #[test]
    fn sets_select_clusters_of_their_namespace_by_label() {
        let calico = cluster("metadata: {name: c1, namespace: default, labels: {cni: calico}}");
        let elsewhere = cluster("metadata: {name: c2, namespace: other, labels: {cni: calico}}");
        let sets = [
            set("cni", "{matchLabels: {cni: calico}}"),
            set("empty", "{}"),
            set("bad", "{matchExpressions: [{key: x, operator: Near}]}"),
            set("cilium", "{matchLabels: {cni: cilium}}"),
            set("any-cni", "{matchExpressions: [{key: cni, operator: Exists}]}"),
        ];
        assert_eq!(names(sets_selecting(&calico, &sets)), ["cni", "any-cni"]);
        assert!(sets_selecting(&elsewhere, &sets).is_empty());
        assert!(sets_selecting(&cluster("metadata: {name: c3, namespace: default}"), &sets).is_empty());
    }

    #[test]
    fn only_an_initialized_control_plane_takes_resources() {
        let with = |status: &str| {
            cluster(&format!(
                "metadata: {{name: c}}\nstatus: {{conditions: [{{type: ControlPlaneInitialized, status: '{status}'}}]}}"
            ))
        };
        assert!(control_plane_initialized(&with("True")));
        assert!(!control_plane_initialized(&with("False")));
        assert!(!control_plane_initialized(&cluster("metadata: {name: c}")));
        assert!(control_plane_initialized(&cluster(
            "metadata: {name: c}\nstatus: {initialization: {controlPlaneInitialized: true}}"
        )));
    }

    #[test]
    fn clusters_being_deleted_or_unmatched_are_left_out() {
        let clusters = [
            cluster("metadata: {name: a, namespace: default, labels: {cni: calico}}"),
            cluster("metadata: {name: b, namespace: default, labels: {cni: calico}, deletionTimestamp: '2024-01-01T00:00:00Z'}"),
            cluster("metadata: {name: c, namespace: default, labels: {cni: cilium}}"),
            cluster("metadata: {name: d, namespace: other, labels: {cni: calico}}"),
        ];
        let selected = clusters_selected(&set("cni", "{matchLabels: {cni: calico}}"), &clusters).unwrap();
        let selected: Vec<_> = selected.iter().map(|c| c.metadata.name.as_deref()).collect();
        assert_eq!(selected, [Some("a")]);
        assert!(clusters_selected(&set("empty", "{}"), &clusters)
            .unwrap()
            .is_empty());
        let err = clusters_selected(
            &set("bad", "{matchExpressions: [{key: x, operator: Near}]}"),
            &clusters,
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            r#""Near" is not a valid label selector operator"#
        );
    }
}
