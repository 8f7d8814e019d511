//! Leader loss in the middle of a chained upgrade (#34), beside Cluster API v1.14.0's real
//! managers with the in-memory backend: two replicas of `capi-topology serve` (controllers and
//! webhooks, one leader Lease). While BeforeClusterUpgrade holds, and again while
//! BeforeWorkersUpgrade holds (after AfterControlPlaneUpgrade), the leader is killed with SIGKILL
//! (no Lease release); the standby takes over once the Lease expires and finishes the upgrade,
//! and a fresh replica stands by. The webhooks are served by the standby (a Service would route
//! around the dead pod), so the fault is the leader's alone.
//!
//! Checked afterwards: no step skipped ([`upgrade::chained`] checks every snapshot), no Machine
//! rolled twice (Machine creations and deletions from the audit log), each hook's effect there
//! (duplicate calls counted and printed: hooks are at-least-once), no template clone or
//! MachineHealthCheck leaked, the Cluster's conditions back to True and our writes quiet once
//! settled. The times to converge are printed, not asserted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::audit_log::{total, writes_since, WRITES_POLICY};
use crate::beside_cluster_api::MEM_UPGRADE;
use crate::beside_cluster_api::{condition, doctor, in_memory_manifests, our_configurations};
use crate::beside_cluster_api_upgrade as upgrade;
use crate::cluster_api::ClusterApi;
use crate::control_plane::ControlPlane;
use crate::faults_checks::{audit_mark, clones, duplicate_after_hooks, machine_writes, quiet_writes, QUIET};
use crate::faults_extension::extension_down_while_held;
use crate::faults_pause::pause_while_held;
use crate::faults_stack::{provision_mem, CONTROLLERS};
use crate::kubectl::Kubectl;
use crate::lifecycle_hooks::count;
use crate::process::{poll, RunDir};
use crate::runtime_extensions::expect;
use crate::runtime_extensions::extension::Extension;
use crate::webhook::{read_pem, WebhookServer};

/// The controllers' leader Lease (in namespace `default`, `serve`'s default).
const LEASE: &str = "capi-topology-controllers";
/// Long enough for the Lease (15 s) to expire and the standby to retry.
const TAKE_OVER: Duration = Duration::from_secs(90);
/// The Cluster's Machines roll: one control plane Machine per step (two steps), two workers.
const MACHINES_CREATED: usize = 4;

/// One leader loss: which replica was killed, which took over, and how long each stage took
/// from the kill.
#[derive(Debug)]
pub struct TakeOver {
    /// The hook holding when the leader was killed.
    pub hook: String,
    pub killed: String,
    pub successor: String,
    /// When the leader was killed.
    pub at: Instant,
    /// Until the successor held the Lease.
    pub lease: Duration,
    /// Until the successor called the holding hook again (it carries on where the other stopped).
    pub resumed: Duration,
}

/// Replicas of `capi-topology serve`: the leader and a standby serving the webhooks.
pub struct Replicas {
    leader: (String, WebhookServer),
    standby: (String, WebhookServer),
    started: u8,
    run: PathBuf,
    kubeconfig: PathBuf,
    ca: String,
}

impl Replicas {
    /// Starts `replica-a`, waits until it leads, then `replica-b` as the standby, which serves
    /// our webhook configurations; `kubeconfig` is the replicas' user.
    pub fn start(run: &RunDir, kubeconfig: &Path, kubectl: &Kubectl) -> Result<Replicas, String> {
        let leader = spawn(run.path(), kubeconfig, "replica-a")?;
        poll("replica-a to lead", TAKE_OVER, || leading(kubectl, "replica-a"))?;
        let standby = spawn(run.path(), kubeconfig, "replica-b")?;
        let ca = read_pem(leader.cert_dir(), "ca.crt")?;
        let replicas = Replicas {
            leader: ("replica-a".to_owned(), leader),
            standby: ("replica-b".to_owned(), standby),
            started: 2,
            run: run.path().to_owned(),
            kubeconfig: kubeconfig.to_owned(),
            ca,
        };
        replicas.serve_webhooks_from_standby(kubectl)?;
        Ok(replicas)
    }

    fn serve_webhooks_from_standby(&self, kubectl: &Kubectl) -> Result<(), String> {
        let configurations = our_configurations(kubectl, self.standby.1.port(), &self.ca);
        let out = kubectl.apply(&configurations, &[])?;
        out.success.then_some(()).ok_or(out.stderr)
    }

    /// Kills the leader with SIGKILL while `hook` holds Cluster `default/cluster`; waits until the
    /// standby holds the Lease and has called `hook` again; starts a fresh standby and points
    /// the webhooks at it.
    pub fn kill_leader(
        &mut self,
        kubectl: &Kubectl,
        extension: &Extension,
        cluster: &str,
        hook: &str,
    ) -> Result<TakeOver, String> {
        let key = format!("default/{cluster}");
        let calls = |hook: &str| count(&extension.calls(), hook, &key);
        let before = calls(hook);
        let at = Instant::now();
        self.leader.1.kill();
        let successor = self.standby.0.clone();
        poll("the standby to take the Lease over", TAKE_OVER, || {
            leading(kubectl, &successor)
        })?;
        let lease = at.elapsed();
        poll(&format!("{successor} to call {hook}"), TAKE_OVER, || {
            (calls(hook) > before)
                .then_some(())
                .ok_or_else(|| format!("{before} calls before the kill"))
        })?;
        let resumed = at.elapsed();
        self.started += 1;
        let name = format!("replica-{}", char::from(b'a' + self.started - 1));
        let fresh = spawn(&self.run, &self.kubeconfig, &name)?;
        let killed = std::mem::replace(
            &mut self.leader,
            std::mem::replace(&mut self.standby, (name, fresh)),
        );
        self.serve_webhooks_from_standby(kubectl)?;
        let take_over = TakeOver {
            hook: hook.to_owned(),
            killed: killed.0,
            successor,
            at,
            lease,
            resumed,
        };
        Ok(take_over)
    }

    /// The ends of both replicas' logs.
    pub fn logs(&self) -> String {
        format!(
            "--- {} (leader) ---\n{}\n--- {} (standby) ---\n{}",
            self.leader.0,
            self.leader.1.log_tail(),
            self.standby.0,
            self.standby.1.log_tail()
        )
    }
}

/// Starts replica `name` (controllers and webhooks) as the user of `kubeconfig`.
fn spawn(run: &Path, kubeconfig: &Path, name: &str) -> Result<WebhookServer, String> {
    let identity = format!("--leader-election-identity={name}");
    WebhookServer::start_named(&RunDir::adopt(run), name, kubeconfig, &[CONTROLLERS, &identity])
}

/// `Ok` when `identity` holds the controllers' Lease.
pub fn leading(kubectl: &Kubectl, identity: &str) -> Result<(), String> {
    let holder = kubectl.ok(&[
        "get",
        "lease",
        LEASE,
        "-n",
        "default",
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ])?;
    (holder == identity)
        .then_some(())
        .ok_or(format!("held by {holder:?}"))
}

/// Two replicas; the leader killed while BeforeClusterUpgrade holds, then the new leader killed
/// while BeforeWorkersUpgrade holds; the third replica finishes the upgrade.
#[test]
fn leader_loss_during_a_chained_upgrade_loses_nothing() {
    upgrade_with_two_replicas(Fault::KillLeader);
}

/// The same upgrade with no replica killed: the writes and hook calls to compare with
/// (`cargo test --test e2e chained_upgrade_without_leader_loss -- --ignored --nocapture`).
#[test]
#[ignore = "a baseline for RELIABILITY.md, 4.5 minutes"]
fn chained_upgrade_without_leader_loss() {
    upgrade_with_two_replicas(Fault::None);
}

/// The same upgrade, the Cluster paused for a while once the control plane is upgraded
/// (`cargo test --test e2e upgrade_paused_then_unpaused -- --ignored --nocapture`).
#[test]
#[ignore = "slow: 4.5 minutes"]
fn upgrade_paused_then_unpaused() {
    upgrade_with_two_replicas(Fault::Pause);
}

/// The same upgrade, the Runtime Extension down for a minute while BeforeClusterUpgrade holds
/// (`cargo test --test e2e upgrade_with_the_extension_down_while_a_hook_holds -- --ignored --nocapture`).
#[test]
#[ignore = "slow: 5.5 minutes"]
fn upgrade_with_the_extension_down_while_a_hook_holds() {
    upgrade_with_two_replicas(Fault::ExtensionDown);
}

/// What goes wrong in the middle of the upgrade.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// The leader killed while each holding hook holds.
    KillLeader,
    /// The Cluster paused while BeforeWorkersUpgrade holds ([`pause_while_held`]).
    Pause,
    /// The extension down while BeforeClusterUpgrade holds ([`extension_down_while_held`]).
    ExtensionDown,
}

/// Runs the upgrade beside two replicas, with `fault`.
fn upgrade_with_two_replicas(fault: Fault) {
    let run = RunDir::create("faults-leader");
    let mut plane = ControlPlane::start_audited(&run, WRITES_POLICY);
    plane.start_garbage_collector(&run);
    let kubectl = plane.kubectl();
    let capi = ClusterApi::start(&run, &kubectl, plane.kubeconfig()).unwrap_or_else(|e| panic!("{e}"));
    let ours = plane.kubeconfig_of("capi-topology");
    let mut replicas =
        Replicas::start(&run, &ours, &kubectl).unwrap_or_else(|e| panic!("{e}\n{}", capi.logs()));
    let result = scenario(&run, &plane, &kubectl, &mut replicas, fault);
    if let Err(e) = result {
        panic!("{e}\n{}\n--- Cluster API ---\n{}", replicas.logs(), capi.logs());
    }
}

fn scenario(
    run: &RunDir,
    plane: &ControlPlane,
    kubectl: &Kubectl,
    replicas: &mut Replicas,
    kind: Fault,
) -> Result<(), String> {
    poll("cluster-api doctor to pass", Duration::from_secs(60), || {
        doctor(plane.kubeconfig())
    })?;
    let extension = upgrade::serve_hooks(run, kubectl)?;
    let (class, cluster) = in_memory_manifests();
    provision_mem(kubectl, &[&class, &cluster])?;
    let available = || condition(kubectl, "cluster/mem", "Available") == "True";
    let audit = run.join("audit.log");
    let (clones_before, mark) = (clones(kubectl, "mem")?, audit_mark(&audit));
    let mut faults = Vec::new();
    let mut since = Instant::now();
    let mut fault = |hook: &str| {
        match kind {
            Fault::KillLeader => {
                faults.push(replicas.kill_leader(kubectl, &extension, "mem", hook)?);
                since = Instant::now();
            }
            Fault::Pause if hook == "BeforeWorkersUpgrade" => {
                since = pause_while_held(kubectl, &extension, "mem", hook)?;
            }
            Fault::ExtensionDown if hook == "BeforeClusterUpgrade" => {
                since = extension_down_while_held(kubectl, &extension, "mem", hook)?;
            }
            _ => {}
        }
        Ok(())
    };
    upgrade::chained(kubectl, &extension, MEM_UPGRADE, available, &mut fault)?;
    let since = faults.last().map_or(since, |f| f.at);
    let last = since.elapsed();
    let lost = if kind == Fault::KillLeader { 2 } else { 0 };
    expect(faults.len() == lost, format!("{lost} leaders lost: {faults:?}"))?;
    poll("TopologyReconciled", Duration::from_secs(60), || {
        let now = condition(kubectl, "cluster/mem", "TopologyReconciled");
        (now == "True").then_some(()).ok_or(now)
    })?;
    let converged = since.elapsed();
    report(
        kubectl,
        &audit,
        mark,
        &extension,
        &clones_before,
        &faults,
        (last, converged),
    )
}

/// Checks the invariants after the faults and prints the figures.
fn report(
    kubectl: &Kubectl,
    audit: &Path,
    mark: usize,
    extension: &Extension,
    clones_before: &BTreeSet<String>,
    faults: &[TakeOver],
    (upgraded, converged): (Duration, Duration),
) -> Result<(), String> {
    let (created, deleted) = machine_writes(audit, mark);
    let (writes, _) = writes_since(audit, mark);
    let ours = writes.get("capi-topology").cloned().unwrap_or_default();
    let calls = extension.calls();
    let duplicates = duplicate_after_hooks(&calls, "default/mem");
    let mut per_hook: BTreeMap<&str, usize> = BTreeMap::new();
    for call in calls.iter().filter(|c| c.cluster == "default/mem") {
        *per_hook.entry(call.hook.as_str()).or_default() += 1;
    }
    let clones_after = clones(kubectl, "mem")?;
    let quiet = quiet_writes(audit);
    for fault in faults {
        eprintln!(
            "faults: leader {} killed while {} held: {} took the Lease over after {:?} and called \
             the hook again after {:?}",
            fault.killed, fault.hook, fault.successor, fault.lease, fault.resumed
        );
    }
    eprintln!(
        "faults: upgrade done {upgraded:?} after the last fault (the change, with none), TopologyReconciled \
         True after {converged:?}; \
         Machines created {created}, deleted {}; hook calls {per_hook:?}, duplicate after-hook \
         calls {duplicates:?}; \
         our writes during the upgrade {} ({ours:?}); our writes in {QUIET:?} once settled: {quiet:?}",
        deleted.len(),
        total(&writes, "capi-topology"),
    );
    expect(
        created == MACHINES_CREATED && deleted.len() == MACHINES_CREATED,
        format!("each Machine rolled once: {created} created, {deleted:?} deleted"),
    )?;
    expect(
        clones_after == *clones_before,
        format!("no clone or MachineHealthCheck leaked: {clones_before:?}, now {clones_after:?}"),
    )?;
    expect(quiet.is_empty(), format!("no writes once settled: {quiet:?}"))
}
