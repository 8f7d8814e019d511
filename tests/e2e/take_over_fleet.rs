//! The fleet the take-over e2e starts from, made by Cluster API v1.14.0's own topology controller:
//! two ClusterClasses over v1.14.0's in-memory templates, `in-memory` with variables and inline
//! patches written as Go templates, `in-memory-external` patched by the test extension's
//! GeneratePatches (its variables from its DiscoverVariables), each with one Cluster; and what
//! the test compares before and after a switch: Machine UIDs, the names of the objects each
//! Cluster's topology owns (template clones included), the pending-hooks annotation.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::cache::cluster_api;
use crate::cluster_api::clusterctl_defaults;
use crate::kubectl::Kubectl;
use crate::lifecycle_hooks::CONFIG;

/// The Cluster of the inline class, and the one of the external class.
pub const INLINE: &str = "inline";
pub const EXTERNAL: &str = "external";
/// The inline class (v1.14.0's name) and the external one.
pub const INLINE_CLASS: &str = "in-memory";
const EXTERNAL_CLASS: &str = "in-memory-external";
/// The pending-hooks annotation Cluster API's topology controller keeps on a Cluster.
pub const PENDING_HOOKS: &str = "runtime.cluster.x-k8s.io/pending-hooks";
/// What each Cluster's topology owns, whose names must not change across a switch.
const OWNED: &str = "devclusters,kubeadmcontrolplanes,machinedeployments,machinehealthchecks,devmachinetemplates,kubeadmconfigtemplates";

/// The inline class's variable and patches: Go templates over a variable and builtins, on the
/// control plane template and on the workers' bootstrap template.
fn inline_patches() -> Value {
    json!({
        "variables": [{"name": "fleet", "required": true,
            "schema": {"openAPIV3Schema": {"type": "string", "default": "blue"}}}],
        "patches": [{"name": "fleet-files", "definitions": [
            {"selector": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
                "kind": "KubeadmControlPlaneTemplate", "matchResources": {"controlPlane": true}},
             "jsonPatches": [{"op": "add", "path": "/spec/template/spec/kubeadmConfigSpec/files",
                "valueFrom": {"template": "- path: /etc/fleet\n  owner: root:root\n  permissions: \"0644\"\n  content: \"{{ .builtin.cluster.name }} in fleet {{ .fleet }}\"\n"}}]},
            {"selector": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
                "kind": "KubeadmConfigTemplate",
                "matchResources": {"machineDeploymentClass": {"names": ["default-worker"]}}},
             "jsonPatches": [{"op": "add", "path": "/spec/template/spec/files",
                "valueFrom": {"template": "- path: /etc/fleet\n  content: \"{{ .builtin.machineDeployment.topologyName }} of {{ .builtin.cluster.name }}\"\n"}}]},
        ]}],
    })
}

/// The external class's patch: the test extension's handlers, registered as [`CONFIG`].
fn external_patches() -> Value {
    json!([{"name": "extension", "external": {
        "generatePatchesExtension": format!("generate-patches.{CONFIG}"),
        "validateTopologyExtension": format!("validate-topology.{CONFIG}"),
        "discoverVariablesExtension": format!("discover-variables.{CONFIG}"),
    }}])
}

/// The templates and both classes (listing `versions`, so an upgrade steps through the middle
/// one), then both Clusters at `versions[0]`, one control plane Machine and one worker each.
pub fn manifests(versions: [&str; 3]) -> (Vec<Value>, Vec<Value>) {
    let templates = cluster_api()
        .module("sigs.k8s.io/cluster-api/test")
        .join("infrastructure/docker/templates");
    let read = |file: &str| {
        let text = std::fs::read_to_string(templates.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let text = text
            .replace("${NAMESPACE}", "default")
            .replace("${KUBERNETES_VERSION}", versions[0])
            .replace("${CONTROL_PLANE_MACHINE_COUNT}", "1")
            .replace("${WORKER_MACHINE_COUNT}", "1");
        clusterctl_defaults(&text)
    };
    let documents = |text: &str| -> Vec<Value> {
        serde_yaml_ng::Deserializer::from_str(text)
            .map(|d| serde::Deserialize::deserialize(d).expect("v1.14.0's templates are YAML"))
            .collect()
    };
    let mut classes = documents(&read("clusterclass-in-memory.yaml"));
    let mut inline = classes
        .iter()
        .find(|o| o["kind"] == "ClusterClass")
        .cloned()
        .expect("the in-memory ClusterClass");
    inline["spec"]["kubernetesVersions"] = json!(versions);
    let mut external = inline.clone();
    for (key, value) in inline_patches().as_object().expect("an object") {
        inline["spec"][key] = value.clone();
    }
    external["metadata"]["name"] = json!(EXTERNAL_CLASS);
    external["spec"]["patches"] = external_patches();
    classes.retain(|o| o["kind"] != "ClusterClass");
    classes.extend([inline, external]);

    let cluster = |name: &str, class: &str, variable: Value| {
        let text = read("cluster-template-in-memory.yaml").replace("${CLUSTER_NAME}", name);
        let mut cluster = documents(&text).remove(0);
        cluster["spec"]["topology"]["classRef"]["name"] = json!(class);
        cluster["spec"]["topology"]["variables"] = json!([variable]);
        cluster
    };
    let clusters = vec![
        cluster(INLINE, INLINE_CLASS, json!({"name": "fleet", "value": "green"})),
        cluster(
            EXTERNAL,
            EXTERNAL_CLASS,
            json!({"name": "http-proxy", "value": {"host": "proxy.example.com"}}),
        ),
    ];
    (classes, clusters)
}

/// What a switch must leave as it is, per Cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Machine name to UID.
    pub machines: BTreeMap<String, String>,
    /// `kind/name` of every object the topology owns (template clones included).
    pub owned: Vec<String>,
    /// The pending-hooks annotation.
    pub pending_hooks: Value,
}

fn items(kubectl: &Kubectl, resources: &str, selector: &str) -> Result<Vec<Value>, String> {
    let text = kubectl.ok(&["get", resources, "-n", "default", "-l", selector, "-o", "json"])?;
    let list: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    Ok(list["items"].as_array().cloned().unwrap_or_default())
}

impl Snapshot {
    /// Cluster `default/cluster` now.
    pub fn read(kubectl: &Kubectl, cluster: &str) -> Result<Snapshot, String> {
        let of_cluster = format!("cluster.x-k8s.io/cluster-name={cluster}");
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let machines = items(kubectl, "machines", &of_cluster)?
            .iter()
            .map(|m| (text(&m["metadata"]["name"]), text(&m["metadata"]["uid"])))
            .collect();
        let mut owned: Vec<String> = items(kubectl, OWNED, &of_cluster)?
            .iter()
            .map(|o| format!("{}/{}", text(&o["kind"]), text(&o["metadata"]["name"])))
            .collect();
        owned.sort();
        let object = kubectl.get_json("cluster", "default", cluster)?;
        Ok(Snapshot {
            machines,
            owned,
            pending_hooks: object["metadata"]["annotations"][PENDING_HOOKS].clone(),
        })
    }

    /// The Machines of the control plane (their names start with the KubeadmControlPlane's).
    pub fn control_plane_machines(&self) -> BTreeMap<String, String> {
        let control_plane = self
            .owned
            .iter()
            .find_map(|o| o.strip_prefix("KubeadmControlPlane/"))
            .unwrap_or_default()
            .to_owned();
        self.machines
            .iter()
            .filter(|(name, _)| !control_plane.is_empty() && name.starts_with(&format!("{control_plane}-")))
            .map(|(name, uid)| (name.clone(), uid.clone()))
            .collect()
    }
}

/// The versions of every Machine of `default/cluster`, and whether the Cluster is Available.
pub fn versions(kubectl: &Kubectl, cluster: &str) -> Result<(Vec<String>, bool), String> {
    let of_cluster = format!("cluster.x-k8s.io/cluster-name={cluster}");
    let versions = items(kubectl, "machines", &of_cluster)?
        .iter()
        .map(|m| m["spec"]["version"].as_str().unwrap_or_default().to_owned())
        .collect();
    let object = kubectl.get_json("cluster", "default", cluster)?;
    let available = object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Available" && c["status"] == "True");
    Ok((versions, available))
}
