//! The switch between Cluster API's topology controller and capi-topology's, step by step as an
//! operator does it with kubectl: the admission webhooks for Clusters, ClusterClasses and
//! ExtensionConfigs (Cluster API's and ours, each switched by the always-false match condition
//! of `capi-topology cluster-api`), the core manager's Deployment (`--feature-gates`
//! `ClusterTopology`, as `clusterctl` sets it from `CLUSTER_TOPOLOGY`) and capi-topology's
//! controller Deployment (`--controllers`), each waited for until
//! rolled out with no old pod left. The order keeps two topology controllers from ever running
//! at once and Cluster writes always admitted.

use std::time::Duration;

use capi_topology::beside_cluster_api::{switch_ops, Switch};
use serde_json::{json, Value};

use crate::deployment_emulator::rolled_out;
use crate::kubectl::Kubectl;

/// How long a Deployment may take to roll out.
const ROLLOUT: Duration = Duration::from_secs(180);
/// How long the API server takes to use a changed webhook configuration (its informer).
const CONFIGURATION_EFFECTIVE: Duration = Duration::from_secs(3);

/// The core manager's Deployment, as `clusterctl init` names it.
pub const CORE: (&str, &str) = ("capi-system", "capi-controller-manager");
/// capi-topology's controller Deployment (manifests/base/deployment.yaml).
pub const OURS: (&str, &str) = ("capi-topology-system", "capi-topology-controller");
/// capi-topology's controllers when it owns the fleet, and when it stands by (`serve` needs one
/// controller; none of the topology ones).
pub const OWNING: &str = "--controllers=topology,cluster-class,extension-config";
pub const STANDBY: &str = "--controllers=extension-config";

/// Cluster API's topology controller off, capi-topology's on.
pub fn take_over(kubectl: &Kubectl) -> Result<(), String> {
    switch_webhooks(kubectl, "capi-topology", Switch::On)?;
    switch_webhooks(kubectl, "cluster-api", Switch::Off)?;
    std::thread::sleep(CONFIGURATION_EFFECTIVE);
    set_topology_gate(kubectl, false)?;
    set_our_controllers(kubectl, true)
}

/// capi-topology's topology controller off, Cluster API's on again.
pub fn give_back(kubectl: &Kubectl) -> Result<(), String> {
    set_our_controllers(kubectl, false)?;
    set_topology_gate(kubectl, true)?;
    switch_webhooks(kubectl, "cluster-api", Switch::On)?;
    std::thread::sleep(CONFIGURATION_EFFECTIVE);
    switch_webhooks(kubectl, "capi-topology", Switch::Off)
}

/// Switches the entries for Clusters, ClusterClasses and ExtensionConfigs of the webhook
/// configurations of `owner` (`cluster-api`: those labelled as its core provider's;
/// `capi-topology`: ours, by name).
fn switch_webhooks(kubectl: &Kubectl, owner: &str, switch: Switch) -> Result<(), String> {
    for kind in ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"] {
        let text = if owner == "cluster-api" {
            kubectl.ok(&[
                "get",
                kind,
                "-l",
                "cluster.x-k8s.io/provider=cluster-api",
                "-o",
                "json",
            ])?
        } else {
            format!(
                r#"{{"items":[{}]}}"#,
                kubectl.ok(&["get", kind, owner, "-o", "json"])?
            )
        };
        let list: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        for configuration in list["items"].as_array().into_iter().flatten() {
            let ops = switch_ops(configuration, switch);
            if ops.is_empty() {
                continue;
            }
            let name = configuration["metadata"]["name"].as_str().unwrap_or_default();
            kubectl.ok(&[
                "patch",
                kind,
                name,
                "--type=json",
                "-p",
                &Value::Array(ops).to_string(),
            ])?;
        }
    }
    Ok(())
}

/// Sets `ClusterTopology` in the core manager's `--feature-gates` and waits for the rollout.
fn set_topology_gate(kubectl: &Kubectl, on: bool) -> Result<(), String> {
    let (from, to) = if on { ("false", "true") } else { ("true", "false") };
    let ops = edit_args(kubectl, CORE, |arg| {
        arg.starts_with("--feature-gates=").then(|| {
            arg.replace(
                &format!("ClusterTopology={from}"),
                &format!("ClusterTopology={to}"),
            )
        })
    })?;
    patch(kubectl, CORE, ops)?;
    rolled_out(kubectl, CORE.0, CORE.1, ROLLOUT).map(drop)
}

/// Gives capi-topology's controller Deployment the controllers that own the fleet (`owning`),
/// or the standby ones; waits for the rollout.
fn set_our_controllers(kubectl: &Kubectl, owning: bool) -> Result<(), String> {
    let (from, to) = if owning {
        (STANDBY, OWNING)
    } else {
        (OWNING, STANDBY)
    };
    let ops = edit_args(kubectl, OURS, |arg| (arg == from).then(|| to.to_owned()))?;
    patch(kubectl, OURS, ops)?;
    rolled_out(kubectl, OURS.0, OURS.1, ROLLOUT).map(drop)
}

/// The JSON Patch that replaces each arg of Deployment `namespace/name`'s first container that
/// `edit` maps to a new value, each guarded by a test of the old value.
fn edit_args(
    kubectl: &Kubectl,
    (namespace, name): (&str, &str),
    edit: impl Fn(&str) -> Option<String>,
) -> Result<Vec<Value>, String> {
    let deployment = kubectl.get_json("deployment", namespace, name)?;
    let args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut ops = Vec::new();
    for (index, arg) in args.iter().enumerate() {
        let arg = arg.as_str().unwrap_or_default();
        if let Some(new) = edit(arg).filter(|new| new != arg) {
            let path = format!("/spec/template/spec/containers/0/args/{index}");
            ops.push(json!({"op": "test", "path": path, "value": arg}));
            ops.push(json!({"op": "replace", "path": path, "value": new}));
        }
    }
    if ops.is_empty() {
        return Err(format!(
            "nothing to change in the args of {namespace}/{name}: {args:?}"
        ));
    }
    Ok(ops)
}

/// Applies the JSON Patch `ops` to Deployment `namespace/name` (one new generation).
fn patch(kubectl: &Kubectl, (namespace, name): (&str, &str), ops: Vec<Value>) -> Result<(), String> {
    let ops = Value::Array(ops).to_string();
    kubectl.ok(&[
        "patch",
        "deployment",
        name,
        "-n",
        namespace,
        "--type=json",
        "-p",
        &ops,
    ])?;
    Ok(())
}
