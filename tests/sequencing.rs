//! The engine's version and rollout sequencing over a ClusterClass with MachineDeployments and
//! MachinePools: the control plane first, workers once it is stable, machines still rolling out
//! holding the next step, `rolloutAfter` reaching the workers after the control plane.

use capi_topology::api::Cluster;
use capi_topology::patches::external::NoExternalPatches;
use capi_topology::store::{MemoryStore, ObjectSource};
use capi_topology::topology::upgrade_report::pending;
use capi_topology::topology::{plan, Blueprint, Current, Plan};
use serde_json::{json, Value};

const FIXTURE: &str = include_str!("fixtures/plan/machine-pools.yaml");

fn setup() -> (Blueprint, Cluster) {
    let store = MemoryStore::from_yaml(FIXTURE).expect("fixture loads");
    let class = store
        .cluster_class("default", "pools")
        .expect("class")
        .class
        .clone();
    let cluster = store
        .get("cluster.x-k8s.io", "Cluster", "default", "c1")
        .expect("cluster");
    let blueprint = Blueprint::new(class, &store).expect("blueprint");
    (
        blueprint,
        serde_json::from_value((*cluster).clone()).expect("typed Cluster"),
    )
}

fn run(blueprint: &Blueprint, cluster: &Cluster, current: &[Value]) -> Plan {
    let current = Current {
        objects: current.to_vec(),
    };
    plan(blueprint, cluster, &current, &NoExternalPatches).expect("plan")
}

fn one<'a>(plan: &'a Plan, kind: &str) -> &'a Value {
    let mut found = plan.objects.iter().filter(|o| o["kind"] == kind);
    let object = found.next().unwrap_or_else(|| panic!("no {kind}"));
    assert!(found.next().is_none(), "one {kind}");
    object
}

fn worker_version(plan: &Plan, kind: &str) -> Value {
    one(plan, kind)["spec"]["template"]["spec"]["version"].clone()
}

/// The objects of `plan` as the cluster would hold them, the control plane reporting `version`
/// with its replica up to date.
fn as_current(plan: &Plan, reported: &str) -> Vec<Value> {
    plan.objects
        .iter()
        .cloned()
        .map(|mut object| {
            if object["kind"] == "KubeadmControlPlane" {
                object["status"] =
                    json!({"version": reported, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1});
            }
            object
        })
        .collect()
}

fn with_version(cluster: &Cluster, version: &str) -> Cluster {
    let mut cluster = cluster.clone();
    cluster.spec.topology.version = version.to_owned();
    cluster
}

#[test]
fn a_machine_pool_gets_its_bootstrap_config_infrastructure_and_builtins() {
    let (blueprint, cluster) = setup();
    let planned = run(&blueprint, &cluster, &[]);
    let pool = one(&planned, "MachinePool");
    let config = one(&planned, "KubeadmConfig");
    let infrastructure = one(&planned, "DockerMachinePool");
    assert_eq!(pool["spec"]["replicas"], 2);
    assert_eq!(pool["spec"]["failureDomains"], json!(["fd-1"]));
    assert_eq!(pool["metadata"]["labels"]["pool-class"], "pool");
    assert_eq!(pool["metadata"]["labels"]["pool-topology"], "mp-0");
    assert_eq!(
        pool["metadata"]["labels"]["topology.cluster.x-k8s.io/pool-name"],
        "mp-0"
    );
    let machine = &pool["spec"]["template"]["spec"];
    assert_eq!(
        machine["bootstrap"]["configRef"]["name"],
        config["metadata"]["name"]
    );
    assert_eq!(
        machine["infrastructureRef"]["name"],
        infrastructure["metadata"]["name"]
    );
    assert_eq!(
        config["spec"]["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"]["node-labels"],
        "pool=yes"
    );
    assert_eq!(
        infrastructure["spec"]["template"]["customImage"],
        "kindest/node:v1.31.2"
    );
    for object in [config, infrastructure] {
        assert_eq!(
            object["metadata"]["labels"]["topology.cluster.x-k8s.io/pool-name"],
            "mp-0"
        );
    }
}

#[test]
fn an_upgrade_moves_the_control_plane_first_then_every_worker_kind() {
    let (blueprint, cluster) = setup();
    let created = run(&blueprint, &cluster, &[]);
    let upgraded = with_version(&cluster, "v1.32.0");

    let first = run(&blueprint, &upgraded, &as_current(&created, "v1.31.2"));
    assert_eq!(one(&first, "KubeadmControlPlane")["spec"]["version"], "v1.32.0");
    assert_eq!(worker_version(&first, "MachineDeployment"), "v1.31.2");
    assert_eq!(worker_version(&first, "MachinePool"), "v1.31.2");
    assert_eq!(
        one(&first, "DockerMachinePool")["spec"]["template"]["customImage"],
        "kindest/node:v1.31.2",
        "the pool's builtin version follows the pool"
    );
    let waiting = pending(&first.upgrade, &first.hooks).expect("workers wait");
    assert_eq!(waiting.reason, "MachineDeploymentsUpgradePending");

    // Still upgrading: nothing moves.
    let second = run(&blueprint, &upgraded, &as_current(&first, "v1.31.2"));
    assert_eq!(worker_version(&second, "MachinePool"), "v1.31.2");
    let waiting = pending(&second.upgrade, &second.hooks).expect("workers wait");
    assert!(
        waiting
            .message
            .ends_with("the control plane is upgrading to v1.32.0"),
        "{}",
        waiting.message
    );

    // Done: the workers follow, the pool's objects updated in place.
    let third = run(&blueprint, &upgraded, &as_current(&first, "v1.32.0"));
    assert_eq!(worker_version(&third, "MachineDeployment"), "v1.32.0");
    assert_eq!(worker_version(&third, "MachinePool"), "v1.32.0");
    let infrastructure = one(&third, "DockerMachinePool");
    assert_eq!(
        infrastructure["spec"]["template"]["customImage"],
        "kindest/node:v1.32.0"
    );
    assert_eq!(
        infrastructure["metadata"]["name"],
        one(&created, "DockerMachinePool")["metadata"]["name"]
    );
    assert_eq!(pending(&third.upgrade, &third.hooks), None);
}

#[test]
fn machines_still_rolling_out_hold_the_next_control_plane_upgrade() {
    let (blueprint, cluster) = setup();
    let created = run(&blueprint, &cluster, &[]);
    let md = one(&created, "MachineDeployment");
    let mut current = as_current(&created, "v1.31.2");
    let mut labels = md["spec"]["selector"]["matchLabels"].clone();
    labels["topology.cluster.x-k8s.io/owned"] = json!("");
    current.push(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
        "metadata": {"name": "old-machine", "namespace": "default", "labels": labels},
        "spec": {"clusterName": "c1", "version": "v1.30.9"},
    }));
    let planned = run(&blueprint, &with_version(&cluster, "v1.32.0"), &current);
    assert_eq!(one(&planned, "KubeadmControlPlane")["spec"]["version"], "v1.31.2");
    let waiting = pending(&planned.upgrade, &planned.hooks).expect("the control plane waits");
    assert_eq!(waiting.reason, "ControlPlaneUpgradePending");
    assert!(waiting.message.contains("are rolling out"), "{}", waiting.message);
}

/// The fixture's v1beta1 Cluster with `spec.topology.rolloutAfter` (a field v1beta2 does not
/// have), converted to the hub as the API server stores it.
fn with_v1beta1_rollout_after(after: &str) -> Cluster {
    let mut documents = capi_topology::store::parse_manifests(FIXTURE).expect("fixture");
    let mut cluster = documents
        .drain(..)
        .find(|d| d["kind"] == "Cluster")
        .expect("the Cluster");
    assert_eq!(cluster["apiVersion"], "cluster.x-k8s.io/v1beta1");
    cluster["spec"]["topology"]["rolloutAfter"] = json!(after);
    let hub = capi_topology::api::convert::to_hub(cluster).expect("converts");
    serde_json::from_value(hub).expect("typed Cluster")
}

/// v1beta1's topology-wide `rolloutAfter` survives on the hub (annotation) and keeps its
/// sequencing: the control plane's `spec.rollout.after` first, the workers' once it has rolled.
#[test]
fn rollout_after_reaches_the_control_plane_then_the_workers() {
    const AFTER: &str = "2026-03-01T00:00:00Z";
    let (blueprint, cluster) = setup();
    let created = run(&blueprint, &cluster, &[]);
    let rolling = with_v1beta1_rollout_after(AFTER);

    let first = run(&blueprint, &rolling, &as_current(&created, "v1.31.2"));
    assert_eq!(
        one(&first, "KubeadmControlPlane")["spec"]["rollout"]["after"],
        AFTER
    );
    assert_eq!(one(&first, "MachineDeployment")["spec"].get("rollout"), None);

    let control_plane_machine = |created: &str| {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
            "metadata": {"name": format!("cp-{created}"), "namespace": "default", "creationTimestamp": created,
                "labels": {"cluster.x-k8s.io/cluster-name": "c1", "topology.cluster.x-k8s.io/owned": "",
                    "cluster.x-k8s.io/control-plane": ""}},
            "spec": {"clusterName": "c1", "version": "v1.31.2"}})
    };
    let mut current = as_current(&first, "v1.31.2");
    current.push(control_plane_machine("2026-02-01T00:00:00Z"));
    let second = run(&blueprint, &rolling, &current);
    assert_eq!(one(&second, "MachineDeployment")["spec"].get("rollout"), None);

    let mut current = as_current(&first, "v1.31.2");
    current.push(control_plane_machine("2026-03-01T00:10:00Z"));
    let third = run(&blueprint, &rolling, &current);
    assert_eq!(
        one(&third, "MachineDeployment")["spec"]["rollout"]["after"],
        AFTER
    );
}

/// v1beta2's per-part `rollout.after`, as Cluster API v1.13+ writes it: the control plane's to
/// its `spec.rollout.after`, each MachineDeployment's to its own, independently.
#[test]
fn v1beta2_rollout_after_is_set_per_part() {
    const CP: &str = "2026-04-01T00:00:00Z";
    const MD: &str = "2026-05-01T00:00:00Z";
    let (blueprint, cluster) = setup();
    let created = run(&blueprint, &cluster, &[]);
    let mut rolling = cluster.clone();
    rolling.spec.topology.control_plane.rollout.after =
        Some(serde_json::from_value(json!(CP)).expect("a time"));
    let first = run(&blueprint, &rolling, &as_current(&created, "v1.31.2"));
    assert_eq!(one(&first, "KubeadmControlPlane")["spec"]["rollout"]["after"], CP);
    assert_eq!(one(&first, "MachineDeployment")["spec"].get("rollout"), None);
    rolling.spec.topology.workers.machine_deployments[0].rollout.after =
        Some(serde_json::from_value(json!(MD)).expect("a time"));
    let second = run(&blueprint, &rolling, &as_current(&created, "v1.31.2"));
    assert_eq!(one(&second, "MachineDeployment")["spec"]["rollout"]["after"], MD);
}
