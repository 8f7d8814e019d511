//! Seed 003's Cluster and its Runtime Extension once admitted (the second half of the runtime
//! extensions scenario): the extension's patches reach the topology, a stopped extension blocks
//! only the Clusters that call it, and a new one unblocks them.

use std::time::Duration;

use base64::Engine;
use serde_json::json;

use crate::controllers::{condition, CONVERGED as TOPOLOGY_CONVERGED};
use crate::env::Env;
use crate::manifests::{quickstart_object, render};
use crate::process::poll;
use crate::runtime_extensions::extension::Extension;
use crate::runtime_extensions::{expect, extension_config, wait_condition, CONFIG};

/// The containerd drop-in the test extension's GeneratePatches adds for `http-proxy`.
pub(crate) const PROXY_DROP_IN: &str = "/etc/systemd/system/containerd.service.d/http-proxy.conf";

/// Seed 003's Cluster (admitted by the runtime extensions scenario), its extension registered again, reaches the state the extension patches in:
/// its DockerCluster takes the discovered `lbImageRepository` default, its control plane the
/// proxy drop-in (which ValidateTopology then requires). With the extension stopped, a change to
/// that Cluster blocks only it, `TopologyReconciled` False naming the handler with a message that
/// does not change between retries, while a Cluster of a class without external patches keeps
/// being reconciled and the server keeps running; pointed at a new extension, it recovers.
pub(crate) fn patched_then_isolated(env: &mut Env, extension: Extension) -> Result<(), String> {
    let kubectl = &env.kubectl;
    // [`scenario`] ended by deleting the ExtensionConfig: register the extension again.
    let url = format!("https://{}", extension.addr);
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&extension.ca_pem);
    kubectl.accepts(&extension_config(CONFIG, &url, Some(&ca_bundle), None).to_string())?;
    let cluster = wait_condition(kubectl, "cluster", "TopologyReconciled", "proxy-dev", "True")?;
    let infrastructure = kubectl.get_json(
        "dockercluster",
        "default",
        cluster["spec"]["infrastructureRef"]["name"]
            .as_str()
            .unwrap_or_default(),
    )?;
    expect(
        infrastructure["spec"]["loadBalancer"]["imageRepository"] == "kindest",
        format!(
            "the extension's patch on the DockerCluster: {}",
            infrastructure["spec"]
        ),
    )?;
    let control_plane = kubectl.get_json(
        "kubeadmcontrolplane",
        "default",
        cluster["spec"]["controlPlaneRef"]["name"]
            .as_str()
            .unwrap_or_default(),
    )?;
    let files = &control_plane["spec"]["kubeadmConfigSpec"]["files"];
    expect(
        files.as_array().into_iter().flatten().any(|f| {
            f["path"] == PROXY_DROP_IN
                && f["content"] == "[Service]\nEnvironment=\"HTTP_PROXY=http://proxy.example2.com:1234\"\n"
        }),
        format!("the extension's proxy drop-in on the control plane: {files}"),
    )?;

    // A neighbour on a class without external patches.
    kubectl.accepts(&render(&[quickstart_object(
        "00-clusterclass.yaml",
        "ClusterClass",
    )]))?;
    crate::class_status::wait_reconciled(kubectl, "default", "quick-start")?;
    kubectl.accepts(&render(&[quickstart_object("10-cluster-dev.yaml", "Cluster")]))?;
    wait_condition(kubectl, "cluster", "TopologyReconciled", "dev", "True")?;

    // The extension goes away; proxy-dev's topology must change (a new image repository).
    drop(extension);
    let mut variables = cluster["spec"]["topology"]["variables"].clone();
    for value in variables.as_array_mut().into_iter().flatten() {
        if value["name"] == "lbImageRepository" {
            value["value"] = json!("registry.example.com");
        }
    }
    let change = json!({"spec": {"topology": {"variables": variables}}});
    kubectl.merge_patch(("cluster", "default", "proxy-dev"), &change, false)?;
    let blocked = condition(&wait_condition(
        kubectl,
        "cluster",
        "TopologyReconciled",
        "proxy-dev",
        "False",
    )?);
    let message = blocked["message"].as_str().unwrap_or_default().to_owned();
    expect(
        // Cluster API v1.14's reason for any failed reconcile; the message names the handler.
        blocked["reason"] == "ReconcileFailed" && message.contains(&format!("generate-patches.{CONFIG}")),
        format!("TopologyReconciled names the extension: {blocked}"),
    )?;

    // The neighbour scales while proxy-dev waits.
    kubectl.ok(&[
        "patch",
        "cluster",
        "dev",
        "-n",
        "default",
        "--type=json",
        "-p",
        r#"[{"op": "replace", "path": "/spec/topology/workers/machineDeployments/0/replicas", "value": 3}]"#,
    ])?;
    poll(
        "the neighbour's MachineDeployment to scale",
        TOPOLOGY_CONVERGED,
        || {
            let deployments = crate::controllers::owned_by(kubectl, "dev", "machinedeployment")?;
            deployments
                .iter()
                .any(|md| md["spec"]["replicas"] == 3)
                .then_some(())
                .ok_or_else(|| {
                    format!(
                        "replicas {:?}",
                        deployments
                            .iter()
                            .map(|md| &md["spec"]["replicas"])
                            .collect::<Vec<_>>()
                    )
                })
        },
    )?;
    let again = condition(&kubectl.get_json("cluster", "default", "proxy-dev")?);
    expect(
        again["message"] == blocked["message"]
            && again["lastTransitionTime"] == blocked["lastTransitionTime"],
        format!("the same condition between retries: {blocked} then {again}"),
    )?;
    env.server().ensure_running()?;

    // A new extension (another port and CA): proxy-dev is reconciled again.
    let extension = Extension::start();
    let kubectl = &env.kubectl;
    let url = format!("https://{}", extension.addr);
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&extension.ca_pem);
    kubectl.accepts(&extension_config(CONFIG, &url, Some(&ca_bundle), None).to_string())?;
    let recovered = poll(
        "proxy-dev to be patched by the new extension",
        Duration::from_secs(120),
        || {
            let cluster = kubectl.get_json("cluster", "default", "proxy-dev")?;
            let name = cluster["spec"]["infrastructureRef"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let infrastructure = kubectl.get_json("dockercluster", "default", &name)?;
            let repository = &infrastructure["spec"]["loadBalancer"]["imageRepository"];
            (repository == "registry.example.com" && condition(&cluster)["status"] == "True")
                .then_some(())
                .ok_or_else(|| {
                    format!(
                        "imageRepository {repository}, TopologyReconciled {}",
                        condition(&cluster)
                    )
                })
        },
    );
    drop(extension);
    recovered
}
