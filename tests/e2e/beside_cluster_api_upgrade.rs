//! A chained upgrade over two minors beside Cluster API's real managers (#24): the ClusterClass
//! lists the versions between, so the plan has two control plane steps; Cluster API's
//! KubeadmControlPlane controller rolls the control plane Machines at each step, then its
//! MachineDeployment controller rolls the workers once, to the target. The lifecycle hooks are
//! served by the test extension (Cluster API's Runtime SDK, tests/e2e/extension) and called by
//! capi-topology; two of them hold for a while, and nothing rolls before its hook lets it.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::controllers::condition;
use crate::kubectl::Kubectl;
use crate::lifecycle_hooks::{chained_upgrade_hooks, count, hook_steps, register, RETRY};
use crate::process::RunDir;
use crate::runtime_extensions::expect;
use crate::runtime_extensions::extension::{Extension, HookCall};

/// The extension's message while BeforeClusterUpgrade holds.
const PAUSING: &str = "pausing GitOps";
/// The extension's message while BeforeWorkersUpgrade holds.
const DRAINING: &str = "waiting for a maintenance window";
/// How many calls a holding hook gets before the test lets it go (the retry is [`RETRY`] s).
const HELD_CALLS: usize = 3;

/// The test extension serving the lifecycle hooks to the Clusters of namespace `default`,
/// discovered by capi-topology; its calls recorded in the run directory.
pub fn serve_hooks(run: &RunDir, kubectl: &Kubectl) -> Result<Extension, String> {
    let extension = Extension::with_lifecycle_hooks(&run.join("extension-control"));
    kubectl.ok(&["label", "namespace", "default", "lifecycle=on"])?;
    register(kubectl, &extension)?;
    Ok(extension)
}

/// What the test reads of the Cluster's objects at one moment.
#[derive(Debug)]
struct Snapshot {
    /// The KubeadmControlPlane's `spec.version` and `status.version`.
    control_plane: (String, String),
    /// The MachineDeployments' `spec.template.spec.version`.
    workers: Vec<String>,
    /// The versions of the control plane Machines and of the worker Machines.
    control_plane_machines: Vec<String>,
    worker_machines: Vec<String>,
}

impl Snapshot {
    fn read(kubectl: &Kubectl) -> Result<Snapshot, String> {
        let text = kubectl.ok(&[
            "get",
            "kubeadmcontrolplanes,machinedeployments,machines",
            "-n",
            "default",
            "-o",
            "json",
        ])?;
        let list: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let items = list["items"].as_array().cloned().unwrap_or_default();
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let of_kind = |kind: &'static str| items.iter().filter(move |o| o["kind"] == kind);
        let control_plane = of_kind("KubeadmControlPlane")
            .map(|cp| (text(&cp["spec"]["version"]), text(&cp["status"]["version"])))
            .next()
            .ok_or("no KubeadmControlPlane")?;
        let workers = of_kind("MachineDeployment")
            .map(|md| text(&md["spec"]["template"]["spec"]["version"]))
            .collect();
        let (mut control_plane_machines, mut worker_machines) = (Vec::new(), Vec::new());
        for machine in of_kind("Machine") {
            let labels = &machine["metadata"]["labels"];
            let version = text(&machine["spec"]["version"]);
            if labels.get("cluster.x-k8s.io/control-plane").is_some() {
                control_plane_machines.push(version);
            } else {
                worker_machines.push(version);
            }
        }
        Ok(Snapshot {
            control_plane,
            workers,
            control_plane_machines,
            worker_machines,
        })
    }

    fn all_at(versions: &[String], version: &str) -> bool {
        versions.iter().all(|v| v == version)
    }
}

/// The extension's answers with each of `hooks` holding (for [`RETRY`] s) with its message.
fn holding(hooks: &[(&str, &str)]) -> Value {
    hooks
        .iter()
        .map(|(hook, message)| {
            (
                (*hook).to_owned(),
                json!({"retryAfterSeconds": RETRY, "message": message}),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// Whether `hook` was called about `version` for `cluster`.
fn called(calls: &[HookCall], cluster: &str, hook: &str, version: &str) -> bool {
    calls
        .iter()
        .any(|c| c.cluster == cluster && c.hook == hook && (c.version == version || c.to == version))
}

/// Whether `hook` held Cluster `default/cluster` for [`HELD_CALLS`] calls; then the Cluster's
/// TopologyReconciled condition must name it with the extension's `message`.
fn held_long_enough(
    kubectl: &Kubectl,
    calls: &[HookCall],
    cluster: &str,
    hook: &str,
    message: &str,
) -> Result<bool, String> {
    if count(calls, hook, &format!("default/{cluster}")) < HELD_CALLS {
        return Ok(false);
    }
    let condition = condition(&kubectl.get_json("cluster", "default", cluster)?);
    let named = condition["message"]
        .as_str()
        .is_some_and(|m| m.contains(&format!("{hook}: {message}")));
    expect(
        condition["reason"] == "ClusterUpgrading" && named,
        format!("the condition to name the holding hook: {condition}"),
    )?;
    Ok(true)
}

/// What nothing may do before its hook let it, checked on one snapshot. `calls` are read after
/// the snapshot: a call that let a change through is recorded before the change is made.
fn check_order(
    now: &Snapshot,
    calls: &[HookCall],
    cluster: &str,
    [from, to]: [&str; 2],
    released: (bool, bool),
) -> Result<(), String> {
    let (cp_spec, cp_status) = &now.control_plane;
    expect(
        cp_spec == from || (released.0 && called(calls, cluster, "BeforeControlPlaneUpgrade", cp_spec)),
        format!("the control plane asked for {cp_spec} only once BeforeControlPlaneUpgrade let it: {now:?}"),
    )?;
    for version in &now.control_plane_machines {
        expect(
            version == from || called(calls, cluster, "BeforeControlPlaneUpgrade", version),
            format!(
                "control plane Machines at {version} only once BeforeControlPlaneUpgrade let it: {now:?}"
            ),
        )?;
    }
    let workers_moved = now.workers.iter().chain(&now.worker_machines).any(|v| v != from);
    expect(
        !workers_moved || (released.1 && cp_status == to),
        format!("the workers to move only once the control plane reached {to} and BeforeWorkersUpgrade let them: {now:?}"),
    )
}

/// The upgrade [`chained`] follows: Cluster `default/<cluster>` from `versions[0]` to
/// `versions[2]`, done once its `machines` Machines run the target, within `timeout`.
#[derive(Debug, Clone, Copy)]
pub struct Upgrade {
    pub cluster: &'static str,
    pub versions: [&'static str; 3],
    pub machines: usize,
    pub timeout: Duration,
}

/// Changes Cluster `default/cluster` from `versions[0]` to `versions[2]` (the class lists
/// `versions[1]` between) and follows the real controllers until every Machine runs the target
/// and `available` says the Cluster is Available again. BeforeClusterUpgrade holds first (the
/// control plane keeps its version), then BeforeWorkersUpgrade (the workers keep theirs while the
/// control plane is upgraded); each is let go after [`HELD_CALLS`] calls. Every snapshot is
/// checked ([`check_order`]); at the end the hooks were called in order, each step once, and the
/// control plane was asked for each version in turn. `fault` is called with each holding hook's
/// name just before the test lets it go (a fault injected while the hook holds).
pub fn chained(
    kubectl: &Kubectl,
    extension: &Extension,
    upgrade: Upgrade,
    available: impl Fn() -> bool,
    fault: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let Upgrade {
        cluster,
        versions,
        machines,
        timeout,
    } = upgrade;
    let [from, middle, to] = versions;
    let key = format!("default/{cluster}");
    extension.answer(&holding(&[
        ("BeforeClusterUpgrade", PAUSING),
        ("BeforeWorkersUpgrade", DRAINING),
    ]));
    let patch = json!({"spec": {"topology": {"version": to}}});
    kubectl.merge_patch(("cluster", "default", cluster), &patch, false)?;
    let started = Instant::now();
    let mut released = (false, false);
    let mut asked: Vec<String> = Vec::new();
    loop {
        let now = Snapshot::read(kubectl)?;
        let calls = extension.calls();
        check_order(&now, &calls, &key, [from, to], released)?;
        if asked.last() != Some(&now.control_plane.0) {
            asked.push(now.control_plane.0.clone());
        }
        if !released.0 && held_long_enough(kubectl, &calls, cluster, "BeforeClusterUpgrade", PAUSING)? {
            fault("BeforeClusterUpgrade")?;
            released.0 = true;
            eprintln!(
                "upgrade: BeforeClusterUpgrade let go after {:?}",
                started.elapsed()
            );
            extension.answer(&holding(&[("BeforeWorkersUpgrade", DRAINING)]));
        }
        if !released.1 && held_long_enough(kubectl, &calls, cluster, "BeforeWorkersUpgrade", DRAINING)? {
            expect(
                now.control_plane == (to.to_owned(), to.to_owned())
                    && Snapshot::all_at(&now.control_plane_machines, to),
                format!("the control plane is at {to} when the workers' hook is called: {now:?}"),
            )?;
            fault("BeforeWorkersUpgrade")?;
            released.1 = true;
            eprintln!(
                "upgrade: control plane at {to}, BeforeWorkersUpgrade let go after {:?}",
                started.elapsed()
            );
            extension.answer(&json!({}));
        }
        let every = now
            .control_plane_machines
            .iter()
            .chain(&now.worker_machines)
            .cloned()
            .collect::<Vec<_>>();
        let pending = kubectl.get_json("cluster", "default", cluster)?["metadata"]["annotations"]
            ["runtime.cluster.x-k8s.io/pending-hooks"]
            .clone();
        if released.1
            && every.len() == machines
            && Snapshot::all_at(&every, to)
            && pending.is_null()
            && count(&calls, "AfterClusterUpgrade", &key) == 1
            && available()
        {
            break;
        }
        expect(
            started.elapsed() < timeout,
            format!("the upgrade done within {timeout:?}: {now:?}, pending-hooks {pending}, released {released:?}"),
        )?;
        std::thread::sleep(Duration::from_secs(1));
    }
    eprintln!("upgrade: done after {:?}", started.elapsed());
    expect(
        asked == [from, middle, to],
        format!("the control plane asked for each version in turn: {asked:?}"),
    )?;
    let order = hook_steps(&extension.calls(), &key);
    expect(
        order == chained_upgrade_hooks(middle, to),
        format!("the hooks in order: {order:?}"),
    )
}

/// The order checks refuse what a wrong controller would do (they are what the real stack is
/// held to, so they must be able to fail).
#[test]
fn upgrade_order_checks_refuse_early_rolls() {
    let snapshot =
        |cp: (&str, &str), workers: &str, cp_machines: &[&str], worker_machines: &[&str]| Snapshot {
            control_plane: (cp.0.to_owned(), cp.1.to_owned()),
            workers: vec![workers.to_owned()],
            control_plane_machines: cp_machines.iter().map(|v| (*v).to_owned()).collect(),
            worker_machines: worker_machines.iter().map(|v| (*v).to_owned()).collect(),
        };
    let call = |hook: &str, version: &str| HookCall {
        hook: hook.to_owned(),
        id: String::new(),
        cluster: "default/mem".to_owned(),
        from: String::new(),
        to: String::new(),
        version: version.to_owned(),
    };
    let versions = ["v1.33.0", "v1.35.0"];
    let check = |now: &Snapshot, calls: &[HookCall], released| {
        check_order(now, calls, "default/mem", versions, released).is_ok()
    };
    let start = snapshot(("v1.33.0", "v1.33.0"), "v1.33.0", &["v1.33.0"], &["v1.33.0"]);
    assert!(check(&start, &[], (false, false)));
    // The control plane asked for the middle step: only once released and its hook called.
    let middle = snapshot(
        ("v1.34.0", "v1.33.0"),
        "v1.33.0",
        &["v1.33.0", "v1.34.0"],
        &["v1.33.0"],
    );
    let before_middle = [call("BeforeControlPlaneUpgrade", "v1.34.0")];
    assert!(!check(&middle, &[], (true, false)));
    assert!(!check(&middle, &before_middle, (false, false)));
    assert!(check(&middle, &before_middle, (true, false)));
    // A worker Machine at the target: only once the control plane is there and the hook let go.
    let calls = [
        call("BeforeControlPlaneUpgrade", "v1.34.0"),
        call("BeforeControlPlaneUpgrade", "v1.35.0"),
    ];
    let early = snapshot(("v1.35.0", "v1.34.0"), "v1.33.0", &["v1.35.0"], &["v1.35.0"]);
    assert!(!check(&early, &calls, (true, true)));
    let held = snapshot(("v1.35.0", "v1.35.0"), "v1.33.0", &["v1.35.0"], &["v1.35.0"]);
    assert!(!check(&held, &calls, (true, false)));
    assert!(check(&held, &calls, (true, true)));
}
