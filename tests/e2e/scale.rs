//! Scale run (a benchmark, not part of `cargo test`): 300 Clusters with 3 worker pools each,
//! created at once against the e2e API server. Prints the time until every topology is
//! reconciled, the API writes per Cluster, and the writes of a full resync (every Cluster
//! reconciled again with nothing changed). Run:
//!
//! ```text
//! cargo test --release --test e2e scale -- --ignored --nocapture
//! ```

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::class_status;
use crate::env::Env;
use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, quickstart_templates, render};
use crate::process::poll;

const CLUSTERS: usize = 300;
const CONVERGED: Duration = Duration::from_secs(900);

/// Mutating requests the API server has answered, by `verb resource[/subresource]`, from its
/// `apiserver_request_total` metric.
fn writes(kubectl: &Kubectl) -> BTreeMap<String, u64> {
    requests(kubectl, &["POST", "PUT", "PATCH", "DELETE", "APPLY"])
}

/// Requests of `verbs` (every verb when empty) the API server has answered, by
/// `verb resource[/subresource]`, from its `apiserver_request_total` metric.
pub fn requests(kubectl: &Kubectl, verbs: &[&str]) -> BTreeMap<String, u64> {
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

/// `after - before`, without the writes that are not the topology's: leader Lease renewals,
/// events, the test's own Cluster creations and annotations, and the API server's own endpoint
/// upkeep.
fn topology_writes(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter(|(key, _)| {
            !key.contains("leases")
                && !key.contains("events")
                && *key != "POST clusters"
                && *key != "PATCH clusters"
        })
        .filter_map(|(key, count)| {
            let delta = count - before.get(key).copied().unwrap_or(0);
            (delta > 0).then(|| (key.clone(), delta))
        })
        .collect()
}

fn reconciled_count(kubectl: &Kubectl) -> Result<usize, String> {
    let out = kubectl.ok(&["get", "clusters", "-n", "default", "-o", "json"])?;
    let list: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    Ok(list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|cluster| {
            cluster["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "TopologyReconciled" && c["status"] == "True")
        })
        .count())
}

#[test]
#[ignore = "benchmark: cargo test --release --test e2e scale -- --ignored --nocapture"]
fn scale_three_hundred_clusters() {
    let env = Env::with_webhooks("scale");
    let kubectl = &env.kubectl;
    kubectl.accepts(&render(&quickstart_templates())).unwrap();
    kubectl
        .accepts(&render(&[quickstart_object(
            "00-clusterclass.yaml",
            "ClusterClass",
        )]))
        .unwrap();
    class_status::wait_reconciled(kubectl, "default", "quick-start").unwrap();
    let base = quickstart_object("10-cluster-dev.yaml", "Cluster");
    let clusters: Vec<Value> = (0..CLUSTERS)
        .map(|i| {
            let mut cluster = base.clone();
            cluster["metadata"]["name"] = json!(format!("c{i:03}"));
            cluster["spec"]["topology"]["workers"]["machineDeployments"] = json!([
                {"class": "default-worker", "name": "md-0", "replicas": 1},
                {"class": "default-worker", "name": "md-1", "replicas": 2},
                {"class": "large-worker", "name": "md-2", "replicas": 1},
            ]);
            cluster
        })
        .collect();

    let before = writes(kubectl);
    let start = Instant::now();
    for chunk in clusters.chunks(50) {
        kubectl
            .accepts(&render(chunk))
            .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    }
    let created = start.elapsed();
    poll("every topology reconciled", CONVERGED, || {
        let done = reconciled_count(kubectl)?;
        (done == CLUSTERS)
            .then_some(())
            .ok_or(format!("{done} of {CLUSTERS}"))
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    let converged = start.elapsed();
    // Let writes of the last reconciles land in the metric.
    std::thread::sleep(Duration::from_secs(5));
    let after_create = writes(kubectl);
    let create_writes = topology_writes(&before, &after_create);
    let total: u64 = create_writes.values().sum();

    // A full resync: every Cluster is reconciled again (an annotation change triggers it) while
    // nothing its topology depends on changed.
    kubectl
        .ok(&["annotate", "clusters", "--all", "-n", "default", "resync=1"])
        .unwrap();
    std::thread::sleep(Duration::from_secs(30));
    let resync_writes = topology_writes(&after_create, &writes(kubectl));

    #[allow(clippy::cast_precision_loss)]
    let per_cluster = total as f64 / CLUSTERS as f64;
    println!("clusters: {CLUSTERS} x 3 worker pools");
    println!(
        "created (kubectl) in {:.1} s, all reconciled after {:.1} s",
        created.as_secs_f64(),
        converged.as_secs_f64()
    );
    println!("topology writes: {total} ({per_cluster:.1} per Cluster): {create_writes:?}");
    println!("writes during the resync: {resync_writes:?}");
}
