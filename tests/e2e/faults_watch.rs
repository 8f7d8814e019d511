//! Expired watches (#34): while Clusters change, the API server crashes (SIGKILL), each Cluster is
//! changed in etcd behind its back (an event no watch delivers) and etcd compacts its history
//! (physically) past every revision our controllers have seen. When the API server is back, the
//! controllers' watches resume from a compacted revision, get 410 Gone (too old resource
//! version) and must list again: every change, those made while they were away and those right
//! after, is carried out; nothing is written in a loop afterwards. The time to converge after
//! the API server is back and our writes are printed, not asserted.

use std::time::Instant;

use serde_json::{json, Value};

use crate::audit_log::{total, writes_since, WRITES_POLICY};
use crate::class_status;
use crate::controllers::{condition, owned_by, provision_control_plane, CONVERGED};
use crate::env::Env;
use crate::faults_checks::{audit_mark, quiet_writes};
use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, render, with};
use crate::process::poll;
use crate::runtime_extensions::expect;

const CLUSTERS: [&str; 3] = ["w1", "w2", "w3"];
/// What kube-apiserver answers a watch resuming from a compacted revision.
const EXPIRED: &str = "too old resource version";

/// The replicas of each Cluster's worker pool in `spec.topology`.
fn workers(replicas: u32) -> Value {
    json!({"spec": {"topology": {"workers": {"machineDeployments": [
        {"class": "default-worker", "name": "md-0", "replicas": replicas}]}}}})
}

/// Waits until every Cluster's MachineDeployment has the replicas `wanted` gives for its name
/// and its TopologyReconciled condition is True.
fn converged(kubectl: &Kubectl, wanted: impl Fn(&str) -> u32) -> Result<(), String> {
    poll("every change carried out", CONVERGED, || {
        for name in CLUSTERS {
            let mds = owned_by(kubectl, name, "machinedeployment")?;
            let replicas = mds.first().map(|md| md["spec"]["replicas"].clone());
            let reconciled = condition(&kubectl.get_json("cluster", "default", name)?)["status"] == "True";
            if replicas != Some(json!(wanted(name))) || !reconciled {
                return Err(format!("{name}: replicas {replicas:?}, reconciled {reconciled}"));
            }
        }
        Ok(())
    })
}

/// Cluster `default/name` as etcd stores it, its worker pool at `replicas`: a change the API
/// server never saw.
fn changed_behind(env: &Env, name: &str, replicas: u32) -> Result<(), String> {
    let key = format!("/registry/cluster.x-k8s.io/clusters/default/{name}");
    let mut cluster = env.plane.etcd_value(&key)?;
    cluster["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = json!(replicas);
    let generation = cluster["metadata"]["generation"].as_i64().unwrap_or(1);
    cluster["metadata"]["generation"] = json!(generation + 1);
    env.plane.etcd_put(&key, &cluster)
}

#[test]
fn expired_watches_list_again_and_miss_no_change() {
    let mut env = Env::audited_with_webhooks("faults-watch", WRITES_POLICY);
    if let Err(e) = scenario(&mut env) {
        panic!("{e}\n{}", env.logs());
    }
}

fn scenario(env: &mut Env) -> Result<(), String> {
    let kubectl = env.kubectl.clone();
    class_status::install_quickstart(&kubectl)?;
    let clusters: Vec<Value> = CLUSTERS
        .iter()
        .map(|name| {
            with(
                quickstart_object("10-cluster-dev.yaml", "Cluster"),
                "/metadata/name",
                json!(name),
            )
        })
        .collect();
    kubectl.accepts(&render(&clusters))?;
    for name in CLUSTERS {
        provision_control_plane(&kubectl, name, "v1.31.2")?;
    }
    converged(&kubectl, |_| 1)?;
    // Clusters change, seen through the watches.
    for name in CLUSTERS {
        kubectl.merge_patch(("cluster", "default", name), &workers(2), false)?;
    }

    // Away: each Cluster changed behind the API server's back, etcd's history compacted.
    let away = Instant::now();
    env.plane.kill_apiserver();
    for name in CLUSTERS {
        changed_behind(env, name, 3)?;
    }
    let revision = env.plane.etcd_compact()?;
    env.plane.restart_apiserver();
    let (back, outage) = (Instant::now(), away.elapsed());
    let audit = env.run.join("audit.log");
    let mark = audit_mark(&audit);
    // Right after: one more change through the API server.
    kubectl.merge_patch(("cluster", "default", "w2"), &workers(4), false)?;
    converged(&kubectl, |name| if name == "w2" { 4 } else { 3 })?;
    let took = back.elapsed();
    env.server().ensure_running()?;

    let log = std::fs::read_to_string(env.run.join("capi-topology.log")).unwrap_or_default();
    let expired = log.lines().filter(|line| line.contains(EXPIRED)).count();
    let (writes, _) = writes_since(&audit, mark);
    let ours = writes.get("capi-topology").cloned().unwrap_or_default();
    let quiet = quiet_writes(&audit);
    eprintln!(
        "faults: watches expired: API server away {outage:?}, etcd compacted at revision {revision}; \
         {expired} watches answered 410 ({EXPIRED}); every change carried out {took:?} after the API \
         server was back; our writes meanwhile {} ({ours:?}); our writes once settled: {quiet:?}",
        total(&writes, "capi-topology"),
    );
    expect(
        expired > 0,
        format!("a watch resumed from a compacted revision and got 410 (none in the log after {revision})"),
    )?;
    expect(quiet.is_empty(), format!("no writes once settled: {quiet:?}"))
}
