//! Which revision a Cluster runs: its entry in the status of its class's ClusterClassRollout,
//! else the rollout's target (a Cluster new to the rollout starts at the newest revision). A
//! class without a rollout policy, or whose policy has no status yet, pins nothing: its Clusters
//! follow the class itself, as Cluster API's do. The controller and `plan` read it alike.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::api::class_rollout::{ClusterClassRolloutStatus, REVISION_KIND, ROLLOUT_GROUP, ROLLOUT_KIND};
use crate::api::Cluster;
use crate::store::ObjectSource;

/// A Cluster's pinned revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Pin {
    /// The namespace of the class and its revisions.
    pub namespace: String,
    /// The ClusterClassRevision's name.
    pub name: String,
}

impl Pin {
    /// The revision object, if `source` holds it.
    pub fn revision(&self, source: &dyn ObjectSource) -> Option<Arc<Value>> {
        source.get(ROLLOUT_GROUP, REVISION_KIND, &self.namespace, &self.name)
    }
}

/// The revision `cluster` runs, or `None` when it follows its class.
pub fn pin_of(source: &dyn ObjectSource, cluster: &Cluster) -> Option<Pin> {
    let topology = cluster.spec.managed_topology()?;
    let namespace = cluster.metadata.namespace.clone().unwrap_or_default();
    let name = cluster.metadata.name.clone().unwrap_or_default();
    let class_namespace = match topology.class_ref.namespace.as_str() {
        "" => namespace.clone(),
        other => other.to_owned(),
    };
    let policy = policies_of(source, &class_namespace, &topology.class_ref.name)
        .into_iter()
        .next()?;
    let revision = revision_in(policy.get("status")?, &namespace, &name)?.to_owned();
    Some(Pin {
        namespace: class_namespace,
        name: revision,
    })
}

/// The revision the Cluster `namespace/name` runs under a rollout whose status (as stored) is
/// `status`: its entry, else the target. Read in place, without decoding the status, as the
/// topology controller asks on every reconcile.
pub fn revision_in<'a>(status: &'a Value, namespace: &str, name: &str) -> Option<&'a str> {
    let entries = status.get("clusters").and_then(Value::as_array);
    let entry = entries
        .into_iter()
        .flatten()
        .find(|e| e["namespace"] == namespace && e["name"] == name);
    entry
        .and_then(|e| e["revision"].as_str())
        .or_else(|| status["targetRevision"].as_str())
}

/// Each Cluster's revision in a rollout's status, indexed once for lookups of many Clusters.
pub struct Pins<'a> {
    entries: HashMap<(&'a str, &'a str), &'a str>,
    target: Option<&'a str>,
}

impl<'a> Pins<'a> {
    /// The index of `status` (`None`: no status yet, nothing pinned).
    pub fn of(status: Option<&'a ClusterClassRolloutStatus>) -> Self {
        let entries = status
            .into_iter()
            .flat_map(|s| &s.clusters)
            .map(|e| ((e.namespace.as_str(), e.name.as_str()), e.revision.as_str()))
            .collect();
        let target = status.and_then(|s| s.target_revision.as_deref());
        Self { entries, target }
    }

    /// The revision of the Cluster `namespace/name`: its entry, else the target.
    pub fn revision(&self, namespace: &str, name: &str) -> Option<&'a str> {
        self.entries.get(&(namespace, name)).copied().or(self.target)
    }
}

/// The ClusterClassRollouts naming the class `namespace/class`, oldest first (then by name): the
/// first governs the class, the others are ignored.
pub fn policies_of(source: &dyn ObjectSource, namespace: &str, class: &str) -> Vec<Arc<Value>> {
    let mut policies: Vec<Arc<Value>> = source
        .list(ROLLOUT_GROUP, ROLLOUT_KIND, namespace)
        .into_iter()
        .filter(|p| p.pointer("/spec/classRef/name").and_then(Value::as_str) == Some(class))
        .collect();
    let text = |p: &Value, pointer: &str| {
        p.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    policies.sort_by_key(|p| (text(p, "/metadata/creationTimestamp"), text(p, "/metadata/name")));
    policies
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    const STATE: &str = r#"
apiVersion: rollout.capi-topology.io/v1alpha1
kind: ClusterClassRollout
metadata: {name: qs, namespace: default, creationTimestamp: "2026-11-28T10:00:00Z"}
spec: {classRef: {name: quick-start}}
status:
  targetRevision: quick-start-2
  clusters:
  - {namespace: default, name: held, revision: quick-start-1}
---
apiVersion: rollout.capi-topology.io/v1alpha1
kind: ClusterClassRollout
metadata: {name: newer, namespace: default, creationTimestamp: "2026-11-28T11:00:00Z"}
spec: {classRef: {name: quick-start}}
status: {targetRevision: ignored}
"#;

    fn cluster(name: &str, class: &str) -> Cluster {
        let text = format!(
            "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {{name: {name}, namespace: default}}\nspec: {{topology: {{classRef: {{name: {class}}}, version: v1.34.0}}}}\n"
        );
        serde_yaml_ng::from_str(&text).unwrap()
    }

    #[test]
    fn an_entry_pins_else_the_target_else_the_class_itself() {
        let store = MemoryStore::from_yaml(STATE).unwrap();
        let pin = |name: &str, class: &str| pin_of(&store, &cluster(name, class)).map(|p| p.name);
        assert_eq!(pin("held", "quick-start").as_deref(), Some("quick-start-1"));
        assert_eq!(
            pin("new", "quick-start").as_deref(),
            Some("quick-start-2"),
            "the oldest policy governs"
        );
        assert_eq!(pin("other", "other-class"), None);
    }
}
