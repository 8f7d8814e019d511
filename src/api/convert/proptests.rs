//! Property tests: round trips over generated objects. Spokes are generated in the normal form
//! a v1beta1 server writes (refs in the object's namespace, no empty strings or empty structs),
//! but with durations in any spelling a user writes (`90s` as well as `1m30s`), so that spoke →
//! hub → spoke must give the input back (less the conversion-data), exactly as written; hubs are the converted spokes plus the `*bool` intent and hub-only
//! fields v1beta1 cannot carry, so that hub → spoke → hub must give the input back.

use proptest::option::of;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{json, Map, Value};

use super::tests::{crds, Crds};
use super::{convert, duration, from_hub, to_hub, CONVERSION_DATA};

pub(super) const NAMESPACE: &str = "ns1";

pub(super) fn name() -> impl Strategy<Value = String> {
    select(vec!["a", "b", "web", "md-0", "pool-1", "x-y"]).prop_map(str::to_owned)
}

pub(super) fn text() -> impl Strategy<Value = String> {
    select(vec!["v", "some text", "40%", "{{ .cluster.name }}-x", "[1-3]"]).prop_map(str::to_owned)
}

/// A duration as a GitOps user may write it: as Go prints it (`1m30s`) or in another spelling of
/// the same whole seconds (`90s`, `90000ms`, `1.5m`, `90s5ms`, `0`), which must read back as written.
pub(super) fn duration() -> impl Strategy<Value = Value> {
    (0i64..200_000, 0usize..6).prop_map(|(s, form)| {
        let text = match form {
            1 => format!("{s}s"),
            2 => format!("{}ms", s * 1000),
            3 if s % 60 == 30 => format!("{}.5m", s / 60),
            3 if s % 3600 == 0 => format!("{}h", s / 3600),
            4 => format!("{s}s5ms"),
            5 if s == 0 => "0".to_owned(),
            _ => duration::from_seconds(s),
        };
        Value::String(text)
    })
}

pub(super) fn time() -> impl Strategy<Value = Value> {
    select(vec!["2026-01-01T00:00:00Z", "2026-07-30T12:30:00Z"]).prop_map(|t| json!(t))
}

/// An object from optional fields: absent ones are left out.
pub(super) fn obj(fields: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_owned(), v?)))
            .collect::<Map<_, _>>(),
    )
}

/// `value` unless it is an empty object, then `fallback`.
pub(super) fn non_empty(value: Value, fallback: (&str, Value)) -> Value {
    match value {
        Value::Object(mut o) if o.is_empty() => {
            o.insert(fallback.0.to_owned(), fallback.1);
            Value::Object(o)
        }
        other => other,
    }
}

fn condition() -> impl Strategy<Value = Value> {
    (
        select(vec!["Ready", "Available"]),
        select(vec!["True", "False", "Unknown"]),
        time(),
        of(text()),
    )
        .prop_map(|(t, s, when, reason)| {
            obj(vec![
                ("type", Some(json!(t))),
                ("status", Some(json!(s))),
                ("reason", reason.map(Value::from)),
                ("lastTransitionTime", Some(when)),
            ])
        })
}

pub(super) fn conditions() -> impl Strategy<Value = Option<Value>> {
    of(prop::collection::vec(condition(), 1..3).prop_map(Value::from))
}

/// A v1beta1 contract reference whose CRD [`crds`] knows.
fn contract_ref() -> impl Strategy<Value = Value> {
    (select(vec![
        ("infrastructure.cluster.x-k8s.io/v1beta2", "DockerCluster"),
        ("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"),
    ]), name())
        .prop_map(|((api_version, kind), name)| {
            json!({"apiVersion": api_version, "kind": kind, "namespace": NAMESPACE, "name": name})
        })
}

pub(super) fn template_ref() -> impl Strategy<Value = Value> {
    (select(vec!["infrastructure.cluster.x-k8s.io/v1beta1", "bootstrap.cluster.x-k8s.io/v1beta2"]), select(vec!["DockerMachineTemplate", "KubeadmConfigTemplate"]), name())
        .prop_map(|(api_version, kind, name)| json!({"apiVersion": api_version, "kind": kind, "namespace": NAMESPACE, "name": name}))
}

fn unhealthy_conditions() -> impl Strategy<Value = Option<Value>> {
    of(prop::collection::vec(
        (
            select(vec!["Ready", "DiskPressure"]),
            select(vec!["False", "Unknown"]),
            duration(),
        )
            .prop_map(|(t, s, d)| json!({"type": t, "status": s, "timeout": d})),
        1..3,
    )
    .prop_map(Value::from))
}

/// A v1beta1 machineHealthCheck; `enable` only in a topology.
pub(super) fn health_check(topology: bool) -> impl Strategy<Value = Value> {
    (
        of(any::<bool>()).prop_map(move |e| e.filter(|_| topology)),
        unhealthy_conditions(),
        unhealthy_conditions(),
        of(duration()),
        of(select(vec![json!("40%"), json!(3)])),
        of(text()),
        of(template_ref()),
    )
        .prop_map(|(enable, node, machine, startup, max, range, template)| {
            non_empty(
                obj(vec![
                    ("enable", enable.map(Value::from)),
                    ("unhealthyConditions", node),
                    ("unhealthyMachineConditions", machine),
                    ("nodeStartupTimeout", startup),
                    ("maxUnhealthy", max),
                    ("unhealthyRange", range.map(Value::from)),
                    ("remediationTemplate", template),
                ]),
                ("nodeStartupTimeout", json!("10m0s")),
            )
        })
}

pub(super) fn strategy() -> impl Strategy<Value = Value> {
    (
        of(select(vec!["RollingUpdate", "OnDelete"])),
        of((
            of(select(vec![json!(1), json!("25%")])),
            of(select(vec![json!(0), json!("10%")])),
            of(select(vec!["Random", "Newest", "Oldest"])),
        )),
        of(select(vec![json!(1), json!("50%")])),
    )
        .prop_map(|(kind, rolling, max_in_flight)| {
            let rolling = rolling.map(|(surge, unavailable, policy)| {
                non_empty(
                    obj(vec![
                        ("maxSurge", surge),
                        ("maxUnavailable", unavailable),
                        ("deletePolicy", policy.map(Value::from)),
                    ]),
                    ("maxSurge", json!(1)),
                )
            });
            let remediation = max_in_flight.map(|m| json!({"maxInFlight": m}));
            non_empty(
                obj(vec![
                    ("type", kind.map(Value::from)),
                    ("rollingUpdate", rolling),
                    ("remediation", remediation),
                ]),
                ("type", json!("RollingUpdate")),
            )
        })
}

pub(super) fn timeouts() -> impl Strategy<Value = Vec<(&'static str, Option<Value>)>> {
    (of(duration()), of(duration()), of(duration())).prop_map(|(drain, detach, delete)| {
        vec![
            ("nodeDrainTimeout", drain),
            ("nodeVolumeDetachTimeout", detach),
            ("nodeDeletionTimeout", delete),
        ]
    })
}

fn variables(with_from: bool) -> impl Strategy<Value = Option<Value>> {
    of(prop::collection::vec(
        (
            name(),
            select(vec![json!("x"), json!(3), json!({"a": [1, 2]})]),
            of(name()),
        )
            .prop_map(move |(n, v, from)| {
                obj(vec![
                    ("name", Some(json!(n))),
                    ("value", Some(v)),
                    ("definitionFrom", from.filter(|_| with_from).map(Value::from)),
                ])
            }),
        1..3,
    )
    .prop_map(Value::from))
}

fn machine_deployment() -> impl Strategy<Value = Value> {
    (
        name(),
        name(),
        of(0i64..5),
        of(text()),
        of(health_check(true)),
        of(strategy()),
        timeouts(),
        variables(true),
        of(time()),
        of(0i64..60),
    )
        .prop_map(
            |(class, name, replicas, fd, mhc, strategy, timeouts, overrides, after, min_ready)| {
                let mut fields = vec![
                    ("class", Some(json!(class))),
                    ("name", Some(json!(name))),
                    ("replicas", replicas.map(Value::from)),
                    ("failureDomain", fd.map(Value::from)),
                    ("machineHealthCheck", mhc),
                    ("strategy", strategy),
                    ("variables", overrides.map(|o| json!({"overrides": o}))),
                    ("rollout", after.map(|a| json!({"after": a}))),
                    ("minReadySeconds", min_ready.map(Value::from)),
                ];
                fields.extend(timeouts);
                obj(fields)
            },
        )
}

fn machine_pool() -> impl Strategy<Value = Value> {
    (
        name(),
        name(),
        of(0i64..5),
        timeouts(),
        variables(true),
        of(prop::collection::vec(name(), 1..3)),
    )
        .prop_map(|(class, name, replicas, timeouts, overrides, fds)| {
            let mut fields = vec![
                ("class", Some(json!(class))),
                ("name", Some(json!(name))),
                ("replicas", replicas.map(Value::from)),
                ("variables", overrides.map(|o| json!({"overrides": o}))),
                ("failureDomains", fds.map(Value::from)),
            ];
            fields.extend(timeouts);
            obj(fields)
        })
}

fn topology() -> impl Strategy<Value = Value> {
    (
        name(),
        of(name()),
        of(time()),
        variables(true),
        of((of(1i64..5), of(health_check(true)), timeouts(), variables(true))),
        of((
            of(prop::collection::vec(machine_deployment(), 1..3)),
            of(prop::collection::vec(machine_pool(), 1..3)),
        )),
    )
        .prop_map(|(class, class_ns, after, variables, control_plane, workers)| {
            let control_plane = control_plane.map(|(replicas, mhc, timeouts, overrides)| {
                let mut fields = vec![
                    ("replicas", replicas.map(Value::from)),
                    ("machineHealthCheck", mhc),
                    ("variables", overrides.map(|o| json!({"overrides": o}))),
                ];
                fields.extend(timeouts);
                non_empty(obj(fields), ("replicas", json!(1)))
            });
            let workers = workers.map(|(mds, mps)| {
                non_empty(
                    obj(vec![
                        ("machineDeployments", mds.map(Value::from)),
                        ("machinePools", mps.map(Value::from)),
                    ]),
                    ("machinePools", json!([{"class": "p", "name": "p"}])),
                )
            });
            obj(vec![
                ("class", Some(json!(class))),
                ("classNamespace", class_ns.map(Value::from)),
                ("version", Some(json!("v1.33.0"))),
                ("rolloutAfter", after),
                ("variables", variables),
                ("controlPlane", control_plane),
                ("workers", workers),
            ])
        })
}

fn cluster_status() -> impl Strategy<Value = Value> {
    (
        any::<bool>(),
        any::<bool>(),
        conditions(),
        of(text()),
        of(prop::collection::btree_map(
            name(),
            (any::<bool>(), of(Just(json!({"zone": "z"})))),
            1..3,
        )),
        of((conditions(), of((0i64..5, 0i64..5)), of(0i64..5))),
        of(select(vec!["Provisioned", "Provisioning"])),
    )
        .prop_map(|(infra, cp, legacy, reason, domains, v1beta2, phase)| {
            let domains = domains.map(|d| {
                Value::Object(
                    d.into_iter()
                        .map(|(n, (control_plane, attributes))| {
                            (
                                n,
                                obj(vec![
                                    ("controlPlane", control_plane.then_some(json!(true))),
                                    ("attributes", attributes),
                                ]),
                            )
                        })
                        .collect(),
                )
            });
            let v1beta2 = v1beta2.map(|(conditions, cp, workers)| {
                non_empty(
                    obj(vec![
                        ("conditions", conditions),
                        (
                            "controlPlane",
                            cp.map(|(d, r)| json!({"desiredReplicas": d, "replicas": r})),
                        ),
                        ("workers", workers.map(|r| json!({"replicas": r}))),
                    ]),
                    ("workers", json!({"replicas": 1})),
                )
            });
            obj(vec![
                ("infrastructureReady", Some(json!(infra))),
                ("controlPlaneReady", Some(json!(cp))),
                ("conditions", legacy),
                ("failureReason", reason.clone().map(Value::from)),
                ("failureMessage", reason.map(Value::from)),
                ("failureDomains", domains),
                ("v1beta2", v1beta2),
                ("phase", phase.map(Value::from)),
            ])
        })
}

/// A v1beta1 Cluster in normal form.
fn cluster_v1beta1() -> impl Strategy<Value = Value> {
    (
        name(),
        of(Just(true)),
        of(contract_ref()),
        of(contract_ref()),
        of(topology()),
        cluster_status().prop_map(Some),
        of(1i64..65535),
    )
        .prop_map(|(name, paused, infra, cp, topology, status, port)| {
            obj(vec![
                ("apiVersion", Some(json!("cluster.x-k8s.io/v1beta1"))),
                ("kind", Some(json!("Cluster"))),
                ("metadata", Some(json!({"name": name, "namespace": NAMESPACE}))),
                (
                    "spec",
                    Some(obj(vec![
                        ("paused", paused.map(Value::from)),
                        ("infrastructureRef", infra),
                        ("controlPlaneRef", cp),
                        ("clusterNetwork", port.map(|p| json!({"apiServerPort": p}))),
                        ("topology", topology),
                    ])),
                ),
                ("status", status),
            ])
        })
}

pub(super) fn without_data(mut object: Value) -> Value {
    let metadata = object["metadata"].as_object_mut().expect("metadata");
    if let Some(annotations) = metadata.get_mut("annotations").and_then(Value::as_object_mut) {
        annotations.remove(CONVERSION_DATA);
        if annotations.is_empty() {
            metadata.remove("annotations");
        }
    }
    object
}

/// Adds to a hub what only v1beta2 can say: `false` intent and hub-only fields.
fn hub_extras(mut hub: Value, paused_false: bool, cp_false: bool, taints: bool) -> Value {
    let spec = hub["spec"].as_object_mut().expect("spec");
    if paused_false && !spec.contains_key("paused") {
        spec.insert("paused".into(), json!(false));
    }
    if taints {
        if let Some(cp) = hub
            .pointer_mut("/spec/topology/controlPlane")
            .and_then(Value::as_object_mut)
        {
            cp.insert(
                "taints".into(),
                json!([{"key": "k", "effect": "NoSchedule", "propagation": "Always"}]),
            );
            cp.insert("rollout".into(), json!({"after": "2026-01-01T00:00:00Z"}));
        }
    }
    if cp_false {
        if let Some(status) = hub.get_mut("status").and_then(Value::as_object_mut) {
            let init = status.entry("initialization").or_insert(json!({}));
            if init.get("controlPlaneInitialized").is_none() {
                init["controlPlaneInitialized"] = json!(false);
            }
        }
    }
    hub
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn cluster_spoke_hub_spoke(spoke in cluster_v1beta1()) {
        let versions = crds();
        let hub = to_hub(spoke.clone()).expect("to hub");
        let back = from_hub(hub, "cluster.x-k8s.io/v1beta1", &versions).expect("from hub");
        prop_assert_eq!(without_data(back), spoke);
    }

    #[test]
    fn cluster_hub_spoke_hub(spoke in cluster_v1beta1(), paused in any::<bool>(), cp in any::<bool>(), taints in any::<bool>()) {
        let versions = crds();
        let hub = hub_extras(to_hub(spoke).expect("to hub"), paused, cp, taints);
        let back = convert(convert(hub.clone(), "cluster.x-k8s.io/v1beta1", &versions).expect("to spoke"), "cluster.x-k8s.io/v1beta2", &versions).expect("to hub");
        prop_assert_eq!(back, hub);
    }

    #[test]
    fn missing_crds_fail_only_with_refs(spoke in cluster_v1beta1()) {
        let has_refs = spoke["spec"].get("infrastructureRef").is_some() || spoke["spec"].get("controlPlaneRef").is_some();
        let hub = to_hub(spoke).expect("to hub");
        let result = from_hub(hub, "cluster.x-k8s.io/v1beta1", &Crds(vec![]));
        prop_assert_eq!(result.is_err(), has_refs);
    }
}
