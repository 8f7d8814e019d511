//! Property tests of MachineDeployment, MachineSet and MachinePool, as `proptests.rs` does for
//! Cluster: spokes in the normal form a v1beta1 server writes (every always-written counter and
//! boolean of a status present, durations as Go prints them, refs in the object's namespace at
//! the version the CRD serves) must come back from the hub unchanged, less the conversion-data;
//! hubs (converted spokes plus what only v1beta2 says: `false` and `0` intent, missing counters)
//! must come back from the spoke unchanged.

use proptest::option::of;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{json, Value};

use super::proptests::{
    conditions, name, non_empty, obj, strategy, text, time, timeouts, without_data, NAMESPACE,
};
use super::tests::crds;
use super::{convert, from_hub, to_hub};

const SPOKE: &str = "cluster.x-k8s.io/v1beta1";
const HUB: &str = "cluster.x-k8s.io/v1beta2";

/// A v1beta1 reference to `group`'s `kind`, at the version [`crds`] answers with.
fn reference(group: &'static str, kind: &'static str) -> impl Strategy<Value = Value> {
    name().prop_map(move |n| {
        json!({"apiVersion": format!("{group}/v1beta2"), "kind": kind, "namespace": NAMESPACE, "name": n})
    })
}

/// A Machine template (`metadata` and `spec`) whose references point at the given kinds.
fn template(bootstrap: &'static str, infrastructure: &'static str) -> BoxedStrategy<Value> {
    (
        of(name()),
        of(select(vec!["v1.33.0", "v1.34.1"])),
        of(name()),
        of(text()),
        of((of(reference("bootstrap.cluster.x-k8s.io", bootstrap)), of(name()))),
        reference("infrastructure.cluster.x-k8s.io", infrastructure),
        timeouts(),
        of(Just(json!([{"conditionType": "Custom"}]))),
    )
        .prop_map(|(label, version, fd, provider, boot, infra, timeouts, gates)| {
            let bootstrap = boot.map(|(config, secret)| {
                non_empty(
                    obj(vec![
                        ("configRef", config),
                        ("dataSecretName", secret.map(Value::from)),
                    ]),
                    ("dataSecretName", json!("s")),
                )
            });
            let mut fields = vec![
                ("clusterName", Some(json!("c1"))),
                ("version", version.map(Value::from)),
                ("failureDomain", fd.map(Value::from)),
                ("providerID", provider.map(Value::from)),
                ("bootstrap", bootstrap),
                ("infrastructureRef", Some(infra)),
                ("readinessGates", gates),
            ];
            fields.extend(timeouts);
            obj(vec![
                ("metadata", label.map(|l| json!({"labels": {"pool": l}}))),
                ("spec", Some(obj(fields))),
            ])
        })
        .boxed()
}

/// `status.v1beta2` of the three kinds.
fn v1beta2_status() -> impl Strategy<Value = Option<Value>> {
    of(
        (conditions(), of(0i64..5), of(0i64..5), of(0i64..5)).prop_map(|(c, r, a, u)| {
            non_empty(
                obj(vec![
                    ("conditions", c),
                    ("readyReplicas", r.map(Value::from)),
                    ("availableReplicas", a.map(Value::from)),
                    ("upToDateReplicas", u.map(Value::from)),
                ]),
                ("readyReplicas", json!(1)),
            )
        }),
    )
}

fn object(kind: &str, name: String, spec: Value, status: Value) -> Value {
    json!({"apiVersion": SPOKE, "kind": kind, "metadata": {"name": name, "namespace": NAMESPACE},
           "spec": spec, "status": status})
}

fn machine_deployment() -> impl Strategy<Value = Value> {
    let spec = (
        of(0i64..5),
        of(time()),
        template("KubeadmConfigTemplate", "DockerMachineTemplate"),
        of(strategy()),
        of(text()),
        of(0i64..60),
        of(0i64..10),
        of(Just(true)),
        of(0i64..900),
    )
        .prop_map(
            |(replicas, after, template, strategy, naming, min, history, paused, deadline)| {
                obj(vec![
                    ("clusterName", Some(json!("c1"))),
                    ("replicas", replicas.map(Value::from)),
                    ("rolloutAfter", after),
                    ("selector", Some(json!({"matchLabels": {"pool": "a"}}))),
                    ("template", Some(template)),
                    ("strategy", strategy),
                    ("machineNamingStrategy", naming.map(|t| json!({"template": t}))),
                    ("minReadySeconds", min.map(Value::from)),
                    ("revisionHistoryLimit", history.map(Value::from)),
                    ("paused", paused.map(Value::from)),
                    ("progressDeadlineSeconds", deadline.map(Value::from)),
                ])
            },
        );
    let status = (
        prop::array::uniform5(0i64..5),
        of(1i64..9),
        of(select(vec!["Running", "ScalingUp"])),
        conditions(),
        v1beta2_status(),
    )
        .prop_map(
            |([replicas, updated, ready, available, unavailable], generation, phase, legacy, v1beta2)| {
                obj(vec![
                    ("replicas", Some(json!(replicas))),
                    ("updatedReplicas", Some(json!(updated))),
                    ("readyReplicas", Some(json!(ready))),
                    ("availableReplicas", Some(json!(available))),
                    ("unavailableReplicas", Some(json!(unavailable))),
                    ("observedGeneration", generation.map(Value::from)),
                    ("phase", phase.map(Value::from)),
                    ("conditions", legacy),
                    ("v1beta2", v1beta2),
                ])
            },
        );
    (name(), spec.boxed(), status.boxed())
        .prop_map(|(n, spec, status)| object("MachineDeployment", n, spec, status))
}

fn machine_set() -> impl Strategy<Value = Value> {
    let spec = (
        of(0i64..5),
        of(1i64..60),
        of(select(vec!["Random", "Newest", "Oldest"])),
        template("KubeadmConfigTemplate", "DockerMachineTemplate"),
        of(text()),
    )
        .prop_map(|(replicas, min, policy, template, naming)| {
            obj(vec![
                ("clusterName", Some(json!("c1"))),
                ("replicas", replicas.map(Value::from)),
                ("minReadySeconds", min.map(Value::from)),
                ("deletePolicy", policy.map(Value::from)),
                ("selector", Some(json!({"matchLabels": {"pool": "a"}}))),
                ("template", Some(template)),
                ("machineNamingStrategy", naming.map(|t| json!({"template": t}))),
            ])
        });
    let status = (
        prop::array::uniform4(0i64..5),
        of(text()),
        conditions(),
        v1beta2_status(),
    )
        .prop_map(
            |([replicas, labeled, ready, available], failure, legacy, v1beta2)| {
                obj(vec![
                    ("replicas", Some(json!(replicas))),
                    ("fullyLabeledReplicas", Some(json!(labeled))),
                    ("readyReplicas", Some(json!(ready))),
                    ("availableReplicas", Some(json!(available))),
                    ("failureReason", failure.clone().map(Value::from)),
                    ("failureMessage", failure.map(Value::from)),
                    ("conditions", legacy),
                    ("v1beta2", v1beta2),
                ])
            },
        );
    (name(), spec.boxed(), status.boxed()).prop_map(|(n, spec, status)| object("MachineSet", n, spec, status))
}

fn machine_pool() -> impl Strategy<Value = Value> {
    let spec = (
        of(0i64..5),
        template("KubeadmConfig", "DockerMachinePool"),
        of(0i64..60),
        of(prop::collection::vec(name(), 1..3)),
        of(prop::collection::vec(name(), 1..3)),
    )
        .prop_map(|(replicas, template, min, ids, fds)| {
            obj(vec![
                ("clusterName", Some(json!("c1"))),
                ("replicas", replicas.map(Value::from)),
                ("template", Some(template)),
                ("minReadySeconds", min.map(Value::from)),
                ("providerIDList", ids.map(Value::from)),
                ("failureDomains", fds.map(Value::from)),
            ])
        });
    let status = (
        (0i64..5, of(1i64..5), of(1i64..5), of(1i64..5)),
        (any::<bool>(), any::<bool>()),
        of(name()),
        of(text()),
        conditions(),
        v1beta2_status(),
    )
        .prop_map(
            |((replicas, ready, available, unavailable), (boot, infra), node, failure, legacy, v1beta2)| {
                obj(vec![
                    ("replicas", Some(json!(replicas))),
                    ("readyReplicas", ready.map(Value::from)),
                    ("availableReplicas", available.map(Value::from)),
                    ("unavailableReplicas", unavailable.map(Value::from)),
                    ("bootstrapReady", Some(json!(boot))),
                    ("infrastructureReady", Some(json!(infra))),
                    (
                        "nodeRefs",
                        node.map(|n| json!([{"apiVersion": "v1", "kind": "Node", "name": n}])),
                    ),
                    ("failureReason", failure.clone().map(Value::from)),
                    ("failureMessage", failure.map(Value::from)),
                    ("conditions", legacy),
                    ("v1beta2", v1beta2),
                ])
            },
        );
    (name(), spec.boxed(), status.boxed())
        .prop_map(|(n, spec, status)| object("MachinePool", n, spec, status))
}

fn any_machines() -> BoxedStrategy<Value> {
    prop_oneof![
        machine_deployment().boxed(),
        machine_set().boxed(),
        machine_pool().boxed()
    ]
    .boxed()
}

/// What only a hub can say, picked by `extras`: `paused: false`, a MachineSet's
/// `minReadySeconds: 0`, `initialization.*: false`, counters the hub does not have, no status.
fn hub_extras(mut hub: Value, extras: [bool; 5]) -> Value {
    let [paused, min_zero, init_false, drop_counters, no_status] = extras;
    let kind = hub["kind"].as_str().unwrap_or("").to_owned();
    let spec = hub["spec"].as_object_mut().expect("spec");
    if paused && kind == "MachineDeployment" && !spec.contains_key("paused") {
        spec.insert("paused".into(), json!(false));
    }
    if min_zero && kind == "MachineSet" {
        hub["spec"]["template"]["spec"]["minReadySeconds"] = json!(0);
    }
    let Some(status) = hub.get_mut("status").and_then(Value::as_object_mut) else {
        return hub;
    };
    if init_false && kind == "MachinePool" {
        let init = status.entry("initialization").or_insert(json!({}));
        for key in ["bootstrapDataSecretCreated", "infrastructureProvisioned"] {
            if init.get(key).is_none() {
                init[key] = json!(false);
            }
        }
    }
    if drop_counters {
        status.remove("replicas");
        if let Some(legacy) = status
            .get_mut("deprecated")
            .and_then(|d| d.get_mut("v1beta1"))
            .and_then(Value::as_object_mut)
        {
            legacy.remove("readyReplicas");
            legacy.remove("availableReplicas");
        }
    }
    // A status left empty by the dropped counters says nothing: the hub has none.
    let empty = hub["status"].as_object().is_some_and(|s| s.is_empty());
    if no_status || empty {
        hub.as_object_mut().map(|h| h.remove("status"));
    }
    hub
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn machines_spoke_hub_spoke(spoke in any_machines()) {
        let hub = to_hub(spoke.clone()).expect("to hub");
        let back = from_hub(hub, SPOKE, &crds()).expect("from hub");
        prop_assert_eq!(without_data(back), spoke);
    }

    #[test]
    fn machines_hub_spoke_hub(spoke in any_machines(), extras in prop::array::uniform5(any::<bool>())) {
        let versions = crds();
        let hub = hub_extras(to_hub(spoke).expect("to hub"), extras);
        let back = convert(convert(hub.clone(), SPOKE, &versions).expect("to spoke"), HUB, &versions).expect("to hub");
        prop_assert_eq!(back, hub);
    }
}
