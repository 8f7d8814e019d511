//! What the ClusterResourceSets would apply to a Cluster, worked out offline from objects in
//! files: the sets that select it and, per resource, the objects it holds or why it cannot be
//! read.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::matching::sets_selecting;
use super::{Resource, SharedParses};
use crate::api::describe;
use crate::api::{Cluster, ClusterResourceSet, ResourceRef, STRATEGY_APPLY_ONCE};

/// One set that selects the Cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct SetPreview {
    /// The set's name.
    pub name: String,
    /// `ApplyOnce` or `Reconcile`.
    pub strategy: String,
    /// Its resources, in its order.
    pub resources: Vec<ResourcePreview>,
}

/// One resource of a set.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourcePreview {
    /// The Secret or ConfigMap.
    pub resource: ResourceRef,
    /// `Kind namespace/name` (or `Kind name` without a namespace: the workload cluster's
    /// default, or a cluster-scoped kind) of each object in creation order, or why none.
    pub objects: Result<Arc<[String]>, String>,
}

/// `(kind, namespace, name)` of a Secret or ConfigMap.
type Key = (String, String, String);
/// A Secret or ConfigMap read (kept so its parse is shared) with its objects described, or why not.
type Read = Result<(Resource, Arc<[String]>), String>;

/// Previews for many Clusters over the same objects: each Secret or ConfigMap is read once
/// however many sets, references and Clusters list it, and its data parsed once per content.
pub struct Previews<'a> {
    lookup: &'a dyn Fn(&str, &str, &str) -> Option<Value>,
    parses: SharedParses,
    read: HashMap<Key, Read>,
}

impl<'a> Previews<'a> {
    /// Previews over the objects `lookup(kind, namespace, name)` finds.
    pub fn new(lookup: &'a dyn Fn(&str, &str, &str) -> Option<Value>) -> Self {
        Self {
            lookup,
            parses: SharedParses::default(),
            read: HashMap::new(),
        }
    }

    /// The sets of `sets` that select `cluster` and what each would apply.
    pub fn of(&mut self, cluster: &Cluster, sets: &[ClusterResourceSet]) -> Vec<SetPreview> {
        sets_selecting(cluster, sets)
            .into_iter()
            .map(|set| SetPreview {
                name: set.name().to_owned(),
                strategy: Some(set.spec.strategy.as_str())
                    .filter(|s| !s.is_empty())
                    .unwrap_or(STRATEGY_APPLY_ONCE)
                    .to_owned(),
                resources: set
                    .spec
                    .resources
                    .iter()
                    .map(|resource| ResourcePreview {
                        resource: resource.clone(),
                        objects: self.objects_of(&resource.kind, set.namespace(), &resource.name),
                    })
                    .collect(),
            })
            .collect()
    }

    fn objects_of(&mut self, kind: &str, namespace: &str, name: &str) -> Result<Arc<[String]>, String> {
        let key = (kind.to_owned(), namespace.to_owned(), name.to_owned());
        let (lookup, parses) = (self.lookup, &mut self.parses);
        let read = self.read.entry(key).or_insert_with(|| {
            let found = lookup(kind, namespace, name).ok_or_else(|| "not found in the files".to_owned())?;
            let resource = parses.read(&found).map_err(|e| e.to_string())?;
            let described = resource.objects.iter().map(describe).collect();
            Ok((resource, described))
        });
        read.as_ref()
            .map(|(_, described)| described.clone())
            .map_err(Clone::clone)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn selected_sets_list_their_objects_or_why_not() {
        let cluster: Cluster = serde_json::from_value(
            json!({"metadata": {"name": "c1", "namespace": "ns", "labels": {"cni": "x"}}}),
        )
        .unwrap();
        let set = |name: &str, strategy: &str, cni: &str| -> ClusterResourceSet {
            serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns"},
                "spec": {"strategy": strategy, "clusterSelector": {"matchLabels": {"cni": cni}},
                         "resources": [{"kind": "ConfigMap", "name": "cm"}, {"kind": "Secret", "name": "gone"},
                                       {"kind": "Secret", "name": "opaque"}]}}))
            .unwrap()
        };
        let sets = [set("a", "", "x"), set("b", "Reconcile", "y")];
        let lookup = |kind: &str, namespace: &str, name: &str| match (kind, namespace, name) {
            ("ConfigMap", "ns", "cm") => Some(json!({"kind": "ConfigMap", "data": {
                "k": "kind: Role\nmetadata: {name: r, namespace: kube-system}\n---\nkind: Namespace\nmetadata: {name: net}\n"}})),
            ("Secret", "ns", "opaque") => Some(json!({"kind": "Secret", "data": {}})),
            _ => None,
        };
        let previews = Previews::new(&lookup).of(&cluster, &sets);
        assert_eq!(previews.len(), 1);
        assert_eq!(
            (previews[0].name.as_str(), previews[0].strategy.as_str()),
            ("a", "ApplyOnce")
        );
        let objects: Vec<_> = previews[0].resources.iter().map(|r| r.objects.clone()).collect();
        assert_eq!(
            objects[0].as_deref(),
            Ok(&["Namespace net".to_owned(), "Role kube-system/r".to_owned()][..])
        );
        assert_eq!(objects[1], Err("not found in the files".to_owned()));
        assert!(objects[2]
            .as_ref()
            .unwrap_err()
            .starts_with("unsupported secret type \"Opaque\""));
    }
}
