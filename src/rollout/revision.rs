//! What a revision of a ClusterClass holds, and its identity: the class (spec and status) and
//! the content of every template it refers to, read from a source, trimmed to what the desired
//! state is computed from, and hashed in a canonical form so that the same content always makes
//! the same revision.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::api::class_rollout::ClusterClassRolloutStatus;
use crate::api::crd::GROUP as CAPI_GROUP;
use crate::api::ClusterClass;
use crate::store::{group_of, ObjectSource};
use crate::topology::blueprint::{reference, template_references};

/// Longest object name Kubernetes accepts (a DNS subdomain).
const MAX_NAME: usize = 253;
/// Hex digits of the hash a revision's name ends with.
const NAME_HASH_DIGITS: usize = 10;
/// The annotation kubectl keeps the last applied manifest in: not content.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The content of one revision of a ClusterClass.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The class, trimmed: apiVersion, kind, metadata (name, namespace, uid, generation), spec,
    /// status.
    pub class: Value,
    /// Each template the class refers to, once, trimmed: apiVersion, kind, metadata (name,
    /// namespace, labels, annotations), spec.
    pub templates: Vec<Value>,
    /// `sha256:<hex>` over the class's spec, its discovered variables and the templates.
    pub hash: String,
}

/// Why no snapshot could be taken of a class now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// The class does not exist.
    #[error("ClusterClass {0} not found")]
    ClassNotFound(String),
    /// The class's status is not of its latest generation, or its variables are not ready.
    #[error("ClusterClass {0} has not been reconciled yet")]
    ClassNotReconciled(String),
    /// A template the class refers to does not exist (or the reference is incomplete).
    #[error("ClusterClass {class}: template {kind} {name:?} not found")]
    TemplateNotFound {
        /// namespace/name of the class.
        class: String,
        /// The template's kind.
        kind: String,
        /// The template's name.
        name: String,
    },
}

/// Takes the snapshot of the ClusterClass `namespace/name` as `source` holds it and its
/// templates now. A class whose status is not of its latest generation is not snapshot: the
/// revision would carry variables its controller has not discovered yet.
pub fn snapshot(source: &dyn ObjectSource, namespace: &str, name: &str) -> Result<Snapshot, SnapshotError> {
    let key = format!("{namespace}/{name}");
    let object = source
        .get(CAPI_GROUP, "ClusterClass", namespace, name)
        .ok_or_else(|| SnapshotError::ClassNotFound(key.clone()))?;
    let entry = source
        .cluster_class(namespace, name)
        .ok_or_else(|| SnapshotError::ClassNotFound(key.clone()))?;
    if !reconciled(&entry.class) {
        return Err(SnapshotError::ClassNotReconciled(key));
    }
    let mut seen = BTreeSet::new();
    let mut templates = Vec::new();
    for (_, template) in template_references(&entry.class) {
        let missing = || SnapshotError::TemplateNotFound {
            class: key.clone(),
            kind: template.kind.clone(),
            name: template.name.clone(),
        };
        let (api_version, kind, template_name) = reference(template).ok_or_else(missing)?;
        if !seen.insert((api_version, kind, template_name)) {
            continue;
        }
        let found = source
            .get(group_of(api_version), kind, namespace, template_name)
            .ok_or_else(missing)?;
        templates.push(trim(&found, &["labels", "annotations"]));
    }
    let class = trim(&object, &["uid", "generation"]);
    let hash = content_hash(&class, &templates);
    Ok(Snapshot {
        class,
        templates,
        hash,
    })
}

/// Whether the class's status is of its latest generation.
fn reconciled(class: &ClusterClass) -> bool {
    let observed = class.status.as_ref().and_then(|s| s.observed_generation);
    class.metadata.generation.is_none() || observed == class.metadata.generation
}

/// `object` with apiVersion, kind, spec, status and, of its metadata, name, namespace and the
/// fields named by `keep`.
fn trim(object: &Value, keep: &[&str]) -> Value {
    let mut metadata = Map::new();
    for field in ["name", "namespace"].iter().chain(keep) {
        if let Some(value) = object["metadata"].get(*field) {
            metadata.insert((*field).to_owned(), value.clone());
        }
    }
    if let Some(Value::Object(annotations)) = metadata.get_mut("annotations") {
        annotations.remove(LAST_APPLIED);
    }
    let mut trimmed = json!({
        "apiVersion": object["apiVersion"],
        "kind": object["kind"],
        "metadata": metadata,
    });
    for field in ["spec", "status"] {
        if let Some(value) = object.get(field) {
            trimmed[field] = value.clone();
        }
    }
    trimmed
}

/// The hash of what the desired state is computed from: the class's spec and discovered
/// variables, each template's identity, labels, annotations and spec. Keys are sorted first, so
/// the order the API server wrote them in does not matter.
pub fn content_hash(class: &Value, templates: &[Value]) -> String {
    let content = json!({
        "spec": class.get("spec"),
        "variables": class.pointer("/status/variables"),
        "templates": templates.iter().map(|t| json!({
            "apiVersion": t["apiVersion"], "kind": t["kind"], "name": t["metadata"]["name"],
            "labels": t["metadata"].get("labels"), "annotations": t["metadata"].get("annotations"),
            "spec": t.get("spec"),
        })).collect::<Vec<_>>(),
    });
    let mut hasher = Sha256::new();
    hasher.update(canonical(&content).to_string().as_bytes());
    let mut hex = String::from("sha256:");
    for byte in hasher.finalize() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// `value` with every object's keys in sorted order.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The name of the revision of class `class` with content `hash`: the class's name, a dash and
/// the hash's first ten hex digits (the class's name shortened to fit 253 characters).
pub fn revision_name(class: &str, hash: &str) -> String {
    let digits: String = hash
        .trim_start_matches("sha256:")
        .chars()
        .take(NAME_HASH_DIGITS)
        .collect();
    let room = MAX_NAME - NAME_HASH_DIGITS - 1;
    let prefix: &str = match class.char_indices().nth(room) {
        Some((cut, _)) => class[..cut].trim_end_matches(['-', '.']),
        None => class,
    };
    format!("{prefix}-{digits}")
}

/// The revisions of a class in use: the one each Cluster runs, the rollout's stable, target and
/// halted ones, and the class as it is now (`live`: a change queued behind a running rollout
/// must not be deleted and made again at every step).
pub fn in_use<'a>(status: &'a ClusterClassRolloutStatus, live: Option<&'a str>) -> BTreeSet<&'a str> {
    let mut kept: BTreeSet<&str> = status.clusters.iter().map(|e| e.revision.as_str()).collect();
    for named in [
        &status.stable_revision,
        &status.target_revision,
        &status.halted_revision,
    ] {
        kept.extend(named.as_deref());
    }
    kept.extend(live);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    fn store(worker_image: &str) -> MemoryStore {
        let yaml = format!(
            r#"
apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {{name: quick-start, namespace: default, generation: 2, uid: u1,
  annotations: {{kubectl.kubernetes.io/last-applied-configuration: "{{}}"}}}}
spec:
  infrastructure: {{templateRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerClusterTemplate, name: c}}}}
  controlPlane: {{templateRef: {{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: cp}}}}
  workers:
    machineDeployments:
    - class: a
      bootstrap: {{templateRef: {{apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate, name: w}}}}
      infrastructure: {{templateRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: m}}}}
    - class: b
      bootstrap: {{templateRef: {{apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate, name: w}}}}
      infrastructure: {{templateRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: m}}}}
status: {{observedGeneration: 2}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerClusterTemplate
metadata: {{name: c, namespace: default, resourceVersion: "7"}}
spec: {{template: {{spec: {{}}}}}}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlaneTemplate
metadata: {{name: cp, namespace: default}}
spec: {{template: {{spec: {{}}}}}}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata: {{name: w, namespace: default}}
spec: {{template: {{spec: {{}}}}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: DockerMachineTemplate
metadata: {{name: m, namespace: default, labels: {{team: a}}}}
spec: {{template: {{spec: {{customImage: "{worker_image}"}}}}}}
"#
        );
        MemoryStore::from_yaml(&yaml).unwrap()
    }

    #[test]
    fn a_snapshot_holds_each_template_once_trimmed() {
        let taken = snapshot(&store("kindest/node:v1.34.0"), "default", "quick-start").unwrap();
        assert_eq!(taken.templates.len(), 4, "the shared worker templates once each");
        assert_eq!(
            taken.templates[0]["metadata"],
            json!({"name": "c", "namespace": "default"})
        );
        assert_eq!(taken.templates[3]["metadata"]["labels"], json!({"team": "a"}));
        assert_eq!(taken.class["metadata"]["uid"], "u1");
        assert!(taken.class["metadata"].get("annotations").is_none());
        assert!(taken.hash.starts_with("sha256:") && taken.hash.len() == 71);
    }

    #[test]
    fn a_template_edited_in_place_changes_the_hash_and_nothing_else_does() {
        let first = snapshot(&store("kindest/node:v1.34.0"), "default", "quick-start").unwrap();
        let again = snapshot(&store("kindest/node:v1.34.0"), "default", "quick-start").unwrap();
        let edited = snapshot(&store("kindest/node:v1.35.0"), "default", "quick-start").unwrap();
        assert_eq!(first.hash, again.hash);
        assert_ne!(first.hash, edited.hash);
    }

    #[test]
    fn key_order_does_not_change_the_hash() {
        let class = json!({"spec": {"a": 1, "b": {"c": 2, "d": 3}}});
        let reordered = json!({"spec": {"b": {"d": 3, "c": 2}, "a": 1}});
        assert_eq!(content_hash(&class, &[]), content_hash(&reordered, &[]));
    }

    #[test]
    fn a_class_not_reconciled_or_missing_a_template_is_not_snapshot() {
        let text = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata: {name: q, namespace: d, generation: 3}\nstatus: {observedGeneration: 2}\n";
        let stale = MemoryStore::from_yaml(text).unwrap();
        assert_eq!(
            snapshot(&stale, "d", "q"),
            Err(SnapshotError::ClassNotReconciled("d/q".into()))
        );
        let missing =
            MemoryStore::from_yaml(&text.replace("observedGeneration: 2", "observedGeneration: 3")).unwrap();
        assert!(matches!(
            snapshot(&missing, "d", "q"),
            Err(SnapshotError::TemplateNotFound { .. })
        ));
        assert_eq!(
            snapshot(&missing, "d", "none"),
            Err(SnapshotError::ClassNotFound("d/none".into()))
        );
    }

    #[test]
    fn a_queued_revision_is_in_use_with_every_pinned_one() {
        let status: ClusterClassRolloutStatus = serde_json::from_value(json!({
            "stableRevision": "r1", "targetRevision": "r2",
            "clusters": [{"namespace": "d", "name": "a", "revision": "r1"}, {"namespace": "d", "name": "b", "revision": "r2"}],
        }))
        .unwrap();
        let kept: Vec<_> = in_use(&status, Some("r3")).into_iter().collect();
        assert_eq!(kept, ["r1", "r2", "r3"]);
    }

    #[test]
    fn revision_names_fit_a_dns_subdomain() {
        assert_eq!(
            revision_name("quick-start", "sha256:0123456789abcdef"),
            "quick-start-0123456789"
        );
        let long = format!("{}-x", "a".repeat(250));
        let name = revision_name(&long, "sha256:0123456789abcdef");
        assert_eq!(name.len(), 253);
        assert!(name.ends_with("a-0123456789"));
    }
}
