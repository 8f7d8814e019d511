//! A ClusterClass template change rotates the Cluster's templates and the real controllers
//! replace the Machines (#24): the class's control plane and worker DevMachineTemplates are
//! swapped for new ones; capi-topology clones new templates for the Cluster and points the
//! KubeadmControlPlane and the MachineDeployment at them; Cluster API's KubeadmControlPlane and
//! MachineDeployment controllers roll every Machine onto them, and the old clones are deleted
//! once nothing uses them.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::kubectl::Kubectl;

/// The class templates swapped, and the JSON pointer of their reference in the ClusterClass.
const SWAPPED: [(&str, &str); 2] = [
    (
        "in-memory-control-plane",
        "/spec/controlPlane/machineInfrastructure/templateRef/name",
    ),
    (
        "in-memory-default-worker-machinetemplate",
        "/spec/workers/machineDeployments/0/infrastructure/templateRef/name",
    ),
];

fn list(kubectl: &Kubectl, resource: &str, selector: &str) -> Result<Vec<Value>, String> {
    let text = kubectl.ok(&["get", resource, "-n", "default", "-l", selector, "-o", "json"])?;
    let list: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    Ok(list["items"].as_array().cloned().unwrap_or_default())
}

fn names(objects: &[Value]) -> BTreeSet<String> {
    objects
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// The Cluster's own DevMachineTemplates (the clones capi-topology made).
fn cluster_templates(kubectl: &Kubectl, cluster: &str) -> Result<BTreeSet<String>, String> {
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster}");
    Ok(names(&list(kubectl, "devmachinetemplates", &selector)?))
}

/// The Cluster's Machines, each with the template its DevMachine was cloned from.
pub fn machines(kubectl: &Kubectl, cluster: &str) -> Result<BTreeMap<String, String>, String> {
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster}");
    let cloned_from: BTreeMap<String, String> = list(kubectl, "devmachines", &selector)?
        .iter()
        .map(|m| {
            let name = m["metadata"]["name"].as_str().unwrap_or_default().to_owned();
            let from = m["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (name, from)
        })
        .collect();
    Ok(list(kubectl, "machines", &selector)?
        .iter()
        .map(|m| {
            let name = m["metadata"]["name"].as_str().unwrap_or_default().to_owned();
            let infrastructure = m["spec"]["infrastructureRef"]["name"]
                .as_str()
                .unwrap_or_default();
            (name, cloned_from.get(infrastructure).cloned().unwrap_or_default())
        })
        .collect())
}

/// Swaps the class's machine templates for copies that boot faster, then waits (up to `within`)
/// until the Cluster runs `count` Machines, all new, all cloned from the Cluster's new templates,
/// the old clones deleted and the Cluster `Available` again. `available` reads that condition.
pub fn swap_machine_templates(
    kubectl: &Kubectl,
    cluster: &str,
    count: usize,
    within: Duration,
    available: impl Fn() -> bool,
) -> Result<(), String> {
    swap_machine_templates_then(kubectl, cluster, count, within, available, true).map(drop)
}

/// [`swap_machine_templates`], the old clones' deletion required only when `old_deleted`;
/// returns the old clones still there.
pub fn swap_machine_templates_then(
    kubectl: &Kubectl,
    cluster: &str,
    count: usize,
    within: Duration,
    available: impl Fn() -> bool,
    old_deleted: bool,
) -> Result<BTreeSet<String>, String> {
    let before = swap_class_templates(kubectl, cluster)?;
    rotated(kubectl, cluster, &before, (count, within), available, old_deleted)
}

/// What Cluster `cluster` ran before its class's templates were swapped.
pub struct Before {
    /// Its DevMachineTemplate clones.
    pub templates: BTreeSet<String>,
    /// Its Machines, each with the template its DevMachine was cloned from.
    pub machines: BTreeMap<String, String>,
}

/// Swaps the class's machine templates for copies that boot faster; returns what Cluster
/// `cluster` ran before.
pub fn swap_class_templates(kubectl: &Kubectl, cluster: &str) -> Result<Before, String> {
    let before = Before {
        templates: cluster_templates(kubectl, cluster)?,
        machines: machines(kubectl, cluster)?,
    };
    let mut patch = Vec::new();
    for (template, pointer) in SWAPPED {
        let text = kubectl.ok(&[
            "get",
            "devmachinetemplate",
            template,
            "-n",
            "default",
            "-o",
            "json",
        ])?;
        let mut object: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let renamed = format!("{template}-v2");
        object["metadata"] = json!({"name": renamed, "namespace": "default"});
        object["spec"]["template"]["spec"]["backend"]["inMemory"]["vm"]["provisioning"]["startupDuration"] =
            json!("3s");
        let out = kubectl.apply(&object.to_string(), &[])?;
        if !out.success {
            return Err(out.stderr);
        }
        patch.push(json!({"op": "replace", "path": pointer, "value": renamed}));
    }
    kubectl.ok(&[
        "patch",
        "clusterclass",
        "in-memory",
        "-n",
        "default",
        "--type=json",
        "-p",
        &Value::Array(patch).to_string(),
    ])?;
    Ok(before)
}

/// Waits (up to `within`) until Cluster `cluster` runs `count` Machines, none of `before`'s, all
/// cloned from its new templates, the old clones deleted (when `old_deleted`) and `available`
/// true; returns the old clones still there.
pub fn rotated(
    kubectl: &Kubectl,
    cluster: &str,
    before: &Before,
    (count, within): (usize, Duration),
    available: impl Fn() -> bool,
    old_deleted: bool,
) -> Result<BTreeSet<String>, String> {
    let (old_templates, old_machines) = (&before.templates, &before.machines);
    let started = Instant::now();
    loop {
        let templates = cluster_templates(kubectl, cluster)?;
        let now = machines(kubectl, cluster)?;
        let left: BTreeSet<String> = templates.intersection(old_templates).cloned().collect();
        let rotated = (left.is_empty() || !old_deleted) && templates.len() > left.len();
        let replaced = now.len() == count
            && now.iter().all(|(name, from)| {
                !old_machines.contains_key(name) && templates.contains(from) && !left.contains(from)
            });
        if rotated && replaced && available() {
            return Ok(left);
        }
        if started.elapsed() > within {
            return Err(format!(
                "templates before {old_templates:?}, now {templates:?}; machines before {old_machines:?}, now {now:?}"
            ));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}
