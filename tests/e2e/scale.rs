//! Scale run (a benchmark, not part of `cargo test`): for each count of `SCALE_CLUSTERS`
//! (comma-separated, default `300`), a fresh e2e environment (etcd, kube-apiserver,
//! `capi-topology serve` as webhooks and controllers), the quickstart class, and that many
//! Clusters with 3 worker pools each, created at once. Per count it measures:
//!
//! - the time until every Cluster is `TopologyReconciled=True` (from the first create; seen
//!   through a `kubectl get --watch`, so nothing lists every Cluster again and again),
//! - the topology's API writes per Cluster (`apiserver_request_total`),
//! - the CPU seconds of capi-topology, kube-apiserver and etcd while converging (`/proc/<pid>/stat`),
//! - peak RSS (`VmHWM`) of capi-topology (webhooks and controllers are one process), the API
//!   server and etcd,
//! - a full resync with nothing changed (every Cluster annotated, so reconciled again): the time
//!   until capi-topology is idle again, and its writes (must be 0),
//! - a ClusterClass change (a control plane label) until every control plane carries it, and
//!   its writes.
//!
//! One CSV row per count goes to `$SCALE_CSV` (default `benches/scale/results.csv`, rewritten
//! by each run, a row appended as each count finishes); `benches/scale/plot.py` draws it.
//! A count that does not converge within `$SCALE_TIMEOUT_SECS` (default 900) is recorded with
//! how many Clusters got there, and the run goes on with the next count. Run:
//!
//! ```text
//! SCALE_CLUSTERS=100,300,1000,2000 cargo test --release --test e2e scale_clusters -- --ignored --nocapture
//! ```
//!
//! `SCALE_SHARDS=2` splits the fleet between two instances by watch filter
//! ([`crate::scale_shards`]); the second instance's CPU and peak RSS fill the last two columns.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::class_status;
use crate::env::{repo_path, Env};
use crate::kubectl::Kubectl;
use crate::kubectl_watch::Watch;
use crate::manifests::{quickstart_object, render};
use crate::proc_stats::{cpu_seconds, peak_rss_mib, pid_of, wait_idle};
use crate::process::{http_get, run_bounded};
use crate::scale_shards::{self, shards};

/// Clusters per `kubectl create` and how many of those run at once.
const CHUNK: usize = 50;
const PARALLEL_CREATES: usize = 4;
/// How long after its last change a watch may stay silent while a ClusterClass change rolls out.
const ROLLOUT_TIMEOUT: Duration = Duration::from_secs(600);
/// capi-topology counts as idle once it used less than `QUIET_CPU` over `QUIET_WINDOW`.
const QUIET_WINDOW: Duration = Duration::from_secs(3);
const QUIET_CPU: Duration = Duration::from_millis(60);
const CSV_HEADER: &str = "clusters,create_s,converge_s,reconciled,writes_per_cluster,\
controller_cpu_s,apiserver_cpu_s,etcd_cpu_s,controller_rss_mib,apiserver_rss_mib,etcd_rss_mib,\
resync_s,resync_writes,class_change_s,class_change_writes_per_cluster,load_before,\
shard_1_cpu_s,shard_1_rss_mib";

/// Mutating requests the API server has answered, by `verb resource[/subresource]`, from its
/// `apiserver_request_total` metric.
fn writes(kubectl: &Kubectl) -> BTreeMap<String, u64> {
    requests(kubectl, &["POST", "PUT", "PATCH", "DELETE", "APPLY"])
}

/// Requests of `verbs` (every verb when empty) the API server has answered, by
/// `verb resource[/subresource]`, from its `apiserver_request_total` metric.
pub fn requests(kubectl: &Kubectl, verbs: &[&str]) -> BTreeMap<String, u64> {
    requests_answered(kubectl, verbs, None)
}

/// Mutating requests refused with 409 Conflict (a write based on an older copy), by
/// `verb resource[/subresource]`: they are in [`writes`] too, and cost the API server nearly
/// as much.
fn conflicts(kubectl: &Kubectl) -> BTreeMap<String, u64> {
    requests_answered(kubectl, &["POST", "PUT", "PATCH", "DELETE", "APPLY"], Some("409"))
}

/// [`requests`], only those answered with the status `code` when one is given.
fn requests_answered(kubectl: &Kubectl, verbs: &[&str], code: Option<&str>) -> BTreeMap<String, u64> {
    let text = kubectl
        .ok(&["get", "--raw", "/metrics"])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut counts = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("apiserver_request_total{")) {
        let label = |name: &str| {
            line.split(&format!("{name}=\""))
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_default()
                .to_owned()
        };
        let verb = label("verb");
        if !verbs.is_empty() && !verbs.contains(&verb.as_str()) {
            continue;
        }
        if code.is_some_and(|code| label("code") != code) {
            continue;
        }
        let mut resource = label("resource");
        let subresource = label("subresource");
        if !subresource.is_empty() {
            resource = format!("{resource}/{subresource}");
        }
        let count: f64 = line
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0);
        // Counts are integers the metric prints as floats.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let count = count as u64;
        *counts.entry(format!("{verb} {resource}")).or_default() += count;
    }
    counts
}

/// The reconciles each controller of the (first) instance ran, per Cluster, from its
/// `capi_topology_reconciles_total` counters.
fn reconciles_per_cluster(metrics_port: u16, n: usize) -> String {
    let Ok((_, metrics)) = http_get(metrics_port, "/metrics") else {
        return "metrics unreadable".to_owned();
    };
    metrics
        .lines()
        .filter_map(|line| line.strip_prefix("capi_topology_reconciles_total{controller=\""))
        .filter_map(|rest| rest.split_once("\"} "))
        .map(|(controller, count)| {
            let count: f64 = count.trim().parse().unwrap_or(0.0);
            format!("{controller} {:.2}", count / n as f64)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `after - before`, without the writes that are not the topology's: leader Lease renewals,
/// events, the test's own Cluster creations and annotations and ClusterClass change, and the
/// API server's own endpoint upkeep.
fn topology_writes(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter(|(key, _)| {
            !key.contains("leases")
                && !key.contains("events")
                && !key.ends_with(" endpoints")
                && *key != "POST clusters"
                && *key != "PATCH clusters"
                && *key != "PATCH clusterclasses"
        })
        .filter_map(|(key, count)| {
            let delta = count - before.get(key).copied().unwrap_or(0);
            (delta > 0).then(|| (key.clone(), delta))
        })
        .collect()
}

fn sum(writes: &BTreeMap<String, u64>) -> u64 {
    writes.values().sum()
}

/// The Cluster counts of `$SCALE_CLUSTERS` (default 300).
fn counts() -> Vec<usize> {
    let text = std::env::var("SCALE_CLUSTERS").unwrap_or_else(|_| "300".to_owned());
    text.split(',')
        .map(|n| {
            n.trim()
                .parse()
                .unwrap_or_else(|_| panic!("SCALE_CLUSTERS: {n:?} is not a count"))
        })
        .collect()
}

fn converge_timeout() -> Duration {
    let secs = std::env::var("SCALE_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(900);
    Duration::from_secs(secs)
}

fn csv_path() -> PathBuf {
    std::env::var_os("SCALE_CSV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_path("benches/scale/results.csv"))
}

/// The 1-minute load average (the machine may be shared).
pub fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_default()
}

/// `n` Clusters of the quickstart class, `c0000`.., each with 3 worker pools.
fn clusters(n: usize) -> Vec<Value> {
    let base = quickstart_object("10-cluster-dev.yaml", "Cluster");
    (0..n)
        .map(|i| {
            let mut cluster = base.clone();
            cluster["metadata"]["name"] = json!(format!("c{i:04}"));
            cluster["spec"]["topology"]["workers"]["machineDeployments"] = json!([
                {"class": "default-worker", "name": "md-0", "replicas": 1},
                {"class": "default-worker", "name": "md-1", "replicas": 2},
                {"class": "large-worker", "name": "md-2", "replicas": 1},
            ]);
            cluster
        })
        .collect()
}

/// Creates `objects` with `kubectl create`, [`CHUNK`] per call, [`PARALLEL_CREATES`] calls at once.
pub fn create_all(kubectl: &Kubectl, objects: &[Value]) -> Result<(), String> {
    let chunks: Vec<&[Value]> = objects.chunks(CHUNK).collect();
    for wave in chunks.chunks(PARALLEL_CREATES) {
        let results: Vec<Result<(), String>> = thread::scope(|scope| {
            let running: Vec<_> = wave
                .iter()
                .map(|chunk| {
                    scope.spawn(move || {
                        let out = kubectl.run(&["create", "-f", "-"], Some(&render(chunk)))?;
                        if out.success {
                            Ok(())
                        } else {
                            Err(format!("kubectl create was refused: {}", out.stderr))
                        }
                    })
                })
                .collect();
            running
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|_| Err("creator panicked".to_owned())))
                .collect()
        });
        results.into_iter().collect::<Result<Vec<()>, String>>()?;
    }
    Ok(())
}

/// One count's figures, as one CSV row.
#[derive(Default)]
struct Row {
    clusters: usize,
    create: f64,
    converge: Option<f64>,
    reconciled: usize,
    writes_per_cluster: f64,
    cpu: [f64; 3],
    rss: [f64; 3],
    resync: Option<(f64, u64)>,
    class_change: Option<(f64, f64)>,
    load_before: String,
    /// The second instance's CPU seconds and peak RSS, when sharded.
    second: Option<(f64, f64)>,
}

impl Row {
    fn csv(&self) -> String {
        let opt = |v: Option<f64>| v.map(|v| format!("{v:.1}")).unwrap_or_default();
        format!(
            "{},{:.1},{},{},{:.2},{:.1},{:.1},{:.1},{:.0},{:.0},{:.0},{},{},{},{},{},{},{}",
            self.clusters,
            self.create,
            opt(self.converge),
            self.reconciled,
            self.writes_per_cluster,
            self.cpu[0],
            self.cpu[1],
            self.cpu[2],
            self.rss[0],
            self.rss[1],
            self.rss[2],
            opt(self.resync.map(|r| r.0)),
            self.resync.map(|r| r.1.to_string()).unwrap_or_default(),
            opt(self.class_change.map(|c| c.0)),
            self.class_change
                .map(|c| format!("{:.2}", c.1))
                .unwrap_or_default(),
            self.load_before,
            opt(self.second.map(|s| s.0)),
            self.second.map(|s| format!("{:.0}", s.1)).unwrap_or_default(),
        )
    }
}

/// The processes measured, in the order of [`Row::cpu`] and [`Row::rss`].
const PROCESSES: [&str; 3] = ["capi-topology", "kube-apiserver", "etcd"];

#[allow(clippy::cast_precision_loss)]
fn measure(n: usize) -> Row {
    let mut row = Row {
        clusters: n,
        load_before: load_average(),
        ..Row::default()
    };
    let label = format!("scale-{n}");
    let sharded = shards() == 2;
    let mut env = if sharded {
        Env::with_webhooks_and(&label, &scale_shards::FIRST)
    } else {
        Env::with_webhooks(&label)
    };
    let metrics_port = env.server().metrics_port();
    let second = sharded.then(|| scale_shards::start_second(&env, &label));
    let kubectl = &env.kubectl;
    let mut pids: Vec<u32> = PROCESSES
        .iter()
        .map(|name| pid_of(&env.run, name).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    pids.extend(second.as_ref().map(|s| s.pid));
    let ours: Vec<u32> = [Some(pids[0]), second.as_ref().map(|s| s.pid)]
        .into_iter()
        .flatten()
        .collect();
    let quiet = |timeout: Duration| {
        ours.iter()
            .map(|pid| wait_idle(*pid, QUIET_WINDOW, QUIET_CPU, timeout))
            .max()
            .unwrap_or_else(Instant::now)
    };
    let cpu_now = || -> Vec<f64> { pids.iter().map(|pid| cpu_seconds(*pid).unwrap_or(0.0)).collect() };
    if sharded {
        scale_shards::install_quickstart(&env).unwrap();
    } else {
        class_status::install_quickstart(kubectl).unwrap();
    }
    let mut objects = clusters(n);
    if sharded {
        scale_shards::label(&mut objects);
    }
    let reconciled = ".status.conditions[?(@.type==\"TopologyReconciled\")].status";
    let mut watch = Watch::start(kubectl, "clusters", "default", reconciled).unwrap();

    let before = writes(kubectl);
    let conflicts_before = conflicts(kubectl);
    let cpu_before = cpu_now();
    let start = Instant::now();
    create_all(kubectl, &objects).unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    row.create = start.elapsed().as_secs_f64();
    let converged = watch.wait_for("True", n, converge_timeout());
    let cpu_after = cpu_now();
    let used: Vec<f64> = cpu_after.iter().zip(&cpu_before).map(|(a, b)| a - b).collect();
    row.cpu.copy_from_slice(&used[..3]);
    let second_cpu = used.get(3).copied();
    match converged {
        Ok(at) => {
            row.converge = Some((at - start).as_secs_f64());
            row.reconciled = n;
        }
        Err(reached) => {
            row.reconciled = reached;
            eprintln!(
                "scale {n}: only {reached} of {n} reconciled; capi-topology log:\n{}",
                env.logs()
            );
        }
    }
    // Let writes of the last reconciles land in the metric.
    quiet(Duration::from_secs(60));
    let after_create = writes(kubectl);
    let create_writes = topology_writes(&before, &after_create);
    row.writes_per_cluster = sum(&create_writes) as f64 / n as f64;
    let events = after_create.get("POST events").copied().unwrap_or(0)
        - before.get("POST events").copied().unwrap_or(0);
    println!("scale {n}: topology writes while converging: {create_writes:?}; events created: {events}");
    println!(
        "scale {n}: reconciles per Cluster: {}",
        reconciles_per_cluster(metrics_port, n)
    );
    // Not in the figure (the resync's annotations are such patches too): the finalizer patches.
    let cluster_patches = after_create.get("PATCH clusters").copied().unwrap_or(0)
        - before.get("PATCH clusters").copied().unwrap_or(0);
    let refused = topology_writes(&conflicts_before, &conflicts(kubectl));
    println!("scale {n}: besides, PATCH clusters (finalizers): {cluster_patches}; refused with 409 Conflict (counted above): {refused:?}");

    if row.converge.is_some() {
        // A full resync: every Cluster is reconciled again (an annotation change triggers it)
        // while nothing its topology depends on changed.
        let start = Instant::now();
        let annotate = kubectl.command(&["annotate", "clusters", "--all", "-n", "default", "resync=1"]);
        let out = run_bounded(annotate, None, converge_timeout()).unwrap();
        assert!(out.success, "kubectl annotate: {}", out.stderr);
        let idle = quiet(converge_timeout());
        let after_resync = writes(kubectl);
        let resync_writes = topology_writes(&after_create, &after_resync);
        println!("scale {n}: writes during the resync: {resync_writes:?}");
        row.resync = Some(((idle.max(start) - start).as_secs_f64(), sum(&resync_writes)));

        // A ClusterClass change every control plane must take.
        let mut rollout = Watch::start(
            kubectl,
            "kubeadmcontrolplanes",
            "default",
            ".metadata.labels.rollout",
        )
        .unwrap();
        let start = Instant::now();
        kubectl
            .ok(&[
                "patch",
                "clusterclass",
                "quick-start",
                "-n",
                "default",
                "--type=merge",
                "-p",
                r#"{"spec":{"controlPlane":{"metadata":{"labels":{"rollout":"1"}}}}}"#,
            ])
            .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
        match rollout.wait_for("1", n, ROLLOUT_TIMEOUT) {
            Ok(at) => {
                quiet(Duration::from_secs(60));
                let change_writes = topology_writes(&after_resync, &writes(kubectl));
                println!("scale {n}: writes of the class change: {change_writes:?}");
                row.class_change = Some(((at - start).as_secs_f64(), sum(&change_writes) as f64 / n as f64));
            }
            Err(reached) => eprintln!("scale {n}: the class change reached {reached} of {n}"),
        }
    }
    for (i, pid) in pids.iter().take(3).enumerate() {
        row.rss[i] = peak_rss_mib(*pid).unwrap_or(0.0);
    }
    row.second = second
        .as_ref()
        .map(|s| (second_cpu.unwrap_or(0.0), peak_rss_mib(s.pid).unwrap_or(0.0)));
    println!("{CSV_HEADER}\n{}", row.csv());
    row
}

#[test]
#[ignore = "benchmark: SCALE_CLUSTERS=100,300 cargo test --release --test e2e scale_clusters -- --ignored --nocapture"]
fn scale_clusters() {
    let path = csv_path();
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).unwrap();
    }
    fs::write(&path, format!("{CSV_HEADER}\n")).unwrap();
    for n in counts() {
        let row = measure(n);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        writeln!(file, "{}", row.csv()).unwrap();
    }
    println!("written {}", path.display());
}
