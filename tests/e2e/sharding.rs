//! Sharding as Cluster API shards (#37): two instances of `capi-topology serve`, one with
//! `--watch-filter shard-a` (webhooks and controllers), one with `--watch-filter shard-b`
//! (controllers only), each leading its own Lease at once. Each Cluster is reconciled by the
//! instance of its label, and by that one only (the events on the Cluster name the instance);
//! a Cluster labelled for no instance is left alone; a Cluster relabelled moves to the other.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::class_status::wait_reconciled;
use crate::controllers::{condition, owned_by, provision_control_plane, CONVERGED};
use crate::env::Env;
use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, quickstart_templates, render, with};
use crate::process::{poll, RunDir};
use crate::webhook::WebhookServer;

const FILTER_LABEL: &str = "cluster.x-k8s.io/watch-filter";
/// The Clusters of each shard, and one of neither.
const SHARD_A: [&str; 2] = ["dev-a1", "dev-a2"];
const SHARD_B: [&str; 2] = ["dev-b1", "dev-b2"];
const UNSHARDED: &str = "dev-none";

/// The quickstart Cluster named `name`, labelled for `shard` (none: no label).
fn cluster(name: &str, shard: Option<&str>) -> Value {
    let cluster = with(
        quickstart_object("10-cluster-dev.yaml", "Cluster"),
        "/metadata/name",
        json!(name),
    );
    match shard {
        Some(shard) => labelled(cluster, shard),
        None => cluster,
    }
}

/// `object` labelled for `shard`.
fn labelled(mut object: Value, shard: &str) -> Value {
    object["metadata"]["labels"][FILTER_LABEL] = json!(shard);
    object
}

/// The instances (`reportingInstance`) that recorded events on Cluster `name`.
fn reporters(kubectl: &Kubectl, name: &str) -> Result<BTreeSet<String>, String> {
    let selector = format!("involvedObject.kind=Cluster,involvedObject.name={name}");
    let out = kubectl.ok(&[
        "get",
        "events",
        "-n",
        "default",
        "--field-selector",
        &selector,
        "-o",
        "json",
    ])?;
    let list: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    Ok(list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|event| event["reportingInstance"].as_str().map(str::to_owned))
        .collect())
}

/// Waits until Cluster `name`'s topology is reconciled, playing its control plane provider.
fn reconciled(kubectl: &Kubectl, name: &str) -> Result<Value, String> {
    provision_control_plane(kubectl, name, "v1.31.2")?;
    poll(&format!("Cluster {name} to be reconciled"), CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", name)?;
        (condition(&cluster)["status"] == "True")
            .then_some(cluster.clone())
            .ok_or(format!("TopologyReconciled: {}", condition(&cluster)))
    })
}

#[test]
fn two_instances_split_a_fleet_by_watch_filter() {
    let env = Env::with_webhooks_and(
        "sharding",
        &[
            "--watch-filter",
            "shard-a",
            "--leader-election-identity",
            "shard-a",
        ],
    );
    let kubectl = &env.kubectl;
    let run_b = RunDir::create("sharding-b");
    let shard_b = WebhookServer::start_with(
        &run_b,
        env.plane.kubeconfig(),
        &[
            "--components",
            "controllers",
            "--watch-filter",
            "shard-b",
            "--leader-election-identity",
            "shard-b",
        ],
    );
    let shard_b = shard_b.unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    let fail =
        |e: String| -> ! { panic!("{e}\n{}\n--- shard-b log ---\n{}", env.logs(), shard_b.log_tail()) };

    // The class is shard-a's to report on; both shards read it.
    kubectl
        .accepts(&render(&quickstart_templates()))
        .unwrap_or_else(|e| fail(e));
    let class = quickstart_object("00-clusterclass.yaml", "ClusterClass");
    let class = labelled(class, "shard-a");
    kubectl.accepts(&render(&[class])).unwrap_or_else(|e| fail(e));
    wait_reconciled(kubectl, "default", "quick-start").unwrap_or_else(|e| fail(e));

    let mut clusters: Vec<Value> = SHARD_A
        .iter()
        .map(|name| cluster(name, Some("shard-a")))
        .collect();
    clusters.extend(SHARD_B.iter().map(|name| cluster(name, Some("shard-b"))));
    clusters.push(cluster(UNSHARDED, None));
    kubectl.accepts(&render(&clusters)).unwrap_or_else(|e| fail(e));

    for (names, shard) in [(SHARD_A, "shard-a"), (SHARD_B, "shard-b")] {
        for name in names {
            reconciled(kubectl, name).unwrap_or_else(|e| fail(e));
            let seen = reporters(kubectl, name).unwrap_or_else(|e| fail(e));
            assert_eq!(
                seen,
                BTreeSet::from([shard.to_owned()]),
                "events on Cluster {name}"
            );
        }
    }
    // Both led at once, each its own Lease.
    let leases = kubectl
        .ok(&[
            "get",
            "leases",
            "-n",
            "default",
            "-o",
            "jsonpath={.items[*].spec.holderIdentity}",
        ])
        .unwrap_or_else(|e| fail(e));
    let holders: BTreeSet<&str> = leases.split_whitespace().collect();
    assert!(
        holders.contains("shard-a") && holders.contains("shard-b"),
        "Lease holders: {leases}"
    );

    // The Cluster labelled for no instance is left alone: no condition, no object.
    std::thread::sleep(Duration::from_secs(3));
    let none = kubectl
        .get_json("cluster", "default", UNSHARDED)
        .unwrap_or_else(|e| fail(e));
    assert_eq!(condition(&none), Value::Null, "{none}");
    let planes = owned_by(kubectl, UNSHARDED, "kubeadmcontrolplane").unwrap_or_else(|e| fail(e));
    assert!(planes.is_empty(), "{planes:?}");
    assert!(reporters(kubectl, UNSHARDED)
        .unwrap_or_else(|e| fail(e))
        .is_empty());

    // Labelled for shard-b, it is shard-b's.
    kubectl
        .ok(&[
            "label",
            "cluster",
            UNSHARDED,
            "-n",
            "default",
            &format!("{FILTER_LABEL}=shard-b"),
        ])
        .unwrap_or_else(|e| fail(e));
    reconciled(kubectl, UNSHARDED).unwrap_or_else(|e| fail(e));
    let seen = reporters(kubectl, UNSHARDED).unwrap_or_else(|e| fail(e));
    assert_eq!(seen, BTreeSet::from(["shard-b".to_owned()]));
}
