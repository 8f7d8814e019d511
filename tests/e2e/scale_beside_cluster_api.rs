//! Scale with the real stack (a benchmark, not part of `cargo test`): for each count of
//! `SCALE_BESIDE_CLUSTERS` (comma-separated, default `10`), a fresh management plane (etcd,
//! kube-apiserver writing an audit log of writes), Cluster API v1.14.0's managers (core, kubeadm
//! control plane and bootstrap, the Docker provider with its in-memory backend), capi-topology
//! as the topology, ClusterClass and ExtensionConfig controllers and the Cluster webhooks (as
//! the beside-cluster-api overlay installs it), v1.14.0's in-memory ClusterClass, and that many
//! Clusters of it (1 control plane Machine, 2 worker MachineDeployments of 1 replica) created
//! at once. Per count it measures:
//!
//! - the time until every Cluster is `TopologyReconciled=True` (our part) and `Available=True`
//!   (control plane available, MachineDeployments available, workload API server reachable:
//!   statuses written by Cluster API's controllers), from the first create,
//! - CPU seconds while provisioning and peak RSS of every process: capi-topology, the four
//!   Cluster API managers, kube-apiserver and etcd,
//! - each process's CPU share once everything is provisioned (a [`STEADY`] sample),
//! - the writes per Cluster of capi-topology and of Cluster API's managers (the audit log tells
//!   writers apart: capi-topology runs as a user of its own),
//! - a full resync with nothing changed (every Cluster annotated, so reconciled again): the time
//!   until capi-topology is idle again and its writes (must be 0).
//!
//! Cluster API's in-memory backend listens on fixed ports: one such stack per machine at a
//! time. One CSV row per count goes to `$SCALE_BESIDE_CSV` (default
//! `benches/scale/beside-cluster-api.csv`, rewritten by each run). A count that does not
//! provision within `$SCALE_BESIDE_TIMEOUT_SECS` (default 900) is recorded with how many
//! Clusters got there. Run:
//!
//! ```text
//! SCALE_BESIDE_CLUSTERS=10,25,50 flock /tmp/capd-inmemory.lock \
//!   cargo test --release --test e2e scale_beside -- --ignored --nocapture
//! ```

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::audit_log::{total, writes_since, Writes, WRITES_POLICY};
use crate::beside_cluster_api::{doctor, in_memory_manifests, our_configurations};
use crate::class_status;
use crate::cluster_api::ClusterApi;
use crate::control_plane::ControlPlane;
use crate::env::repo_path;
use crate::kubectl::Kubectl;
use crate::kubectl_watch::Watch;
use crate::proc_stats::{cpu_seconds, peak_rss_mib, pid_of, wait_idle};
use crate::process::{poll, run_bounded, RunDir};
use crate::scale::{create_all, load_average};
use crate::webhook::{read_pem, WebhookServer};

/// The processes measured, in the order of the CSV's columns: ours first.
const PROCESSES: [&str; 7] = [
    "capi-topology",
    "capi-manager",
    "kubeadm-control-plane-manager",
    "kubeadm-bootstrap-manager",
    "capd-manager",
    "kube-apiserver",
    "etcd",
];
/// Short CSV column names of [`PROCESSES`].
const COLUMNS: [&str; 7] = ["ours", "core", "kcp", "cabpk", "capd", "apiserver", "etcd"];
/// The CPU share of every process is sampled this long once everything is provisioned.
const STEADY: Duration = Duration::from_secs(30);
/// capi-topology counts as idle once it used less than `QUIET_CPU` over `QUIET_WINDOW`.
const QUIET_WINDOW: Duration = Duration::from_secs(3);
const QUIET_CPU: Duration = Duration::from_millis(60);
/// How long a resync may keep capi-topology busy before the figure is taken anyway.
const RESYNC_TIMEOUT: Duration = Duration::from_secs(180);
const RECONCILED: &str = ".status.conditions[?(@.type==\"TopologyReconciled\")].status";
const AVAILABLE: &str = ".status.conditions[?(@.type==\"Available\")].status";

/// The Cluster counts of `$SCALE_BESIDE_CLUSTERS` (default 10).
fn counts() -> Vec<usize> {
    let text = std::env::var("SCALE_BESIDE_CLUSTERS").unwrap_or_else(|_| "10".to_owned());
    text.split(',')
        .map(|n| {
            n.trim()
                .parse()
                .unwrap_or_else(|_| panic!("SCALE_BESIDE_CLUSTERS: {n:?} is not a count"))
        })
        .collect()
}

fn timeout() -> Duration {
    let secs = std::env::var("SCALE_BESIDE_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(900);
    Duration::from_secs(secs)
}

fn csv_path() -> PathBuf {
    std::env::var_os("SCALE_BESIDE_CSV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_path("benches/scale/beside-cluster-api.csv"))
}

fn csv_header() -> String {
    let per = |prefix: &str| COLUMNS.map(|c| format!("{prefix}_{c}")).join(",");
    format!(
        "clusters,machines,create_s,reconciled_s,available_s,available,{},{},{},\
writes_per_cluster_ours,writes_per_cluster_capi,resync_s,resync_writes_ours,resync_writes_capi,load_before",
        per("cpu_s"),
        per("steady_cpu_pct"),
        per("rss_mib"),
    )
}

/// `n` Clusters of the in-memory class, `m0000`.., each with 1 control plane Machine and two
/// worker MachineDeployments of 1 replica.
fn clusters(template: &str, n: usize) -> Vec<Value> {
    let base: Value = serde_yaml_ng::from_str(template).expect("the in-memory Cluster template");
    (0..n)
        .map(|i| {
            let mut cluster = base.clone();
            cluster["metadata"]["name"] = json!(format!("m{i:04}"));
            cluster["spec"]["topology"]["workers"]["machineDeployments"] = json!([
                {"class": "default-worker", "name": "md-0", "replicas": 1},
                {"class": "default-worker", "name": "md-1", "replicas": 1},
            ]);
            cluster
        })
        .collect()
}

/// One count's figures, as one CSV row.
#[derive(Default)]
struct Row {
    clusters: usize,
    machines: usize,
    create: f64,
    reconciled: Option<f64>,
    available: Option<f64>,
    available_count: usize,
    cpu: [f64; 7],
    steady: [f64; 7],
    rss: [f64; 7],
    writes_ours: f64,
    writes_capi: f64,
    resync: Option<(f64, u64, u64)>,
    load_before: String,
}

impl Row {
    fn csv(&self) -> String {
        let opt = |v: Option<f64>| v.map(|v| format!("{v:.1}")).unwrap_or_default();
        let join = |values: &[f64; 7], digits: usize| {
            values
                .iter()
                .map(|v| format!("{v:.digits$}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        format!(
            "{},{},{:.1},{},{},{},{},{},{},{:.2},{:.2},{},{},{},{}",
            self.clusters,
            self.machines,
            self.create,
            opt(self.reconciled),
            opt(self.available),
            self.available_count,
            join(&self.cpu, 1),
            join(&self.steady, 1),
            join(&self.rss, 0),
            self.writes_ours,
            self.writes_capi,
            opt(self.resync.map(|r| r.0)),
            self.resync.map(|r| r.1.to_string()).unwrap_or_default(),
            self.resync.map(|r| r.2.to_string()).unwrap_or_default(),
            self.load_before,
        )
    }
}

/// Writes of Cluster API's four managers.
fn capi_total(writes: &Writes) -> u64 {
    PROCESSES[1..5].iter().map(|m| total(writes, m)).sum()
}

/// capi-topology beside Cluster API's managers, installed as the overlay installs it, and
/// v1.14.0's in-memory ClusterClass reconciled: ready for Clusters.
fn start_stack(run: &RunDir, plane: &ControlPlane, kubectl: &Kubectl) -> (ClusterApi, WebhookServer) {
    let capi = ClusterApi::start(run, kubectl, plane.kubeconfig()).unwrap_or_else(|e| panic!("{e}"));
    let controllers = "--controllers=topology,cluster-class,extension-config,cluster-api-webhooks";
    let server = WebhookServer::start_with(run, &plane.kubeconfig_of("capi-topology"), &[controllers])
        .unwrap_or_else(|e| panic!("{e}"));
    let ca = read_pem(server.cert_dir(), "ca.crt").unwrap();
    let applied = kubectl
        .apply(&our_configurations(kubectl, server.port(), &ca), &[])
        .unwrap();
    assert!(applied.success, "{}", applied.stderr);
    poll("cluster-api doctor to pass", Duration::from_secs(60), || {
        doctor(plane.kubeconfig())
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", server.log_tail()));
    let (class, _) = in_memory_manifests();
    let out = kubectl.apply(&class, &[]).unwrap();
    assert!(out.success, "{}", out.stderr);
    class_status::wait_reconciled(kubectl, "default", "in-memory").unwrap_or_else(|e| panic!("{e}"));
    (capi, server)
}

#[allow(clippy::cast_precision_loss)]
fn measure(n: usize) -> Row {
    let mut row = Row {
        clusters: n,
        machines: 3 * n,
        load_before: load_average(),
        ..Row::default()
    };
    let run = RunDir::create(&format!("scale-beside-{n}"));
    let plane = ControlPlane::start_audited(&run, WRITES_POLICY);
    let kubectl = plane.kubectl();
    let audit = run.join("audit.log");
    let (capi, server) = start_stack(&run, &plane, &kubectl);
    let logs = || format!("{}\n--- capi-topology ---\n{}", capi.logs(), server.log_tail());
    let pids: Vec<u32> = PROCESSES
        .iter()
        .map(|name| pid_of(&run, name).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let cpu_now = || -> Vec<f64> { pids.iter().map(|pid| cpu_seconds(*pid).unwrap_or(0.0)).collect() };

    let (_, template) = in_memory_manifests();
    let objects = clusters(&template, n);
    let mut reconciled = Watch::start(&kubectl, "clusters", "default", RECONCILED).unwrap();
    let mut available = Watch::start(&kubectl, "clusters", "default", AVAILABLE).unwrap();
    let (_, mark) = writes_since(&audit, 0);
    let cpu_before = cpu_now();
    let start = Instant::now();
    create_all(&kubectl, &objects).unwrap_or_else(|e| panic!("{e}\n{}", logs()));
    row.create = start.elapsed().as_secs_f64();
    match reconciled.wait_for("True", n, timeout()) {
        Ok(at) => row.reconciled = Some((at - start).as_secs_f64()),
        Err(reached) => eprintln!("scale beside {n}: only {reached} of {n} TopologyReconciled"),
    }
    match available.wait_for("True", n, timeout().saturating_sub(start.elapsed())) {
        Ok(at) => {
            row.available = Some((at - start).as_secs_f64());
            row.available_count = n;
        }
        Err(reached) => {
            row.available_count = reached;
            eprintln!("scale beside {n}: only {reached} of {n} Available\n{}", logs());
        }
    }
    for (i, (after, before)) in cpu_now().iter().zip(&cpu_before).enumerate() {
        row.cpu[i] = after - before;
    }
    let quiet = wait_idle(pids[0], QUIET_WINDOW, QUIET_CPU, Duration::from_secs(60));
    println!(
        "scale beside {n}: capi-topology idle {:.1} s after the create",
        (quiet - start).as_secs_f64()
    );

    let (created, mark) = writes_since(&audit, mark);
    println!("scale beside {n}: writes while provisioning, by writer: {created:#?}");
    row.writes_ours = total(&created, "capi-topology") as f64 / n as f64;
    row.writes_capi = capi_total(&created) as f64 / n as f64;

    // Everything provisioned: what each process costs while nothing happens.
    let steady_before = cpu_now();
    std::thread::sleep(STEADY);
    for (i, (after, before)) in cpu_now().iter().zip(&steady_before).enumerate() {
        row.steady[i] = 100.0 * (after - before) / STEADY.as_secs_f64();
    }
    let (steady, mark) = writes_since(&audit, mark);
    println!("scale beside {n}: writes while steady, by writer: {steady:?}");

    if row.available.is_some() {
        // A full resync: every Cluster reconciled again while nothing its topology depends on
        // changed (Cluster API's controllers reconcile them too).
        let start = Instant::now();
        let annotate = kubectl.command(&["annotate", "clusters", "--all", "-n", "default", "resync=1"]);
        let out = run_bounded(annotate, None, timeout()).unwrap();
        assert!(out.success, "kubectl annotate: {}", out.stderr);
        let idle = wait_idle(pids[0], QUIET_WINDOW, QUIET_CPU, RESYNC_TIMEOUT);
        // Let the audit log catch up with the last requests.
        std::thread::sleep(Duration::from_secs(2));
        let (resync, _) = writes_since(&audit, mark);
        println!("scale beside {n}: writes during the resync, by writer: {resync:#?}");
        row.resync = Some((
            (idle.max(start) - start).as_secs_f64(),
            total(&resync, "capi-topology"),
            capi_total(&resync),
        ));
    }
    for (i, pid) in pids.iter().enumerate() {
        row.rss[i] = peak_rss_mib(*pid).unwrap_or(0.0);
    }
    println!("{}\n{}", csv_header(), row.csv());
    drop((reconciled, available, server, capi));
    row
}

#[test]
#[ignore = "benchmark, one Cluster API stack per machine: SCALE_BESIDE_CLUSTERS=10,25 flock /tmp/capd-inmemory.lock cargo test --release --test e2e scale_beside -- --ignored --nocapture"]
fn scale_beside_cluster_api() {
    let path = csv_path();
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).unwrap();
    }
    fs::write(&path, format!("{}\n", csv_header())).unwrap();
    for n in counts() {
        let row = measure(n);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        writeln!(file, "{}", row.csv()).unwrap();
    }
    println!("written {}", path.display());
}
