//! The Runtime Extension down for [`DOWN`] while a Cluster needs a new GeneratePatches answer
//! (#34), beside Cluster API v1.14.0's real managers with the in-memory backend: Cluster API's
//! in-memory class gets the test extension's external patch (a containerd proxy drop-in on the
//! control plane from the discovered `http-proxy` variable); the extension is killed (SIGKILL),
//! then the Cluster's `http-proxy` changes. While it is down the Cluster's TopologyReconciled
//! condition must name the failing handler, and nothing of the topology may change: no Machine
//! rolled, no spec of the control plane, MachineDeployment or Machines changed, no template
//! clone rotated or deleted. Started again on the same address, the new drop-in reaches the
//! control plane, which rolls its Machine once. The time to converge is printed. Slow: run with
//! `cargo test --test e2e extension_down_during_generate_patches -- --ignored --nocapture`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

use crate::audit_log::{total, writes_since};
use crate::beside_cluster_api::{condition, in_memory_manifests, PROVISIONED};
use crate::controllers::condition as topology_reconciled;
use crate::faults_checks::{audit_mark, clones, machine_writes, quiet_writes, QUIET};
use crate::faults_extension::DOWN;
use crate::faults_pause::moving_parts;
use crate::faults_stack::{provision_mem, Stack};
use crate::kubectl::Kubectl;
use crate::manifests::render;
use crate::process::poll;
use crate::runtime_extensions::extension::Extension;
use crate::runtime_extensions::{expect, extension_config, wait_condition, wait_discovered, CONFIG};
use crate::runtime_isolation::PROXY_DROP_IN;

/// The handler the class's external patch names.
fn handler() -> String {
    format!("generate-patches.{CONFIG}")
}

/// The `http-proxy` value of the Cluster, on `host`.
fn proxy(host: &str) -> Value {
    json!([{"name": "http-proxy", "value": {"host": host, "port": 3128}}])
}

/// The documents of `text` with `edit` applied to those of `kind`.
fn edited(text: &str, kind: &str, edit: impl Fn(&mut Value)) -> String {
    let objects: Vec<Value> = serde_yaml_ng::Deserializer::from_str(text)
        .map(|document| {
            let mut object: Value = serde::Deserialize::deserialize(document).expect("YAML");
            if object["kind"] == kind {
                edit(&mut object);
            }
            object
        })
        .collect();
    render(&objects)
}

/// Cluster API's in-memory class with the test extension's external patch, and its Cluster
/// with an `http-proxy` on `host`.
fn manifests(host: &str) -> (String, String) {
    let (class, cluster) = in_memory_manifests();
    let class = edited(&class, "ClusterClass", |class| {
        class["spec"]["patches"] = json!([{"name": "proxy", "external": {
            "generatePatchesExtension": handler(),
            "discoverVariablesExtension": format!("discover-variables.{CONFIG}"),
        }}]);
    });
    let cluster = edited(&cluster, "Cluster", |cluster| {
        cluster["spec"]["topology"]["variables"] = proxy(host);
    });
    (class, cluster)
}

/// Whether the KubeadmControlPlane of Cluster `mem` carries the drop-in for `host`.
fn drop_in_for(kubectl: &Kubectl, host: &str) -> Result<bool, String> {
    let selector = "cluster.x-k8s.io/cluster-name=mem";
    let text = kubectl.ok(&[
        "get",
        "kubeadmcontrolplanes",
        "-n",
        "default",
        "-l",
        selector,
        "-o",
        "json",
    ])?;
    let list: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let files = &list["items"][0]["spec"]["kubeadmConfigSpec"]["files"];
    Ok(files
        .as_array()
        .into_iter()
        .flatten()
        .any(|f| f["path"] == PROXY_DROP_IN && f["content"].as_str().is_some_and(|c| c.contains(host))))
}

/// The names of Cluster `mem`'s control plane Machines.
fn control_plane_machines(kubectl: &Kubectl) -> Result<BTreeSet<String>, String> {
    let selector = "cluster.x-k8s.io/cluster-name=mem,cluster.x-k8s.io/control-plane";
    let names = kubectl.ok(&["get", "machines", "-n", "default", "-l", selector, "-o", "name"])?;
    Ok(names
        .lines()
        .map(|l| l.trim_start_matches("machine.cluster.x-k8s.io/").to_owned())
        .collect())
}

#[test]
#[ignore = "slow: about 4 minutes"]
fn extension_down_during_generate_patches_changes_nothing_then_converges() {
    let mut stack = Stack::start("faults-extension-patches");
    let extension = Extension::start();
    let result = provision(&stack.kubectl, &extension).and_then(|()| scenario(&mut stack, &extension));
    if let Err(e) = result {
        panic!("{e}\n{}", stack.logs());
    }
}

/// The extension registered, the class with its external patch, and its Cluster Available with
/// the drop-in of its first proxy.
fn provision(kubectl: &Kubectl, extension: &Extension) -> Result<(), String> {
    let url = format!("https://{}", extension.addr);
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&extension.ca_pem);
    kubectl.accepts(&extension_config(CONFIG, &url, Some(&ca_bundle), None).to_string())?;
    wait_discovered(kubectl, CONFIG)?;
    let (class, cluster) = manifests("proxy-1.example.com");
    kubectl.accepts(&class)?;
    wait_condition(kubectl, "clusterclass", "VariablesReady", "in-memory", "True")?;
    provision_mem(kubectl, &[&cluster])?;
    poll("the first drop-in", PROVISIONED, || {
        drop_in_for(kubectl, "proxy-1.example.com")?
            .then_some(())
            .ok_or_else(|| "not yet".to_owned())
    })
}

fn scenario(stack: &mut Stack, extension: &Extension) -> Result<(), String> {
    let (kubectl, run) = (&stack.kubectl, &stack.run);
    let audit = run.join("audit.log");
    let (clones_before, mark) = (clones(kubectl, "mem")?, audit_mark(&audit));
    let (parts, machines_before) = (moving_parts(kubectl, "mem")?, control_plane_machines(kubectl)?);
    let down = Instant::now();
    extension.kill();
    let patch = json!({"spec": {"topology": {"variables": proxy("proxy-2.example.com")}}});
    kubectl.merge_patch(("cluster", "default", "mem"), &patch, false)?;
    let mut said: Option<(Duration, Value)> = None;
    while down.elapsed() < DOWN {
        std::thread::sleep(Duration::from_secs(1));
        let (now, clones_now) = (moving_parts(kubectl, "mem")?, clones(kubectl, "mem")?);
        expect(
            now == parts && clones_now == clones_before,
            format!("nothing changes while the extension is down: {parts} then {now}; clones {clones_before:?} then {clones_now:?}"),
        )?;
        let reconciled = topology_reconciled(&kubectl.get_json("cluster", "default", "mem")?);
        let names = reconciled["message"]
            .as_str()
            .is_some_and(|m| m.contains(&handler()));
        if said.is_none() && reconciled["status"] == "False" && names {
            said = Some((down.elapsed(), reconciled));
        }
    }
    let (said_after, said) =
        said.ok_or_else(|| format!("TopologyReconciled to name {} while it was down", handler()))?;
    let back = Instant::now();
    expect(
        extension.start_again(),
        "the extension started again on its address".to_owned(),
    )?;
    let patched = poll("the new drop-in on the control plane", PROVISIONED, || {
        drop_in_for(kubectl, "proxy-2.example.com")?
            .then(|| back.elapsed())
            .ok_or_else(|| "not yet".to_owned())
    })?;
    let rolled = poll("the control plane Machine rolled", PROVISIONED, || {
        let now = control_plane_machines(kubectl)?;
        let available = condition(kubectl, "cluster/mem", "Available") == "True";
        let reconciled = condition(kubectl, "cluster/mem", "TopologyReconciled") == "True";
        (now.len() == machines_before.len() && now.is_disjoint(&machines_before) && available && reconciled)
            .then(|| back.elapsed())
            .ok_or(format!(
                "{now:?}, Available {available}, TopologyReconciled {reconciled}"
            ))
    })?;
    stack.server.ensure_running()?;
    let (created, deleted) = machine_writes(&audit, mark);
    let (writes, _) = writes_since(&audit, mark);
    let ours = writes.get("capi-topology").cloned().unwrap_or_default();
    let clones_after = clones(kubectl, "mem")?;
    let quiet = quiet_writes(&audit);
    eprintln!(
        "faults: extension down {DOWN:?} while the Cluster needed a new patch: TopologyReconciled \
         said {} {} after {said_after:?}; nothing changed meanwhile; once back the new drop-in \
         reached the control plane after {patched:?}, its Machine rolled and the Cluster \
         converged after {rolled:?}; Machines created {created}, deleted {deleted:?}; our writes \
         {} ({ours:?}); our writes in {QUIET:?} once settled: {quiet:?}",
        said["reason"],
        said["message"],
        total(&writes, "capi-topology"),
    );
    expect(
        created == machines_before.len() && deleted == machines_before,
        format!("the control plane Machine rolled once: {created} created, deleted {deleted:?}"),
    )?;
    expect(
        clones_after == clones_before,
        format!("no template rotated, none leaked: {clones_before:?}, now {clones_after:?}"),
    )?;
    expect(quiet.is_empty(), format!("no writes once settled: {quiet:?}"))
}
