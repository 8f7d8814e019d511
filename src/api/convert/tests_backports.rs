//! The fields Cluster API v1.12 and v1.13 added to v1beta2 and backported to v1beta1 (topology
//! `rollout.after`, `taints`, health checks' `unhealthyMachineConditions`): written through
//! v1beta1 they land where v1beta2 has them and come back unchanged.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::tests::crds;
use super::*;

fn yaml(text: &str) -> Value {
    serde_yaml_ng::from_str(text).expect("YAML")
}

/// `object` through the hub and back to v1beta1, without the annotation the way back adds.
fn round_trip(object: &Value) -> (Value, Value) {
    let hub = to_hub(object.clone()).expect("to hub");
    let mut back = from_hub(hub.clone(), "cluster.x-k8s.io/v1beta1", &crds()).expect("from hub");
    if let Some(annotations) = back["metadata"]["annotations"].as_object_mut() {
        annotations.remove(CONVERSION_DATA);
    }
    if back["metadata"]["annotations"]
        .as_object()
        .is_some_and(serde_json::Map::is_empty)
    {
        back["metadata"].as_object_mut().map(|m| m.remove("annotations"));
    }
    (hub, back)
}

const TAINT: &str = "{key: example.com/gpu, value: 'true', effect: NoSchedule, propagation: Always}";

#[test]
fn cluster_rollout_taints_and_machine_conditions_cross_v1beta1() {
    let cluster = yaml(&format!(
        "apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {{name: dev, namespace: ns}}
spec:
  topology:
    class: quick-start
    version: v1.33.0
    controlPlane:
      rollout: {{after: '2026-03-01T00:00:00Z'}}
      taints: [{TAINT}]
      machineHealthCheck:
        unhealthyMachineConditions: [{{type: example.com/Stuck, status: 'True', timeout: 5m0s}}]
    workers:
      machineDeployments:
      - class: default-worker
        name: md-0
        rollout: {{after: '2026-03-02T00:00:00Z'}}
        strategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: 1}}}}
        taints: [{TAINT}]
      machinePools:
      - class: default-pool
        name: mp-0
        taints: [{TAINT}]
status: {{infrastructureReady: false, controlPlaneReady: false}}
"
    ));
    let (hub, back) = round_trip(&cluster);
    let topology = &hub["spec"]["topology"];
    assert_eq!(
        topology["controlPlane"]["rollout"]["after"],
        "2026-03-01T00:00:00Z"
    );
    assert_eq!(topology["controlPlane"]["taints"][0]["key"], "example.com/gpu");
    assert_eq!(
        topology["controlPlane"]["healthCheck"]["checks"]["unhealthyMachineConditions"][0],
        yaml("{type: example.com/Stuck, status: 'True', timeoutSeconds: 300}")
    );
    let md = &topology["workers"]["machineDeployments"][0];
    assert_eq!(
        md["rollout"],
        yaml(
            "{after: '2026-03-02T00:00:00Z', strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}"
        )
    );
    assert_eq!(md["taints"][0]["propagation"], "Always");
    assert_eq!(
        topology["workers"]["machinePools"][0]["taints"][0]["effect"],
        "NoSchedule"
    );
    assert_eq!(back, cluster);
}

#[test]
fn cluster_class_taints_and_machine_conditions_cross_v1beta1() {
    let class = yaml(&format!(
        "apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {{name: quick-start, namespace: ns}}
spec:
  controlPlane:
    ref: {{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: cp, namespace: ns}}
    taints: [{TAINT}]
    machineHealthCheck:
      unhealthyMachineConditions: [{{type: example.com/Stuck, status: 'False', timeout: 1m0s}}]
  workers:
    machineDeployments:
    - class: default-worker
      template:
        bootstrap: {{ref: {{apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate, name: b, namespace: ns}}}}
        infrastructure: {{ref: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: i, namespace: ns}}}}
      taints: [{TAINT}]
    machinePools:
    - class: default-pool
      template:
        bootstrap: {{ref: {{apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfig, name: b, namespace: ns}}}}
        infrastructure: {{ref: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachinePool, name: i, namespace: ns}}}}
      taints: [{TAINT}]
"
    ));
    let (hub, back) = round_trip(&class);
    let spec = &hub["spec"];
    assert_eq!(spec["controlPlane"]["taints"][0]["key"], "example.com/gpu");
    assert_eq!(
        spec["controlPlane"]["healthCheck"]["checks"]["unhealthyMachineConditions"][0]["timeoutSeconds"],
        60
    );
    assert_eq!(
        spec["workers"]["machineDeployments"][0]["taints"][0]["value"],
        "true"
    );
    assert_eq!(
        spec["workers"]["machinePools"][0]["taints"][0]["key"],
        "example.com/gpu"
    );
    assert_eq!(back, class);
}
