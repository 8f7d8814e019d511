//! Taking a running fleet over from Cluster API v1.14.0's own topology controller, and giving it
//! back (#33). Cluster API's core manager runs with `ClusterTopology=true,RuntimeSDK=true` from a
//! Deployment, as `clusterctl init` installs it, and provisions Clusters of two classes (inline
//! Go-template patches; the test extension's GeneratePatches), one of them in the middle of a
//! chained upgrade with BeforeWorkersUpgrade holding. `capi-topology cluster-api take-over`
//! switches as an operator would: the webhooks, the core manager's Deployment
//! (`ClusterTopology=false`) and capi-topology's (`--controllers`), each rolled out by the
//! Deployment emulator (there is no kubelet here). Then: no Machine replaced, no template clone
//! rotated, our writes per Cluster from the audit log, the upgrade finished with each hook
//! called as one controller would, a class change rolled by us, and `give-back` with Cluster
//! API's controller resuming without replacing a Machine.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::audit_log::writes_per_group;
use crate::beside_cluster_api_rotation as rotation;
use crate::beside_cluster_api_upgrade::serve_hooks;
use crate::deployment_emulator::{rolled_out, Emulator};
use crate::kubectl::Kubectl;
use crate::lifecycle_hooks::{chained_upgrade_hooks, count, hook_steps, RETRY};
use crate::process::{http_get, poll, run_bounded};
use crate::runtime_extensions::expect;
use crate::runtime_extensions::extension::Extension;
use crate::take_over_fleet::{self as fleet, Snapshot, EXTERNAL, INLINE, PENDING_HOOKS};
use crate::take_over_stack::OWNING;
use crate::take_over_stack::{Stack, DEPLOYMENTS};
use crate::webhook::capi_topology;

const PROVISIONED: Duration = Duration::from_secs(300);
const UPGRADED: Duration = Duration::from_secs(300);
const FROM: &str = "v1.33.0";
const MIDDLE: &str = "v1.34.0";
const TO: &str = "v1.35.0";
/// The extension's message while BeforeWorkersUpgrade holds.
const DRAINING: &str = "waiting for a maintenance window";

/// The first container's args of Deployment `namespace/name`.
fn args_of(kubectl: &Kubectl, namespace: &str, name: &str) -> Result<String, String> {
    let deployment = kubectl.get_json("deployment", namespace, name)?;
    Ok(deployment["spec"]["template"]["spec"]["containers"][0]["args"].to_string())
}

/// Whether capi-topology's controller has called the extension's GeneratePatches (it
/// reconciled the Cluster of the external class).
fn generated_patches(metrics: u16) -> Result<(), String> {
    let (_, body) = http_get(metrics, "/metrics")?;
    let called = body.lines().any(|line| {
        line.starts_with("capi_topology_extension_calls")
            && line.contains("generate-patches")
            && line
                .rsplit(' ')
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
                > 0.0
    });
    called
        .then_some(())
        .ok_or_else(|| "no GeneratePatches call yet".to_owned())
}

fn holding(extension: &Extension) {
    extension.answer(&json!({"BeforeWorkersUpgrade": {"retryAfterSeconds": RETRY, "message": DRAINING}}));
}

/// Cluster API's own topology controller provisions both Clusters, then upgrades `inline` until
/// BeforeWorkersUpgrade holds it (control plane at [`TO`] through [`MIDDLE`]).
fn fleet_by_cluster_api(kubectl: &Kubectl, extension: &Extension) -> Result<(), String> {
    let (classes, clusters) = fleet::manifests([FROM, MIDDLE, TO]);
    let out = kubectl.apply(&crate::manifests::render(&classes), &[])?;
    (out.success).then_some(()).ok_or(out.stderr)?;
    // Cluster API's webhook refuses a Cluster until its class's variables are reconciled.
    poll("the Clusters admitted", Duration::from_secs(60), || {
        let out = kubectl.apply(&crate::manifests::render(&clusters), &[])?;
        out.success.then_some(()).ok_or(out.stderr)
    })?;
    for cluster in [INLINE, EXTERNAL] {
        poll(
            &format!("Cluster {cluster} Available"),
            PROVISIONED,
            || match fleet::versions(kubectl, cluster)? {
                (versions, true) if versions.len() == 2 => Ok(()),
                other => Err(format!("{other:?}")),
            },
        )?;
    }
    holding(extension);
    let patch = json!({"spec": {"topology": {"version": TO}}});
    kubectl.merge_patch(("cluster", "default", INLINE), &patch, false)?;
    let key = format!("default/{INLINE}");
    poll("BeforeWorkersUpgrade holding Cluster inline", UPGRADED, || {
        let calls = extension.calls();
        let snapshot = Snapshot::read(kubectl, INLINE)?;
        (count(&calls, "BeforeWorkersUpgrade", &key) >= 2)
            .then_some(())
            .ok_or_else(|| format!("{:?}; {snapshot:?}", hook_steps(&calls, &key)))
    })?;
    Ok(())
}

/// The take-over and give-back, end to end (one Cluster API stack per machine at a time: the
/// in-memory backend listens on fixed ports).
#[test]
fn takes_a_fleet_over_from_cluster_api_and_gives_it_back() {
    let started = Instant::now();
    let stack = Stack::start().unwrap_or_else(|e| panic!("{e}"));
    let fail = |e: String| -> ! { panic!("{e}\n{}", stack.logs()) };
    let extension = serve_hooks(&stack.run, &stack.kubectl).unwrap_or_else(|e| fail(e));
    fleet_by_cluster_api(&stack.kubectl, &extension).unwrap_or_else(|e| fail(e));
    let provisioned = started.elapsed();
    let ours = take_over(&stack, &extension).unwrap_or_else(|e| fail(e));
    let taken = started.elapsed();
    give_back(&stack, &ours).unwrap_or_else(|e| fail(e));
    eprintln!(
        "take-over: fleet provisioned by Cluster API and its upgrade held after {provisioned:?}, \
         taken over, upgraded and rolled by capi-topology after {taken:?}, given back after {:?}; \
         rollouts {:?}",
        started.elapsed(),
        stack.emulator.rollouts()
    );
}

/// Takes the fleet over; then nothing changed, the held upgrade finishes under capi-topology
/// (each hook called as one controller would), capi-topology's writes per Cluster (no object
/// created) and a class change rolled by it. Returns both Clusters as capi-topology left them.
fn take_over(stack: &Stack, extension: &Extension) -> Result<[Snapshot; 2], String> {
    let kubectl = &stack.kubectl;
    let before = snapshots(kubectl)?;
    let calls_before = extension.calls().len();
    let audit = stack.run.join("audit.log");
    let mark = std::fs::read_to_string(&audit)
        .unwrap_or_default()
        .lines()
        .count();

    // The dry run: the only Machines that would roll are the held upgrade's workers, a step
    // Cluster API's controller takes too once the hook lets go, so the switch is not refused.
    let report = command(stack, &["take-over"])?;
    let upgrading: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("  * ") && l.contains("Machines roll"))
        .collect();
    let upgrade_only = upgrading.len() == 1
        && upgrading[0].contains("MachineDeployment")
        && upgrading[0].contains(&format!("(version {FROM} -> {TO})"))
        && report.contains(&format!(", 1 upgrading (default/{INLINE}: "))
        && report.contains(", 0 rolling Machines");
    expect(
        upgrade_only && !report.contains("cannot plan"),
        format!("the dry run: only the upgrade's workers roll: {report}"),
    )?;
    command(stack, &["take-over", "--apply", "--timeout=3m"])?;
    let owner = command(stack, &["doctor"]).unwrap_or_else(|report| report);
    expect(
        owner.contains("capi-topology's topology controller owns the fleet"),
        format!("doctor names capi-topology: {owner}"),
    )?;
    switched(kubectl, &stack.emulator, "ClusterTopology=false", true)?;

    // Ours reconciles both Clusters (the hold goes on, GeneratePatches called), changing nothing.
    let key = format!("default/{INLINE}");
    poll(
        "capi-topology to reconcile both Clusters",
        Duration::from_secs(120),
        || {
            stack.emulator.check()?;
            let since = extension.calls()[calls_before..].to_vec();
            expect(
                count(&since, "BeforeWorkersUpgrade", &key) >= 2,
                "BeforeWorkersUpgrade called by capi-topology".to_owned(),
            )?;
            generated_patches(stack.controller_metrics)
        },
    )?;
    let now = snapshots(kubectl)?;
    expect(
        now == before,
        format!("both Clusters as Cluster API left them: {before:#?}, now {now:#?}"),
    )?;

    // The held upgrade finishes under capi-topology.
    extension.answer(&json!({}));
    finish_upgrade(kubectl, extension)?;
    let after = snapshots(kubectl)?;
    expect(
        after[1] == before[1],
        format!("the external Cluster untouched: {:#?}", after[1]),
    )?;
    expect(
        after[0].owned == before[0].owned,
        format!("no clone of {INLINE} rotated: {:?}", after[0].owned),
    )?;
    expect(
        after[0].control_plane_machines() == before[0].control_plane_machines(),
        format!(
            "the control plane Machine of {INLINE} kept: {:?}",
            after[0].machines
        ),
    )?;
    let writes = writes_per_group(&audit, mark, "capi-topology", &[INLINE, EXTERNAL]);
    eprintln!("take-over: capi-topology's writes per Cluster since the switch: {writes:#?}");
    for (group, keys) in &writes {
        let created: Vec<&String> = keys.keys().filter(|k| k.starts_with("create ")).collect();
        expect(
            created.is_empty(),
            format!("no object of {group} created by capi-topology: {created:?}"),
        )?;
    }

    // A class change rolled by capi-topology: templates rotated, both Machines replaced. The old
    // MachineSet carries Cluster API's topology finalizer (its topology controllers are off
    // now): capi-topology honours it, deletes the old clones and lets the MachineSet go.
    rotation::swap_machine_templates_then(
        kubectl,
        INLINE,
        2,
        PROVISIONED,
        || fleet::versions(kubectl, INLINE).is_ok_and(|(_, available)| available),
        true,
    )?;
    let deleting = wait_for_machine_sets_gone(kubectl, INLINE)?;
    expect(
        deleting.is_empty(),
        format!("the old MachineSets of {INLINE} gone after the rotation: {deleting:?}"),
    )?;
    snapshots(kubectl)
}

/// Waits (up to a minute) until no MachineSet of `cluster` is being deleted; those still are.
fn wait_for_machine_sets_gone(kubectl: &Kubectl, cluster: &str) -> Result<Vec<String>, String> {
    let started = std::time::Instant::now();
    loop {
        let text = kubectl.ok(&[
            "get",
            "machinesets.cluster.x-k8s.io",
            "-n",
            "default",
            "-l",
            &format!("cluster.x-k8s.io/cluster-name={cluster}"),
            "-o",
            "json",
        ])?;
        let list: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let deleting: Vec<String> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|ms| !ms["metadata"]["deletionTimestamp"].is_null())
            .map(|ms| format!("{} {}", ms["metadata"]["name"], ms["metadata"]["finalizers"]))
            .collect();
        if deleting.is_empty() || started.elapsed() > std::time::Duration::from_secs(60) {
            return Ok(deleting);
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// Gives the fleet back; Cluster API's controller resumes (it carries out a change on each
/// Cluster) and replaces no Machine, rotates no clone.
fn give_back(stack: &Stack, ours: &[Snapshot; 2]) -> Result<(), String> {
    let kubectl = &stack.kubectl;
    command(stack, &["give-back"])?;
    command(stack, &["give-back", "--apply", "--timeout=3m"])?;
    let owner = command(stack, &["doctor"]).unwrap_or_else(|report| report);
    expect(
        owner.contains("Cluster API's topology controller owns the fleet"),
        format!("doctor names Cluster API: {owner}"),
    )?;
    switched(kubectl, &stack.emulator, "ClusterTopology=true", false)?;
    for cluster in [INLINE, EXTERNAL] {
        resumed(kubectl, cluster)?;
    }
    let now = snapshots(kubectl)?;
    for ((cluster, ours), now) in [INLINE, EXTERNAL].iter().zip(ours).zip(&now) {
        expect(
            now.machines == ours.machines,
            format!(
                "no Machine of {cluster} replaced: {:?}, now {:?}",
                ours.machines, now.machines
            ),
        )?;
        // A clone left over may be cleaned up; none is made.
        let made: Vec<&String> = now.owned.iter().filter(|o| !ours.owned.contains(o)).collect();
        expect(
            made.is_empty(),
            format!("no clone of {cluster} rotated: {made:?} made"),
        )?;
    }
    stack.emulator.check()
}

/// `capi-topology cluster-api <args>` on the stack's API server, as the admin: its output, an
/// error with it when it fails.
fn command(stack: &Stack, args: &[&str]) -> Result<String, String> {
    let mut command = std::process::Command::new(capi_topology());
    command
        .arg("cluster-api")
        .args(args)
        .arg("--kubeconfig")
        .arg(stack.kubeconfig());
    let out = run_bounded(command, None, Duration::from_secs(600))?;
    let text = format!("{}{}", out.stdout, out.stderr);
    eprintln!("take-over: `cluster-api {}`:\n{text}", args.join(" "));
    if out.success {
        Ok(text)
    } else {
        Err(format!("`cluster-api {}` failed:\n{text}", args.join(" ")))
    }
}

/// Both Clusters now.
fn snapshots(kubectl: &Kubectl) -> Result<[Snapshot; 2], String> {
    Ok([
        Snapshot::read(kubectl, INLINE)?,
        Snapshot::read(kubectl, EXTERNAL)?,
    ])
}

/// Waits until the switch is rolled out: the core manager's gate `gate`, capi-topology's
/// controllers owning the fleet or not (`ours_own`), the one stopped before the other started.
fn switched(kubectl: &Kubectl, emulator: &Emulator, gate: &str, ours_own: bool) -> Result<(), String> {
    for (namespace, name) in DEPLOYMENTS {
        rolled_out(kubectl, namespace, name, Duration::from_secs(120))?;
    }
    emulator.check()?;
    let core = args_of(kubectl, "capi-system", "capi-controller-manager")?;
    let controller = args_of(kubectl, "capi-topology-system", "capi-topology-controller")?;
    if !core.contains(gate) || controller.contains(OWNING) != ours_own {
        return Err(format!(
            "after the switch: core manager {core}, capi-topology {controller}"
        ));
    }
    let rollouts = emulator.rollouts();
    let last = |name: &str| rollouts.iter().rposition(|r| r.deployment.ends_with(name));
    let (core_at, ours_at) = (
        last("/capi-controller-manager"),
        last("/capi-topology-controller"),
    );
    // Taking over, Cluster API's topology controller stops before ours starts; giving back, the
    // other way round.
    let in_order = if ours_own {
        core_at < ours_at
    } else {
        ours_at < core_at
    };
    if !in_order {
        return Err(format!(
            "two topology controllers may have run at once: {rollouts:?}"
        ));
    }
    Ok(())
}

/// Waits until the held upgrade of [`INLINE`] is done (every Machine at [`TO`], no pending
/// hook, AfterClusterUpgrade called, Available), then checks the hooks of its whole life, half
/// called by Cluster API's controller and half by ours, are those one controller calls, each
/// after-hook once.
fn finish_upgrade(kubectl: &Kubectl, extension: &Extension) -> Result<(), String> {
    let key = format!("default/{INLINE}");
    poll("the upgrade of Cluster inline done", UPGRADED, || {
        let (versions, available) = fleet::versions(kubectl, INLINE)?;
        let cluster = kubectl.get_json("cluster", "default", INLINE)?;
        let pending = &cluster["metadata"]["annotations"][PENDING_HOOKS];
        let after = count(&extension.calls(), "AfterClusterUpgrade", &key);
        let done = versions.len() == 2 && versions.iter().all(|v| v == TO) && available;
        (done && pending.is_null() && after == 1)
            .then_some(())
            .ok_or_else(|| format!("machines at {versions:?}, available {available}, pending {pending}, AfterClusterUpgrade called {after} times"))
    })?;
    let calls = extension.calls();
    let steps = hook_steps(&calls, &key);
    if steps != chained_upgrade_hooks(MIDDLE, TO) {
        return Err(format!("the hooks of Cluster inline, in order: {steps:?}"));
    }
    for (hook, times) in [
        ("AfterControlPlaneUpgrade", 2),
        ("AfterWorkersUpgrade", 1),
        ("AfterClusterUpgrade", 1),
    ] {
        let called = count(&calls, hook, &key);
        if called != times {
            return Err(format!("{hook} called {called} times, not {times}"));
        }
    }
    Ok(())
}

/// Proves Cluster API's topology controller reconciles `default/cluster` again: a control plane
/// annotation set in the Cluster's topology reaches the KubeadmControlPlane (in place).
fn resumed(kubectl: &Kubectl, cluster: &str) -> Result<(), String> {
    let annotation = "e2e.capi-topology.dev/given-back";
    let patch =
        json!({"spec": {"topology": {"controlPlane": {"metadata": {"annotations": {annotation: "yes"}}}}}});
    kubectl.merge_patch(("cluster", "default", cluster), &patch, false)?;
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster}");
    poll(
        &format!("Cluster API's controller to reconcile {cluster}"),
        Duration::from_secs(120),
        || {
            let out = kubectl.ok(&[
                "get",
                "kubeadmcontrolplanes",
                "-n",
                "default",
                "-l",
                &selector,
                "-o",
                "json",
            ])?;
            out.contains(annotation)
                .then_some(())
                .ok_or_else(|| "not on the KubeadmControlPlane yet".to_owned())
        },
    )
}
