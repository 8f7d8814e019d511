//! capi-topology beside Cluster API v1.14.0's real managers, installed by the recipe
//! (`manifests/overlays/beside-cluster-api`, docs/beside-cluster-api.md): every status the
//! topology waits on is written by Cluster API's own controllers and the Docker provider's
//! in-memory backend, not by the test.

use std::process::Command;
use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use crate::beside_cluster_api_conversion as conversion;
use crate::beside_cluster_api_resource_set as resource_set;
use crate::beside_cluster_api_rotation as rotation;
use crate::beside_cluster_api_upgrade as upgrade;
use crate::cache::cluster_api;
use crate::cluster_api::{clusterctl_defaults, to_loopback, ClusterApi};
use crate::control_plane::ControlPlane;
use crate::env::repo_path;
use crate::kubectl::Kubectl;
use crate::manifests::render;
use crate::process::{poll, run_bounded, RunDir};
use crate::webhook::{capi_topology, read_pem, WebhookServer};

pub(crate) const PROVISIONED: Duration = Duration::from_secs(300);
/// Two control plane rolls and one of the workers.
const UPGRADED: Duration = Duration::from_secs(480);
/// The upgrade: two minors, the control plane through the middle one (the class lists it).
const FROM: &str = "v1.33.0";
const MIDDLE: &str = "v1.34.0";
const TO: &str = "v1.35.0";
/// The upgrade of Cluster `mem` (one control plane Machine, two workers).
pub(crate) const MEM_UPGRADE: upgrade::Upgrade = upgrade::Upgrade {
    cluster: "mem",
    versions: [FROM, MIDDLE, TO],
    machines: 3,
    timeout: UPGRADED,
};

/// Our webhook configurations as the overlay renders them, pointed at the local server.
pub fn our_configurations(kubectl: &Kubectl, port: u16, ca_pem: &str) -> String {
    let text = kubectl
        .ok(&[
            "kustomize",
            &repo_path("manifests/overlays/beside-cluster-api")
                .display()
                .to_string(),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let mut object: Value = serde::Deserialize::deserialize(document).expect("kustomize renders YAML");
        if !object["kind"]
            .as_str()
            .unwrap_or_default()
            .ends_with("WebhookConfiguration")
        {
            continue;
        }
        object["metadata"]["annotations"] = Value::Null;
        for webhook in object["webhooks"].as_array_mut().expect("webhooks") {
            to_loopback(&mut webhook["clientConfig"], port, &ca_bundle);
        }
        documents.push(serde_yaml_ng::to_string(&object).expect("YAML"));
    }
    documents.join("---\n")
}

/// Cluster API's in-memory ClusterClass and a Cluster of it (v1.14.0's own templates), with
/// clusterctl's variables filled in; the class lists the versions of the upgrade
/// (`spec.kubernetesVersions`), so that the plan steps through the middle one.
pub fn in_memory_manifests() -> (String, String) {
    let templates = cluster_api()
        .module("sigs.k8s.io/cluster-api/test")
        .join("infrastructure/docker/templates");
    let read =
        |file: &str| std::fs::read_to_string(templates.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let fill = |text: String| {
        let text = text
            .replace("${CLUSTER_NAME}", "mem")
            .replace("${NAMESPACE}", "default")
            .replace("${KUBERNETES_VERSION}", FROM)
            .replace("${CONTROL_PLANE_MACHINE_COUNT}", "1")
            .replace("${WORKER_MACHINE_COUNT}", "2");
        clusterctl_defaults(&text)
    };
    let class = fill(read("clusterclass-in-memory.yaml"));
    let objects: Vec<Value> = serde_yaml_ng::Deserializer::from_str(&class)
        .map(|document| {
            let mut object: Value = serde::Deserialize::deserialize(document).expect("the template is YAML");
            if object["kind"] == "ClusterClass" {
                object["spec"]["kubernetesVersions"] = serde_json::json!([FROM, MIDDLE, TO]);
            }
            object
        })
        .collect();
    (render(&objects), fill(read("cluster-template-in-memory.yaml")))
}

/// `serve` with `controllers` on the cluster of `plane`, registered as the admission webhooks of
/// our resources in place of Cluster API's.
pub fn serve_beside(run: &RunDir, plane: &ControlPlane, controllers: &str) -> WebhookServer {
    let server =
        WebhookServer::start_with(run, plane.kubeconfig(), &[controllers]).unwrap_or_else(|e| panic!("{e}"));
    let ca = read_pem(server.cert_dir(), "ca.crt").unwrap_or_else(|e| panic!("{e}"));
    let kubectl = plane.kubectl();
    let applied = kubectl
        .apply(&our_configurations(&kubectl, server.port(), &ca), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(applied.success, "{}", applied.stderr);
    server
}

/// `capi-topology cluster-api doctor` on the cluster of `kubeconfig`: its report when it
/// passes, its output when it does not.
pub fn doctor(kubeconfig: &std::path::Path) -> Result<String, String> {
    let mut command = Command::new(capi_topology());
    command
        .args(["cluster-api", "doctor", "--kubeconfig"])
        .arg(kubeconfig);
    let out = run_bounded(command, None, Duration::from_secs(30))?;
    if out.success {
        Ok(out.stdout)
    } else {
        Err(format!("{}{}", out.stdout, out.stderr))
    }
}

fn jsonpath(kubectl: &Kubectl, resource: &str, path: &str) -> String {
    kubectl
        .ok(&[
            "get",
            resource,
            "-n",
            "default",
            "-o",
            &format!("jsonpath={path}"),
        ])
        .unwrap_or_default()
}

pub(crate) fn condition(kubectl: &Kubectl, resource: &str, kind: &str) -> String {
    jsonpath(
        kubectl,
        resource,
        &format!("{{.status.conditions[?(@.type==\"{kind}\")].status}}"),
    )
}

/// The whole life of a Cluster with the real stack, in one test (the in-memory backend listens on
/// fixed ports: one such stack per machine at a time): provisioned; a ClusterResourceSet applied
/// to its simulated workload cluster; upgraded over two minors (the control plane through the
/// middle one, then the workers, rolled by the real KubeadmControlPlane and MachineDeployment
/// controllers, the lifecycle hooks called in order and two of them holding for a while,
/// [`upgrade::chained`]); its class's machine templates
/// swapped (templates rotated, every Machine replaced); Cluster API's conversion and ours
/// agreeing on it and on a ClusterClass and Cluster written as v1beta1; deleted with nothing
/// left; then Cluster API's webhooks given back as installed.
#[test]
fn beside_cluster_api_runs_a_cluster_through_its_life() {
    let run = RunDir::create("beside-cluster-api");
    let mut plane = ControlPlane::start(&run);
    plane.start_garbage_collector(&run);
    let kubectl = plane.kubectl();
    let capi = ClusterApi::start(&run, &kubectl, plane.kubeconfig()).unwrap_or_else(|e| panic!("{e}"));
    let controllers = "--controllers=topology,cluster-class,extension-config,cluster-api-webhooks";
    let mut server = serve_beside(&run, &plane, controllers);
    let logs =
        |server: &WebhookServer| format!("{}\n--- capi-topology ---\n{}", capi.logs(), server.log_tail());

    // The controller switches Cluster API's webhooks for our resources off; doctor agrees.
    let healthy = poll(
        "capi-topology cluster-api doctor to pass",
        Duration::from_secs(60),
        || doctor(plane.kubeconfig()),
    );
    let report = healthy.unwrap_or_else(|e| panic!("{e}\n{}", logs(&server)));
    assert!(
        report.contains("clusters are admitted by capi-topology alone"),
        "{report}"
    );

    // The test extension serves the lifecycle hooks to the Cluster from its creation on.
    let extension = upgrade::serve_hooks(&run, &kubectl).unwrap_or_else(|e| panic!("{e}\n{}", logs(&server)));
    let (class, cluster) = in_memory_manifests();
    for manifest in [&class, &cluster] {
        let out = kubectl.apply(manifest, &[]).unwrap();
        assert!(out.success, "{}\n{}", out.stderr, logs(&server));
    }
    resource_set::create(&kubectl, "mem").unwrap_or_else(|e| panic!("{e}"));
    poll("the Cluster to be Available", PROVISIONED, || {
        server.ensure_running()?;
        match condition(&kubectl, "cluster/mem", "Available").as_str() {
            "True" => Ok(()),
            other => Err(format!("Available={other}")),
        }
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", logs(&server)));

    // Cluster API's ClusterResourceSet controller applies to the simulated workload cluster.
    resource_set::applied(&run, &kubectl, "mem").unwrap_or_else(|e| panic!("{e}\n{}", logs(&server)));

    // Upgrade over two minors, the control plane through the middle one, then the workers; the
    // hooks in order, BeforeClusterUpgrade and BeforeWorkersUpgrade holding for a while.
    upgrade::chained(
        &kubectl,
        &extension,
        MEM_UPGRADE,
        || condition(&kubectl, "cluster/mem", "Available") == "True",
        &mut |_| Ok(()),
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", logs(&server)));

    // A class template change: templates rotated, every Machine replaced by the real controllers.
    rotation::swap_machine_templates(&kubectl, "mem", 3, PROVISIONED, || {
        condition(&kubectl, "cluster/mem", "Available") == "True"
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", logs(&server)));

    // Cluster API's conversion webhook and ours agree, on the live objects and on v1beta1 ones.
    conversion::agree(
        &run,
        &kubectl,
        &[("clusterclasses", "in-memory"), ("clusters", "mem")],
    )
    .unwrap_or_else(|e| panic!("{e}"));

    // Deletion tears everything down, Cluster API's objects and ours.
    kubectl
        .ok(&["delete", "cluster", "mem", "-n", "default", "--timeout=180s"])
        .unwrap_or_else(|e| panic!("{e}\n{}", logs(&server)));
    poll("every object of the Cluster gone", Duration::from_secs(120), || {
        let left = kubectl.ok(&["get", "kubeadmcontrolplanes,machinedeployments,machinesets,machines,devclusters,devmachines,kubeadmconfigs,machinehealthchecks", "-n", "default", "-o", "name"])?;
        if left.trim().is_empty() { Ok(()) } else { Err(left) }
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", logs(&server)));

    // Giving the fleet back (Cluster API's webhooks and topology controller on again) is the
    // take-over e2e's last step (`take_over.rs`): `give-back --apply` switches Deployments, which
    // this stack does not run.
    drop(server);
    eprintln!(
        "hooks of default/mem: {:?}",
        crate::lifecycle_hooks::hook_steps(&extension.calls(), "default/mem")
    );
    drop(capi);
}
