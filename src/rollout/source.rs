//! A Cluster's desired state computed from its revision: an [`ObjectSource`] that answers the
//! class and its templates from a ClusterClassRevision, and everything else (the Cluster's
//! current objects, CRDs) from the source beneath.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::api::class_revision::ClusterClassRevisionSpec;
use crate::api::convert::ContractVersions;
use crate::api::crd::GROUP as CAPI_GROUP;
use crate::api::namespace_and_name;
use crate::api::{Cluster, ClusterClass};
use crate::decode::decode_value;
use crate::store::{group_of, ClassEntry, ObjectSource};

/// A revision made ready to answer reads: its class decoded (variables compiled on first use)
/// and its templates indexed. Revisions are immutable, so one is prepared once and shared.
#[derive(Debug)]
pub struct PreparedRevision {
    namespace: String,
    class_name: String,
    class_object: Arc<Value>,
    class: Arc<ClassEntry>,
    /// Templates by API group, kind and name.
    templates: HashMap<(String, String, String), Arc<Value>>,
}

impl PreparedRevision {
    /// Prepares the revision of `spec`, which lives in `namespace`.
    pub fn new(namespace: &str, spec: &ClusterClassRevisionSpec) -> Result<Self, String> {
        let class: ClusterClass = decode_value(spec.class.clone())
            .map_err(|e| format!("the revision's class cannot be read: {e}"))?;
        let templates = spec
            .templates
            .iter()
            .map(|template| {
                let api_version = template["apiVersion"].as_str().unwrap_or_default();
                let key = (
                    group_of(api_version).to_owned(),
                    template["kind"].as_str().unwrap_or_default().to_owned(),
                    template["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                );
                (key, Arc::new(template.clone()))
            })
            .collect();
        Ok(Self {
            namespace: namespace.to_owned(),
            class_name: spec.class_ref.name.clone(),
            class_object: Arc::new(spec.class.clone()),
            class: Arc::new(ClassEntry::new(class)),
            templates,
        })
    }

    /// Prepares a ClusterClassRevision object (as the API server or a file holds it).
    pub fn from_object(object: &Value) -> Result<Self, String> {
        let (namespace, name) = namespace_and_name(object);
        let spec: ClusterClassRevisionSpec = decode_value(object["spec"].clone())
            .map_err(|e| format!("ClusterClassRevision {namespace}/{name}: {e}"))?;
        Self::new(namespace, &spec)
    }

    /// Reads through this revision, falling back to `base`.
    pub fn over<'a>(&'a self, base: &'a dyn ObjectSource) -> RevisionSource<'a> {
        RevisionSource { revision: self, base }
    }

    fn is_class(&self, namespace: &str, name: &str) -> bool {
        namespace == self.namespace && name == self.class_name
    }
}

/// A source answering the class and templates of one revision, and the rest from `base`.
pub struct RevisionSource<'a> {
    revision: &'a PreparedRevision,
    base: &'a dyn ObjectSource,
}

impl ObjectSource for RevisionSource<'_> {
    fn get(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        let revision = self.revision;
        if group == CAPI_GROUP && kind == "ClusterClass" && revision.is_class(namespace, name) {
            return Some(revision.class_object.clone());
        }
        if namespace == revision.namespace {
            let key = (group.to_owned(), kind.to_owned(), name.to_owned());
            if let Some(template) = revision.templates.get(&key) {
                return Some(template.clone());
            }
        }
        self.base.get(group, kind, namespace, name)
    }

    fn list(&self, group: &str, kind: &str, namespace: &str) -> Vec<Arc<Value>> {
        self.base.list(group, kind, namespace)
    }

    fn list_of_cluster(&self, group: &str, kind: &str, namespace: &str, cluster: &str) -> Vec<Arc<Value>> {
        self.base.list_of_cluster(group, kind, namespace, cluster)
    }

    fn cluster_class(&self, namespace: &str, name: &str) -> Option<Arc<ClassEntry>> {
        if self.revision.is_class(namespace, name) {
            return Some(self.revision.class.clone());
        }
        self.base.cluster_class(namespace, name)
    }

    fn clusters_using_class(&self, class_namespace: &str, class_name: &str) -> Vec<Arc<Cluster>> {
        self.base.clusters_using_class(class_namespace, class_name)
    }

    fn contract_of(&self, group: &str, kind: &str, version: &str) -> Option<String> {
        self.base.contract_of(group, kind, version)
    }
}

impl ContractVersions for RevisionSource<'_> {
    fn version_of(&self, group: &str, kind: &str) -> Option<String> {
        self.base.version_of(group, kind)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::rollout::revision::snapshot;
    use crate::store::MemoryStore;

    const LIVE: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {name: qs, namespace: default, generation: 1}
spec:
  infrastructure: {templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DevClusterTemplate, name: c}}
  controlPlane: {templateRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: cp}}
status: {observedGeneration: 1}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DevClusterTemplate
metadata: {name: c, namespace: default}
spec: {template: {spec: {version: old}}}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlaneTemplate
metadata: {name: cp, namespace: default}
spec: {template: {spec: {}}}
"#;

    #[test]
    fn the_revision_answers_its_class_and_templates_and_the_base_the_rest() {
        let before = MemoryStore::from_yaml(LIVE).unwrap();
        let taken = snapshot(&before, "default", "qs").unwrap();
        let spec = ClusterClassRevisionSpec {
            class_ref: crate::api::class_rollout::ClassRolloutClassRef { name: "qs".into() },
            revision: 1,
            hash: taken.hash,
            class: taken.class,
            templates: taken.templates,
        };
        let revision = PreparedRevision::new("default", &spec).unwrap();
        let edited = MemoryStore::from_yaml(&LIVE.replace("version: old", "version: new")).unwrap();
        let source = revision.over(&edited);
        let template = source
            .get(
                "infrastructure.cluster.x-k8s.io",
                "DevClusterTemplate",
                "default",
                "c",
            )
            .unwrap();
        assert_eq!(template["spec"]["template"]["spec"]["version"], json!("old"));
        assert!(source.cluster_class("default", "qs").is_some());
        assert!(source
            .get(
                "infrastructure.cluster.x-k8s.io",
                "DevClusterTemplate",
                "other",
                "c"
            )
            .is_none());
        assert_eq!(
            edited
                .get(
                    "infrastructure.cluster.x-k8s.io",
                    "DevClusterTemplate",
                    "default",
                    "c"
                )
                .unwrap()["spec"]["template"]["spec"]["version"],
            json!("new")
        );
    }
}
