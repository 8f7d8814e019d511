//! The desired control plane object.

use serde_json::{json, Map, Value};

use super::{
    clone_template, cloned_from, contract_ref_to, merged_metadata, node_timeouts, owned_labels, reference_to,
    set_deletion, set_list, set_opt,
};
use crate::api::convert::go_duration;
use crate::api::{ControlPlaneClass, ControlPlaneTopology, MachineDeletionSpec};

/// What the control plane is built from.
#[derive(Debug, Clone, Copy)]
pub struct ControlPlaneInput<'a> {
    /// The patched control plane template.
    pub template: &'a Value,
    /// The class's control plane template before patching: patches change only specs, and the
    /// `machineTemplate.metadata` it sets is kept over theirs, as Cluster API preserves it.
    pub unpatched: &'a Value,
    /// The control plane's name.
    pub name: &'a str,
    /// The Cluster's namespace.
    pub namespace: &'a str,
    /// The Cluster's name.
    pub cluster: &'a str,
    /// The version to run.
    pub version: &'a str,
    /// The v1beta1 topology-wide `rolloutAfter` (kept on the hub in an annotation), when set:
    /// `spec.rollout.after` unless `controlPlane.rollout.after` is set.
    pub rollout_after: Option<&'a str>,
    /// Whether the control plane follows the v1beta1 contract (see [`desired`]).
    pub v1beta1_contract: bool,
    /// The class's control plane.
    pub class: &'a ControlPlaneClass,
    /// The topology's control plane.
    pub topology: &'a ControlPlaneTopology,
    /// The cloned infrastructure machine template, when the class has one.
    pub machine_infrastructure: Option<&'a Value>,
}

/// Labels and annotations of the class's and the topology's control plane metadata (the topology
/// wins), with the Cluster's labels on top: what the control plane's machines carry.
fn machine_metadata(
    class: &ControlPlaneClass,
    topology: &ControlPlaneTopology,
    cluster: &str,
) -> (Map<String, Value>, Map<String, Value>) {
    merged_metadata(&[&class.metadata, &topology.metadata], owned_labels(cluster))
}

/// The control plane object's labels and annotations, as `builtin.controlPlane.metadata` gives
/// them: the (unpatched) template's `spec.template.metadata`, then the class's and topology's
/// metadata (the topology wins) with the Cluster's labels, then the `cloned-from` annotations.
pub fn object_metadata(
    unpatched: &Value,
    class: &ControlPlaneClass,
    topology: &ControlPlaneTopology,
    cluster: &str,
) -> (Map<String, Value>, Map<String, Value>) {
    let template_metadata = &unpatched["spec"]["template"]["metadata"];
    let map_of = |value: &Value| value.as_object().cloned().unwrap_or_default();
    let (mut labels, mut annotations) = (
        map_of(&template_metadata["labels"]),
        map_of(&template_metadata["annotations"]),
    );
    let (own_labels, own_annotations) = machine_metadata(class, topology, cluster);
    labels.extend(own_labels);
    annotations.extend(own_annotations);
    annotations.extend(cloned_from(unpatched));
    (labels, annotations)
}

/// `base` with `over`'s entries on top (`over` wins).
fn overlay(base: &Value, over: &Map<String, Value>) -> Map<String, Value> {
    let mut out = base.as_object().cloned().unwrap_or_default();
    out.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
    out
}

/// The control plane: the template's spec, then the fields the topology owns set over whatever the
/// patches wrote (version, `rollout.after`, replicas, machineTemplate metadata, infrastructureRef,
/// readiness gates, taints, timeouts). With an infrastructure machine template, the machines'
/// metadata is the unpatched template's `machineTemplate.metadata` with the control plane's on top.
/// Readiness gates, taints and timeouts are written whether or not the class has an
/// infrastructure machine template (a control plane without machines of its own may still take
/// them), as v1.14 does; `machineTemplate` is left out only when nothing goes in it.
///
/// Paths follow the control plane's contract, as Cluster API v1.14's `contract` package writes
/// them: v1beta2 `machineTemplate.spec.{infrastructureRef {apiGroup, kind, name}, readinessGates,
/// taints, deletion.*Seconds}`; v1beta1 `machineTemplate.{infrastructureRef (an object
/// reference), readinessGates, taints, node*Timeout (durations)}`. `spec.rollout.after` is the
/// same for both, as in v1.14.
pub fn desired(input: &ControlPlaneInput<'_>) -> Value {
    let mut object = clone_template(
        input.template.clone(),
        input.name,
        input.namespace,
        input.cluster,
        true,
    );
    let (object_labels, object_annotations) =
        object_metadata(input.unpatched, input.class, input.topology, input.cluster);
    object["metadata"]["labels"] = Value::Object(object_labels);
    object["metadata"]["annotations"] = Value::Object(object_annotations);
    if !object["spec"].is_object() {
        object["spec"] = json!({});
    }
    let spec = &mut object["spec"];
    keep_unpatched(spec, &input.unpatched["spec"]["template"]["spec"]);
    spec["version"] = json!(input.version);
    let rollout_after = match &input.topology.rollout.after {
        Some(after) => json!(after),
        None => json!(input.rollout_after),
    };
    if !rollout_after.is_null() {
        if !spec["rollout"].is_object() {
            spec["rollout"] = json!({});
        }
        spec["rollout"]["after"] = rollout_after;
    }
    set_opt(spec, "replicas", json!(input.topology.replicas));
    let template_has_machine_template = spec.get("machineTemplate").is_some();
    {
        let mut machine = spec.get("machineTemplate").cloned().unwrap_or_else(|| json!({}));
        if let Some(infra) = input.machine_infrastructure {
            let (labels, annotations) = machine_metadata(input.class, input.topology, input.cluster);
            let kept = &input.unpatched["spec"]["template"]["spec"]["machineTemplate"]["metadata"];
            machine["metadata"] = json!({"labels": overlay(&kept["labels"], &labels)});
            set_opt(
                &mut machine["metadata"],
                "annotations",
                Value::Object(overlay(&kept["annotations"], &annotations)),
            );
            if input.v1beta1_contract {
                machine["infrastructureRef"] = reference_to(infra);
            } else {
                machine_spec(&mut machine)["infrastructureRef"] = contract_ref_to(infra);
            }
        }
        let (topology, class) = (input.topology, input.class);
        let gates = if topology.readiness_gates.is_empty() {
            &class.readiness_gates
        } else {
            &topology.readiness_gates
        };
        let taints = if topology.taints.is_empty() {
            &class.taints
        } else {
            &topology.taints
        };
        let timeouts = node_timeouts(&topology.deletion, &class.deletion);
        if input.v1beta1_contract {
            set_list(&mut machine, "readinessGates", gates);
            set_list(&mut machine, "taints", taints);
            set_v1beta1_timeouts(&mut machine, &timeouts);
        } else {
            let machine_spec = machine_spec(&mut machine);
            set_list(machine_spec, "readinessGates", gates);
            set_list(machine_spec, "taints", taints);
            set_deletion(machine_spec, &timeouts);
            if machine_spec.as_object().is_some_and(Map::is_empty) {
                if let Some(map) = machine.as_object_mut() {
                    map.remove("spec");
                }
            }
        }
        if template_has_machine_template || machine.as_object().is_none_or(|m| !m.is_empty()) {
            spec["machineTemplate"] = machine;
        }
    }
    object
}

/// The control plane fields Cluster API v1.14's patch engine keeps from the desired object as it
/// was before patching (`updateDesiredState`: `PreserveFields`), under `spec`, both contracts'
/// paths alike.
const PRESERVED: [&[&str]; 16] = [
    &["machineTemplate", "metadata"],
    &["machineTemplate", "readinessGates"],
    &["machineTemplate", "spec", "readinessGates"],
    &["machineTemplate", "taints"],
    &["machineTemplate", "spec", "taints"],
    &["machineTemplate", "infrastructureRef"],
    &["machineTemplate", "spec", "infrastructureRef"],
    &["machineTemplate", "nodeDrainTimeout"],
    &["machineTemplate", "nodeVolumeDetachTimeout"],
    &["machineTemplate", "nodeDeletionTimeout"],
    &["machineTemplate", "spec", "deletion", "nodeDrainTimeoutSeconds"],
    &[
        "machineTemplate",
        "spec",
        "deletion",
        "nodeVolumeDetachTimeoutSeconds",
    ],
    &[
        "machineTemplate",
        "spec",
        "deletion",
        "nodeDeletionTimeoutSeconds",
    ],
    &["replicas"],
    &["version"],
    &["rollout", "after"],
];

/// Puts back, over what the patches wrote, every [`PRESERVED`] field the unpatched template's
/// `spec.template.spec` (`unpatched`) sets: before patching, the desired control plane had the
/// template's value there, and Cluster API keeps it even when the topology does not set the
/// field itself. Fields the topology sets are written after this, as they were before patching.
/// A field whose parent the patches made something other than an object is left as patched
/// (Cluster API fails the reconcile there).
fn keep_unpatched(spec: &mut Value, unpatched: &Value) {
    for path in PRESERVED {
        let Some((last, parents)) = path.split_last() else {
            continue;
        };
        let Some(value) = path.iter().try_fold(unpatched, |node, key| node.get(key)) else {
            continue;
        };
        let mut target = spec.as_object_mut();
        for key in parents {
            target = target.and_then(|map| {
                map.entry(*key)
                    .or_insert_with(|| Value::Object(Map::new()))
                    .as_object_mut()
            });
        }
        if let Some(map) = target {
            map.insert((*last).to_owned(), value.clone());
        }
    }
}

/// `machineTemplate.spec` of a v1beta2-contract control plane, made an object if it is not one.
fn machine_spec(machine: &mut Value) -> &mut Value {
    if !machine["spec"].is_object() {
        machine["spec"] = json!({});
    }
    &mut machine["spec"]
}

/// A v1beta1-contract control plane's `machineTemplate.node*Timeout`, as durations (`10m0s`).
fn set_v1beta1_timeouts(machine: &mut Value, timeouts: &MachineDeletionSpec) {
    for (key, seconds) in [
        ("nodeDrainTimeout", timeouts.node_drain_timeout_seconds),
        (
            "nodeVolumeDetachTimeout",
            timeouts.node_volume_detach_timeout_seconds,
        ),
        ("nodeDeletionTimeout", timeouts.node_deletion_timeout_seconds),
    ] {
        set_opt(machine, key, json!(seconds.map(|s| go_duration(i64::from(s)))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A control plane without infrastructure machines (`template` has no `machineTemplate`).
    fn planned(class: &str, topology: &str, v1beta1_contract: bool, rollout_after: Option<&str>) -> Value {
        let template = json!({
            "apiVersion": "controlplane.example.com/v1beta2",
            "kind": "HostedControlPlaneTemplate",
            "metadata": {"name": "hosted", "namespace": "ns"},
            "spec": {"template": {"spec": {"region": "eu"}}},
        });
        let class: ControlPlaneClass = serde_yaml_ng::from_str(class).unwrap();
        let topology: ControlPlaneTopology = serde_yaml_ng::from_str(topology).unwrap();
        desired(&ControlPlaneInput {
            template: &template,
            unpatched: &template,
            name: "dev",
            namespace: "ns",
            cluster: "dev",
            version: "v1.33.0",
            rollout_after,
            v1beta1_contract,
            class: &class,
            topology: &topology,
            machine_infrastructure: None,
        })
    }

    const CLASS: &str = "{templateRef: {apiVersion: controlplane.example.com/v1beta2, kind: HostedControlPlaneTemplate, name: hosted},
        taints: [{key: example.com/class, effect: NoSchedule, propagation: Always}],
        deletion: {nodeDrainTimeoutSeconds: 60}}";

    #[test]
    fn taints_and_timeouts_reach_a_control_plane_without_infrastructure_machines() {
        let cp = planned(CLASS, "{}", false, None);
        let spec = &cp["spec"]["machineTemplate"]["spec"];
        assert_eq!(spec["taints"][0]["key"], "example.com/class");
        assert_eq!(spec["deletion"]["nodeDrainTimeoutSeconds"], 60);
        assert_eq!(cp["spec"]["machineTemplate"].get("infrastructureRef"), None);
        let own =
            "{taints: [{key: example.com/own, value: x, effect: NoExecute, propagation: OnInitialization}]}";
        let cp = planned(CLASS, own, true, None);
        let machine = &cp["spec"]["machineTemplate"];
        assert_eq!(
            machine["taints"],
            json!([{"key": "example.com/own", "value": "x", "effect": "NoExecute", "propagation": "OnInitialization"}])
        );
        assert_eq!(machine["nodeDrainTimeout"], "1m0s");
        assert_eq!(machine.get("spec"), None);
    }

    #[test]
    fn nothing_to_carry_leaves_machine_template_out() {
        let bare = "{templateRef: {apiVersion: controlplane.example.com/v1beta2, kind: HostedControlPlaneTemplate, name: hosted}}";
        for v1beta1_contract in [false, true] {
            let cp = planned(bare, "{}", v1beta1_contract, None);
            assert_eq!(cp["spec"].get("machineTemplate"), None, "{cp}");
            assert_eq!(cp["spec"]["region"], "eu");
        }
    }

    #[test]
    fn the_topologys_rollout_after_wins_over_the_v1beta1_one() {
        let v1beta1 = Some("2026-01-01T00:00:00Z");
        let cp = planned(CLASS, "{}", false, v1beta1);
        assert_eq!(cp["spec"]["rollout"], json!({"after": "2026-01-01T00:00:00Z"}));
        let cp = planned(CLASS, "{rollout: {after: '2026-02-01T00:00:00Z'}}", true, v1beta1);
        assert_eq!(cp["spec"]["rollout"], json!({"after": "2026-02-01T00:00:00Z"}));
        assert_eq!(planned(CLASS, "{}", false, None)["spec"].get("rollout"), None);
    }
}
