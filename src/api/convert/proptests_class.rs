//! Property tests of ClusterClass round trips (see `proptests` for the normal forms).

use proptest::option::of;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{json, Value};

use super::proptests::{
    conditions, health_check, name, non_empty, obj, strategy, template_ref, text, timeouts, without_data,
};
use super::{from_hub, to_hub};
use crate::api::convert::tests::Crds;

fn schema(depth: u32) -> BoxedStrategy<Value> {
    let leaf = (
        select(vec!["string", "integer", "object", "array"]),
        of(Just(true)),
        of(Just(true)),
        of(Just(true)),
    )
        .prop_map(|(kind, unique, minimum, int_or_string)| {
            obj(vec![
                ("type", Some(json!(kind))),
                ("uniqueItems", unique.map(Value::from)),
                ("exclusiveMinimum", minimum.map(Value::from)),
                ("x-kubernetes-int-or-string", int_or_string.map(Value::from)),
            ])
        });
    if depth == 0 {
        return leaf.boxed();
    }
    (
        leaf,
        of(prop::collection::btree_map(name(), schema(depth - 1), 1..3)),
        of(schema(depth - 1)),
        of(Just(true)),
    )
        .prop_map(|(mut base, properties, items, preserve)| {
            let base_obj = base.as_object_mut().expect("an object");
            if let Some(properties) = properties {
                base_obj.insert("properties".into(), json!(properties));
            }
            if let Some(items) = items {
                base_obj.insert("items".into(), items);
            }
            if let Some(preserve) = preserve {
                base_obj.insert("x-kubernetes-preserve-unknown-fields".into(), json!(preserve));
            }
            base
        })
        .boxed()
}

fn metadata() -> impl Strategy<Value = Option<Value>> {
    of(name().prop_map(|n| json!({"labels": {"role": n}})))
}

fn variables() -> impl Strategy<Value = Option<Value>> {
    of(
        prop::collection::vec((any::<bool>(), metadata(), schema(2)), 1..3).prop_map(|vars| {
            Value::from(
                vars.into_iter()
                    .enumerate()
                    .map(|(i, (required, metadata, schema))| {
                        obj(vec![
                            ("name", Some(json!(format!("v{i}")))),
                            ("required", Some(json!(required))),
                            ("metadata", metadata),
                            ("schema", Some(json!({"openAPIV3Schema": schema}))),
                        ])
                    })
                    .collect::<Vec<_>>(),
            )
        }),
    )
}

fn template() -> impl Strategy<Value = Option<Value>> {
    (metadata(), of(template_ref()), of(template_ref())).prop_map(|(metadata, bootstrap, infra)| {
        let template = obj(vec![
            ("metadata", metadata),
            ("bootstrap", bootstrap.map(|r| json!({"ref": r}))),
            ("infrastructure", infra.map(|r| json!({"ref": r}))),
        ]);
        Some(template).filter(|t| t.as_object().is_some_and(|o| !o.is_empty()))
    })
}

fn naming() -> impl Strategy<Value = Option<Value>> {
    of(text().prop_map(|t| json!({"template": t})))
}

fn machine_deployment_class() -> impl Strategy<Value = Value> {
    (
        name(),
        template(),
        naming(),
        timeouts(),
        of(health_check(false)),
        of(strategy()),
        of(text()),
        of(0i64..60),
    )
        .prop_map(
            |(class, template, naming, timeouts, mhc, strategy, fd, min_ready)| {
                let mut fields = vec![
                    ("class", Some(json!(class))),
                    ("template", template),
                    ("namingStrategy", naming),
                    ("machineHealthCheck", mhc),
                    ("strategy", strategy),
                    ("failureDomain", fd.map(Value::from)),
                    ("minReadySeconds", min_ready.map(Value::from)),
                ];
                fields.extend(timeouts);
                obj(fields)
            },
        )
}

fn machine_pool_class() -> impl Strategy<Value = Value> {
    (
        name(),
        template(),
        naming(),
        timeouts(),
        of(prop::collection::vec(name(), 1..3)),
    )
        .prop_map(|(class, template, naming, timeouts, fds)| {
            let mut fields = vec![
                ("class", Some(json!(class))),
                ("template", template),
                ("namingStrategy", naming),
                ("failureDomains", fds.map(Value::from)),
            ];
            fields.extend(timeouts);
            obj(fields)
        })
}

fn patches() -> impl Strategy<Value = Option<Value>> {
    let definition = (of(Just(true)), of(Just(true)), of(text()), of(text())).prop_map(|(cp, infra, variable, template)| {
        let value_from = obj(vec![("variable", variable.map(Value::from)), ("template", template.map(Value::from))]);
        json!({
            "selector": {
                "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
                "kind": "KubeadmControlPlaneTemplate",
                "matchResources": obj(vec![("controlPlane", cp.map(Value::from)), ("infrastructureCluster", infra.map(Value::from))]),
            },
            "jsonPatches": [obj(vec![("op", Some(json!("add"))), ("path", Some(json!("/spec/x"))), ("valueFrom", Some(value_from).filter(|v| v.as_object().is_some_and(|o| !o.is_empty())))])],
        })
    });
    let external = (of(name()), of(name()), of(name())).prop_map(|(generate, validate, discover)| {
        non_empty(
            obj(vec![
                ("generateExtension", generate.map(Value::from)),
                ("validateExtension", validate.map(Value::from)),
                ("discoverVariablesExtension", discover.map(Value::from)),
            ]),
            ("generateExtension", json!("gen")),
        )
    });
    of(prop::collection::vec(
        (
            of(text()),
            of(prop::collection::vec(definition, 1..3)),
            of(external),
        ),
        1..3,
    )
    .prop_map(|patches| {
        Value::from(
            patches
                .into_iter()
                .enumerate()
                .map(|(i, (enabled_if, definitions, external))| {
                    obj(vec![
                        ("name", Some(json!(format!("p{i}")))),
                        ("enabledIf", enabled_if.map(Value::from)),
                        ("definitions", definitions.map(Value::from)),
                        ("external", external),
                    ])
                })
                .collect::<Vec<_>>(),
        )
    }))
}

fn status() -> impl Strategy<Value = Value> {
    let definitions = prop::collection::vec((any::<bool>(), metadata(), schema(1)), 1..3);
    (of(0i64..9), conditions(), conditions(), of(prop::collection::vec((any::<bool>(), definitions), 1..3))).prop_map(
        |(generation, legacy, current, variables)| {
            let variables = variables.map(|vars| {
                Value::from(
                    vars.into_iter()
                        .enumerate()
                        .map(|(i, (conflict, defs))| {
                            let defs: Vec<Value> = defs
                                .into_iter()
                                .enumerate()
                                .map(|(j, (required, metadata, schema))| {
                                    obj(vec![
                                        ("from", Some(json!(format!("from-{j}")))),
                                        ("required", Some(json!(required))),
                                        ("metadata", metadata),
                                        ("schema", Some(json!({"openAPIV3Schema": schema}))),
                                    ])
                                })
                                .collect();
                            json!({"name": format!("v{i}"), "definitionsConflict": conflict, "definitions": defs})
                        })
                        .collect::<Vec<_>>(),
                )
            });
            non_empty(
                obj(vec![
                    ("observedGeneration", generation.map(Value::from)),
                    ("conditions", legacy),
                    ("v1beta2", current.map(|c| json!({"conditions": c}))),
                    ("variables", variables),
                ]),
                ("observedGeneration", json!(1)),
            )
        },
    )
}

/// A v1beta1 ClusterClass in normal form.
fn cluster_class_v1beta1() -> impl Strategy<Value = Value> {
    let control_plane = (
        of(template_ref()),
        of(template_ref()),
        naming(),
        timeouts(),
        of(health_check(false)),
        metadata(),
    )
        .prop_map(|(reference, machine_infra, naming, timeouts, mhc, metadata)| {
            let mut fields = vec![
                ("ref", reference),
                ("machineInfrastructure", machine_infra.map(|r| json!({"ref": r}))),
                ("namingStrategy", naming),
                ("machineHealthCheck", mhc),
                ("metadata", metadata),
            ];
            fields.extend(timeouts);
            non_empty(obj(fields), ("metadata", json!({"labels": {"a": "b"}})))
        });
    let workers = (
        of(prop::collection::vec(machine_deployment_class(), 1..3)),
        of(prop::collection::vec(machine_pool_class(), 1..3)),
    )
        .prop_map(|(mds, pools)| {
            non_empty(
                obj(vec![
                    ("machineDeployments", mds.map(Value::from)),
                    ("machinePools", pools.map(Value::from)),
                ]),
                ("machineDeployments", json!([{"class": "c"}])),
            )
        });
    (
        of(template_ref()),
        naming(),
        of(control_plane),
        of(workers),
        variables(),
        patches(),
        of(status()),
    )
        .prop_map(
            |(infra, infra_naming, control_plane, workers, variables, patches, status)| {
                obj(vec![
                    ("apiVersion", Some(json!("cluster.x-k8s.io/v1beta1"))),
                    ("kind", Some(json!("ClusterClass"))),
                    (
                        "metadata",
                        Some(json!({"name": "class", "namespace": super::proptests::NAMESPACE})),
                    ),
                    (
                        "spec",
                        Some(obj(vec![
                            ("infrastructure", infra.map(|r| json!({"ref": r}))),
                            ("infrastructureNamingStrategy", infra_naming),
                            ("controlPlane", control_plane),
                            ("workers", workers),
                            ("variables", variables),
                            ("patches", patches),
                        ])),
                    ),
                    ("status", status),
                ])
            },
        )
}

/// Sets `false` where the hub may say it and v1beta1 cannot, everywhere `key` is absent.
fn add_false(value: &mut Value, keys: &[&str], parents: &[&str]) {
    match value {
        Value::Object(obj) => {
            for (k, v) in obj.iter_mut() {
                if parents.contains(&k.as_str()) {
                    if let Some(inner) = v.as_object_mut() {
                        for key in keys {
                            inner.entry(*key).or_insert(json!(false));
                        }
                    }
                }
                add_false(v, keys, parents);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| add_false(v, keys, parents)),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn cluster_class_spoke_hub_spoke(spoke in cluster_class_v1beta1()) {
        let hub = to_hub(spoke.clone()).expect("to hub");
        let back = from_hub(hub, "cluster.x-k8s.io/v1beta1", &Crds(vec![])).expect("from hub");
        prop_assert_eq!(without_data(back), spoke);
    }

    #[test]
    fn cluster_class_hub_spoke_hub(spoke in cluster_class_v1beta1(), intent in any::<bool>()) {
        let mut hub = to_hub(spoke).expect("to hub");
        if intent {
            add_false(&mut hub, &["controlPlane", "infrastructureCluster"], &["matchResources"]);
            add_false(&mut hub, &["uniqueItems", "exclusiveMaximum"], &["openAPIV3Schema"]);
            if let Some(vars) = hub.pointer_mut("/status/variables").and_then(Value::as_array_mut) {
                for var in vars.iter_mut().filter_map(Value::as_object_mut) {
                    var.entry("definitionsConflict").or_insert(json!(false));
                }
            }
            hub["spec"]["kubernetesVersions"] = json!(["v1.32.0", "v1.33.0"]);
        }
        let spoke = from_hub(hub.clone(), "cluster.x-k8s.io/v1beta1", &Crds(vec![])).expect("to spoke");
        prop_assert_eq!(to_hub(spoke).expect("to hub"), hub);
    }
}
