//! `--current DIR` and `--kubeconfig`/`--context` of `plan` and `check`: the current state of a
//! management cluster, from exported files or read live (read-only), held in the offline API
//! server as stored state before the files are applied over it.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::Value;

use super::api_reads::{request_timeout_arg, RequestTimeout, DEFAULT_REQUEST_TIMEOUT};
use super::files::read_objects;
use super::live::{read_current, Target};
use crate::contract::crd_name::crd_name;
use crate::offline::current::load_stored;
use crate::store::{MemoryStore, ObjectKey};

/// Where the current state comes from.
#[derive(Debug, Clone, Default, Args)]
pub struct CurrentArgs {
    /// Files or directories of objects as the management cluster stores them (`kubectl get
    /// clusters,clusterclasses,... -o yaml`: Lists, status, uid and resourceVersion kept; v1beta1 or
    /// v1beta2). They are loaded as stored, without admission; the -f files are then applied
    /// over them as `kubectl apply` would (an update, with the stored object as oldObject).
    #[arg(long = "current", value_name = "PATH", num_args = 1.., conflicts_with_all = ["kubeconfig", "context"])]
    pub current: Vec<PathBuf>,
    /// Read the current state from a management cluster instead, read-only (get and list only:
    /// see manifests/current-state-reader.yaml). Without a path: KUBECONFIG, then ~/.kube/config.
    #[arg(long, value_name = "PATH", num_args = 0..=1)]
    pub kubeconfig: Option<Option<PathBuf>>,
    /// The kubeconfig context to read the current state from (implies --kubeconfig).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// How long one request to the management cluster may take, as kubectl's flag: `30s`, `2m`,
    /// a number of seconds; `0` for no limit (kubectl's default; ours is 30s).
    #[arg(long, value_name = "DURATION", value_parser = request_timeout_arg, default_value = DEFAULT_REQUEST_TIMEOUT)]
    pub request_timeout: RequestTimeout,
}

/// The current state loaded, and where from.
#[derive(Debug)]
pub struct CurrentState {
    /// The offline API server holding it.
    pub store: MemoryStore,
    /// How many objects it holds.
    pub objects: usize,
}

impl CurrentArgs {
    /// Whether any current state was asked for.
    pub fn given(&self) -> bool {
        !self.current.is_empty() || self.kubeconfig.is_some() || self.context.is_some()
    }

    /// The current state of the Clusters in `files` (objects as written), in a store; `None`
    /// when none was asked for.
    pub fn load(&self, files: &[Value]) -> Result<Option<CurrentState>> {
        if !self.given() {
            return Ok(None);
        }
        let objects: Vec<(String, Value)> = if self.current.is_empty() {
            let target = Target {
                kubeconfig: self.kubeconfig.as_ref().and_then(Option::as_deref),
                context: self.context.as_deref(),
                request_timeout: self.request_timeout,
            };
            read_current(&target, files)?
                .into_iter()
                .map(|object| ("the management cluster".to_owned(), object))
                .collect()
        } else {
            read_objects(&self.current)?
                .into_iter()
                .map(|sourced| (sourced.source.display().to_string(), sourced.object))
                .collect()
        };
        let mut store = MemoryStore::default();
        let count = objects.len();
        let mut first_seen: HashMap<ObjectKey, String> = HashMap::new();
        for (source, object) in objects {
            let key = ObjectKey::of(&object);
            if let Some(first) = first_seen.get(&key) {
                bail!("current state from {source}: {}", given_twice(&key, first));
            }
            load_stored(&mut store, object, &source)
                .with_context(|| format!("current state from {source}"))?;
            first_seen.insert(key, source);
        }
        Ok(Some(CurrentState {
            store,
            objects: count,
        }))
    }
}

/// The API server's refusal of a second object of `key` (the first read from `first`): one
/// cluster holds one object per kind, namespace and name, so which copy is current is unknown.
fn given_twice(key: &ObjectKey, first: &str) -> String {
    let resource = crd_name(&key.group, &key.kind);
    format!(
        "{} {:?} already exists: {} {}/{} is also in {first} (the current state holds one object per kind, \
         namespace and name)",
        resource.trim_end_matches('.'),
        key.name,
        key.kind,
        key.namespace,
        key.name
    )
}

/// For a Cluster the webhooks refused because its version rules need its current control plane
/// and no current state was given: which object is missing and how to give it.
pub fn missing_state_hint(object: &Value, message: &str) -> Option<String> {
    if object["kind"] != "Cluster" {
        return None;
    }
    if let Some(hint) = exported_hint(object, message) {
        return Some(hint);
    }
    if !message.contains("failed to get control plane object") {
        return None;
    }
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or("default");
    let reference = &object["spec"]["controlPlaneRef"];
    let missing = match reference["name"].as_str() {
        Some(cp) => format!(
            "its control plane {} {namespace}/{cp} (spec.controlPlaneRef) is not in the files",
            reference["kind"].as_str().unwrap_or("object")
        ),
        None => "its control plane is not in the files (spec.controlPlaneRef, which the topology \
                 controller sets, is unset)"
            .to_owned(),
    };
    Some(format!(
        "hint: a version change of Cluster {namespace}/{name} is checked against the Cluster as it runs, and {missing}; \
         give the current state with --current DIR (e.g. kubectl get clusters,clusterclasses,\
         kubeadmcontrolplanes,machinedeployments -n {namespace} -o yaml > DIR/current.yaml) or \
         read it from the management cluster with --kubeconfig"
    ))
}

/// For a Cluster exported from a management cluster (`kubectl get -o yaml`: metadata the API
/// server set, refs the topology controller set) given to `-f`, where it is created anew and
/// refused: that such an export is the current state, and how to give it.
fn exported_hint(object: &Value, message: &str) -> Option<String> {
    let metadata = &object["metadata"];
    let set_by_server = ["resourceVersion", "uid", "creationTimestamp", "managedFields"]
        .into_iter()
        .find(|key| !metadata[*key].is_null())?;
    if !message.contains("Forbidden") {
        return None;
    }
    let name = metadata["name"].as_str().unwrap_or_default();
    let namespace = metadata["namespace"].as_str().unwrap_or("default");
    Some(format!(
        "hint: Cluster {namespace}/{name} was exported from a management cluster (it has metadata.{set_by_server}), \
         so -f creates it anew, with the refs the topology controller set; give the export as the current state with \
         --current FILE and the Cluster you mean to apply with -f, or read the current state with --kubeconfig"
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_refused_version_change_says_which_object_is_missing() {
        let cluster = json!({"kind": "Cluster", "metadata": {"name": "dev", "namespace": "ns"}, "spec": {}});
        let message = "version cannot be changed: failed to check if control plane is upgrading: \
                       failed to get control plane object: cannot get object - object reference not set";
        let hint = missing_state_hint(&cluster, message).unwrap_or_default();
        assert!(hint.contains("Cluster ns/dev"), "{hint}");
        assert!(hint.contains("spec.controlPlaneRef"), "{hint}");
        assert!(
            hint.contains("--current DIR") && hint.contains("--kubeconfig"),
            "{hint}"
        );
        let with_ref = json!({"kind": "Cluster", "metadata": {"name": "dev"},
            "spec": {"controlPlaneRef": {"kind": "KubeadmControlPlane", "name": "dev-x7k2p"}}});
        let hint = missing_state_hint(&with_ref, message).unwrap_or_default();
        assert!(hint.contains("KubeadmControlPlane default/dev-x7k2p"), "{hint}");
        assert_eq!(missing_state_hint(&cluster, "another denial"), None);
        let exported = json!({"kind": "Cluster", "metadata": {"name": "dev", "namespace": "ns", "resourceVersion": "4107"}});
        let forbidden = "spec.controlPlaneRef: Forbidden: cannot be set together with spec.topology";
        let hint = missing_state_hint(&exported, forbidden).unwrap_or_default();
        assert!(
            hint.contains("Cluster ns/dev was exported") && hint.contains("metadata.resourceVersion"),
            "{hint}"
        );
        assert!(
            hint.contains("--current FILE") && hint.contains("--kubeconfig"),
            "{hint}"
        );
    }

    #[test]
    fn an_object_given_twice_is_named_with_both_files() {
        let key = ObjectKey::of(
            &json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "dev", "namespace": "ns"}}),
        );
        assert_eq!(
            given_twice(&key, "a.yaml"),
            "clusters.cluster.x-k8s.io \"dev\" already exists: Cluster ns/dev is also in a.yaml (the current \
             state holds one object per kind, namespace and name)"
        );
        let config_map =
            ObjectKey::of(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}));
        assert!(given_twice(&config_map, "a.yaml").starts_with("configmaps \"c\" already exists"));
    }
}
