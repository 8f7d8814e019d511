//! ClusterResourceSet scale run (a benchmark, not part of `cargo test`): 100 Clusters x 3 sets x
//! 10 objects, the Clusters sharing one workload API server through distinct namespaces. Prints
//! the time until every Cluster's binding records every set applied, the API calls per Cluster
//! (workload and management), and the calls of a resync with nothing changed. Run:
//!
//! ```text
//! cargo test --release --test e2e resource_sets_scale -- --ignored --nocapture
//! ```

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::control_plane::ControlPlane;
use crate::env::Env;
use crate::kubectl::Kubectl;
use crate::process::poll;
use crate::resource_sets::{mark_initialized, workload_cluster};
use crate::scale::requests;

const CLUSTERS: usize = 100;
const SETS: usize = 3;
const OBJECTS: usize = 10;
const CONVERGED: Duration = Duration::from_secs(600);
const WRITES: [&str; 5] = ["POST", "PUT", "PATCH", "DELETE", "APPLY"];

fn apply_chunked(kubectl: &Kubectl, objects: &[Value]) {
    for chunk in objects.chunks(50) {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": chunk});
        kubectl
            .accepts(&list.to_string())
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// `after - before` without what is not the controller's: Leases, Events, non-resource URLs
/// (metrics, health), and `skip`.
fn delta(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
    skip: &[&str],
) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter(|(key, _)| {
            let resource = key.split_once(' ').map_or("", |(_, r)| r);
            !resource.is_empty()
                && !key.contains("leases")
                && !key.contains("events")
                && !skip.contains(&key.as_str())
        })
        .filter_map(|(key, count)| {
            let delta = count - before.get(key).copied().unwrap_or(0);
            (delta > 0).then(|| (key.clone(), delta))
        })
        .collect()
}

fn applied_count(kubectl: &Kubectl) -> Result<usize, String> {
    let out = kubectl.ok(&["get", "clusterresourcesetbindings", "-n", "default", "-o", "json"])?;
    let list: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    Ok(list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|binding| {
            let sets = binding["spec"]["bindings"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            sets.len() == SETS
                && sets.iter().all(|set| {
                    set["resources"]
                        .as_array()
                        .is_some_and(|r| r.len() == 1 && r[0]["applied"] == true)
                })
        })
        .count())
}

#[allow(clippy::cast_precision_loss)]
fn per_cluster(calls: &BTreeMap<String, u64>) -> f64 {
    calls.values().sum::<u64>() as f64 / CLUSTERS as f64
}

#[test]
#[ignore = "benchmark: cargo test --release --test e2e resource_sets_scale -- --ignored --nocapture"]
fn resource_sets_scale() {
    let env = Env::with_webhooks("crs-scale");
    let kubectl = &env.kubectl;
    let workload = ControlPlane::start_named(&env.run, "workload");
    let remote = workload.kubectl();
    let names: Vec<String> = (0..CLUSTERS).map(|i| format!("c{i:03}")).collect();

    let namespaces: Vec<Value> = names
        .iter()
        .map(|n| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}))
        .collect();
    apply_chunked(&remote, &namespaces);
    let mut clusters = Vec::new();
    for name in &names {
        clusters.push(workload_cluster(name, json!({"bench": "crs"})));
        clusters.push(
            json!({"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
            "metadata": {"name": format!("{name}-kubeconfig"), "namespace": "default"},
            "stringData": {"value": workload.portable_kubeconfig(name)}}),
        );
    }
    apply_chunked(kubectl, &clusters);
    for name in &names {
        mark_initialized(kubectl, name).unwrap_or_else(|e| panic!("{e}"));
    }
    let mut sets = Vec::new();
    for s in 0..SETS {
        let manifest: Vec<String> = (0..OBJECTS)
            .map(|o| {
                format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s{s}-o{o}\ndata:\n  n: '{o}'\n")
            })
            .collect();
        sets.push(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("set-{s}"), "namespace": "default"},
            "data": {"objects.yaml": manifest.join("---\n")}}));
    }
    apply_chunked(kubectl, &sets);
    let crs: Vec<Value> = (0..SETS)
        .map(|s| {
            json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet",
            "metadata": {"name": format!("set-{s}"), "namespace": "default"},
            "spec": {"clusterSelector": {"matchLabels": {"bench": "crs"}},
                     "resources": [{"kind": "ConfigMap", "name": format!("set-{s}")}]}})
        })
        .collect();

    let (before, before_remote) = (requests(kubectl, &WRITES), requests(&remote, &[]));
    let start = Instant::now();
    apply_chunked(kubectl, &crs);
    poll("every binding applied", CONVERGED, || {
        let done = applied_count(kubectl)?;
        (done == CLUSTERS)
            .then_some(())
            .ok_or(format!("{done} of {CLUSTERS}"))
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    let converged = start.elapsed();
    std::thread::sleep(Duration::from_secs(5));
    let (after, after_remote) = (requests(kubectl, &WRITES), requests(&remote, &[]));
    let created = delta(&before, &after, &["POST clusterresourcesets"]);
    let remote_calls = delta(&before_remote, &after_remote, &[]);

    // A resync of every Cluster (an annotation change triggers it) with nothing changed.
    kubectl
        .ok(&["annotate", "clusters", "--all", "-n", "default", "resync=1"])
        .unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(Duration::from_secs(20));
    let resync = delta(&after, &requests(kubectl, &WRITES), &["PATCH clusters"]);
    let resync_remote = delta(&after_remote, &requests(&remote, &[]), &[]);

    println!("{CLUSTERS} Clusters x {SETS} sets x {OBJECTS} objects, one workload API server");
    println!(
        "all applied {:.1} s after the sets were created",
        converged.as_secs_f64()
    );
    println!(
        "workload API calls: {:.1} per Cluster: {remote_calls:?}",
        per_cluster(&remote_calls)
    );
    println!(
        "management writes: {:.1} per Cluster: {created:?}",
        per_cluster(&created)
    );
    println!("resync, management writes: {resync:?}; workload calls: {resync_remote:?}");
}
