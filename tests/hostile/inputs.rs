//! The regression catalogue of hostile inputs: every request that once crashed, stalled or
//! bloated the webhooks, and others of the same families, each with the answer it must get.
//! Bodies are built here rather than stored, so the catalogue stays small in the repository.

use std::path::Path;

use capi_topology::admission::{request::review_json, Kind};
use capi_topology::offline::apply::{apply, Verdict};
use capi_topology::store::{parse_manifests, MemoryStore};
use kube::core::admission::Operation;
use serde_json::{json, Value};

/// The ClusterClass validating webhook's path.
pub const VALIDATE_CLASS: &str = "/validate-cluster-x-k8s-io-v1beta1-clusterclass";
/// The Cluster mutating webhook's path.
pub const MUTATE_CLUSTER: &str = "/mutate-cluster-x-k8s-io-v1beta1-cluster";
/// The Cluster validating webhook's path.
pub const VALIDATE_CLUSTER: &str = "/validate-cluster-x-k8s-io-v1beta1-cluster";

/// The answer a hostile request must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Refused with this status code in the review.
    Refused(u16),
    /// Admitted (the input is large but legitimate, and must be answered in time).
    Allowed,
}

/// One catalogue entry.
pub struct Case {
    /// What the input is, as a test name.
    pub name: &'static str,
    /// The webhook it is sent to.
    pub path: &'static str,
    /// The AdmissionReview body.
    pub body: Vec<u8>,
    /// The answer it must get.
    pub expect: Expect,
    /// A phrase the answer's message must contain.
    pub message: &'static str,
}

/// Builds one case on demand, so that a run holds one hostile body at a time.
pub type Build = Box<dyn Fn() -> Case>;

/// Every case of the catalogue, each built when called.
pub fn catalogue() -> Vec<Build> {
    let mut cases = cel_cases();
    cases.extend(schema_cases());
    cases.extend(cluster_cases());
    cases.extend(wire_cases());
    cases.extend(v1beta1_fields_cases());
    cases
}

macro_rules! lazy {
    ($case:expr) => {
        Box::new(move || $case) as Build
    };
}

/// Objects the Cluster cases need: the quickstart class and Cluster, and a class whose variable
/// has a CEL rule that is cheap to estimate and very expensive to run.
pub fn store() -> MemoryStore {
    let mut store = MemoryStore::default();
    let mut objects = quickstart();
    objects.push(class_with_variable(
        "cel-bomb",
        // 500 items keep the estimate (about 4.5M) under the per-rule limit of 10M. The list is
        // a property: a list at a variable's root cannot have rules of its own.
        json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 500, "items": {"type": "integer"},
               "x-kubernetes-validations": [{"rule": "self.map(a, self.map(b, a + b)).all(l, l.all(x, x >= 0))",
                                             "message": "m"}]}}}),
    ));
    for object in objects {
        let applied = apply(&mut store, object, "catalogue", "2026-01-01T00:00:00Z").expect("applies");
        assert_ne!(applied.verdict, Verdict::Denied, "{}", applied.message);
    }
    store
}

fn quickstart() -> Vec<Value> {
    ["00-clusterclass.yaml", "10-cluster-dev.yaml"]
        .iter()
        .flat_map(|file| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples/quickstart")
                .join(file);
            parse_manifests(&std::fs::read_to_string(path).expect("quickstart")).expect("manifests")
        })
        .collect()
}

pub fn quickstart_of_kind(kind: &str) -> Value {
    quickstart()
        .into_iter()
        .find(|o| o["kind"] == kind)
        .expect("the quickstart has one")
}

/// The quickstart ClusterClass renamed, with one variable `v` of `schema`.
fn class_with_variable(name: &str, schema: Value) -> Value {
    let mut class = quickstart_of_kind("ClusterClass");
    class["metadata"]["name"] = json!(name);
    class["spec"]["variables"] =
        json!([{"name": "v", "required": false, "schema": {"openAPIV3Schema": schema}}]);
    // No patches (they use the quickstart's variables); an empty list is refused by the CRD's
    // `minItems`, so the field goes.
    if let Some(spec) = class["spec"].as_object_mut() {
        spec.remove("patches");
    }
    with_namespaced_refs(class)
}

/// `class` with every template reference in its own namespace, as the mutating webhook leaves
/// it, so the validating webhook judges only what a case is about.
fn with_namespaced_refs(mut class: Value) -> Value {
    let mut pending = vec![&mut class["spec"]];
    while let Some(node) = pending.pop() {
        match node {
            Value::Object(map) => {
                if map.contains_key("apiVersion") && map.contains_key("kind") && map.contains_key("name") {
                    map.insert("namespace".into(), json!("default"));
                }
                pending.extend(map.values_mut());
            }
            Value::Array(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
    class
}

fn create(kind: Kind, object: &Value) -> Vec<u8> {
    serde_json::to_vec(&review_json(kind, &Operation::Create, Some(object), None)).expect("encodes")
}

fn class_case(name: &'static str, schema: Value, expect: Expect, message: &'static str) -> Case {
    Case {
        name,
        path: VALIDATE_CLASS,
        body: create(Kind::ClusterClass, &class_with_variable("hostile", schema)),
        expect,
        message,
    }
}

fn rule(rule: String) -> Value {
    json!({"type": "integer", "x-kubernetes-validations": [{"rule": rule, "message": "m"}]})
}

fn cel_cases() -> Vec<Build> {
    const N: usize = 6_000;
    const INVALID: Expect = Expect::Refused(422);
    const DEEP: &str = "expression recursion limit exceeded: 250";
    vec![
        lazy!(class_case(
            "cel_sum_chain_12kb",
            rule(format!("self == {}", vec!["1"; N].join("+"))),
            INVALID,
            DEEP
        )),
        lazy!(class_case(
            "cel_parentheses",
            rule(format!("{}self{} == 1", "(".repeat(N), ")".repeat(N))),
            INVALID,
            DEEP
        )),
        lazy!(class_case(
            "cel_member_chain",
            rule(format!("self{} == 1", ".a".repeat(N))),
            INVALID,
            DEEP
        )),
        lazy!(class_case(
            "cel_nested_lists",
            rule(format!("{}1{} == self", "[".repeat(N), "]".repeat(N))),
            INVALID,
            DEEP
        )),
        lazy!(class_case(
            "cel_nested_maps",
            rule(format!("{}1{} == self", "{1:".repeat(N), "}".repeat(N))),
            INVALID,
            DEEP
        )),
        lazy!(class_case(
            "cel_nested_calls",
            rule(format!("{}self{} == 1", "int(".repeat(N), ")".repeat(N))),
            INVALID,
            DEEP
        )),
        lazy!(class_case(
            "cel_conditional_chain",
            rule(format!("{}true", "self > 0 ? true : ".repeat(5_000))),
            INVALID,
            DEEP
        )),
        lazy!(class_case(
            "cel_conditional_chain_under_the_limit",
            rule(format!("{}true", "self > 0 ? true : ".repeat(200))),
            INVALID,
            "compilation failed",
        )),
        lazy!(class_case(
            "cel_too_long",
            rule(format!("self == 1 || '{}' == ''", "x".repeat(100_000))),
            INVALID,
            "expression code point size exceeds limit: size: 100021, limit 100000",
        )),
        lazy!(class_case(
            "cel_long_and_chain_is_fine",
            rule(vec!["self > 0"; 6_000].join(" && ")),
            Expect::Allowed,
            "",
        )),
        lazy!(class_case(
            "cel_message_expression_nested",
            json!({"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0",
                   "messageExpression": format!("{}'m'{}", "(".repeat(N), ")".repeat(N))}]}),
            INVALID,
            DEEP,
        )),
        lazy!(class_case(
            "cel_message_construction",
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {},
                   "x-kubernetes-validations": [{"rule": "Foo{a: 1} == self", "message": "m"}]}),
            INVALID,
            "",
        )),
        lazy!(class_case(
            "cel_unbounded_nested_loops",
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"},
                   "x-kubernetes-validations": [{
                   "rule": "self.all(a, self.all(b, self.all(c, a + b + c != '')))", "message": "m"}]}}}),
            INVALID,
            "estimated rule cost exceeds budget",
        )),
    ]
}

fn deep_schema() -> Value {
    let mut deep = json!({"type": "string"});
    for _ in 0..100 {
        deep = json!({"type": "array", "items": deep});
    }
    deep
}

fn wide_object() -> Value {
    let properties: serde_json::Map<String, Value> = (0..1_500)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "properties": properties})
}

fn schema_cases() -> Vec<Build> {
    const INVALID: Expect = Expect::Refused(422);
    vec![
        lazy!(class_case(
            "enum_100000_values",
            json!({"type": "integer", "enum": (0..100_000).collect::<Vec<_>>()}),
            INVALID,
            "Too many: 100000: must have at most 2000 items",
        )),
        lazy!(class_case(
            "any_of_15000_branches",
            json!({"type": "string", "anyOf": vec![json!({"maxLength": 1}); 15_000]}),
            INVALID,
            "may not have more than 10000 nodes",
        )),
        lazy!(class_case(
            "any_of_1_8_mb",
            json!({"type": "string", "anyOf": vec![json!({"maxLength": 1}); 90_000]}),
            Expect::Refused(400),
            "more than 40000 JSON objects and arrays",
        )),
        lazy!(class_case(
            "pattern_5000_bytes",
            json!({"type": "string", "pattern": "a".repeat(5_000)}),
            INVALID,
            "Too long: may not be more than 4096 bytes",
        )),
        lazy!(class_case(
            "properties_1500",
            wide_object(),
            INVALID,
            "Too many: 1500: must have at most 1000 items",
        )),
        lazy!(class_case(
            "schema_100_levels",
            deep_schema(),
            INVALID,
            "nested deeper than 64 levels"
        )),
        lazy!(Case {
            name: "class_with_5000_variables",
            path: VALIDATE_CLASS,
            body: {
                let mut class = class_with_variable("hostile", json!({"type": "string"}));
                class["spec"]["variables"] = json!((0..5_000)
                    .map(|i| json!({"name": format!("v{i}"), "required": false, "schema": {"openAPIV3Schema": {}}}))
                    .collect::<Vec<_>>());
                create(Kind::ClusterClass, &class)
            },
            expect: INVALID,
            message: "Too many: 5000: must have at most 1000 items",
        }),
        lazy!(Case {
            name: "go_template_nested_parentheses",
            path: VALIDATE_CLASS,
            body: {
                let mut class = quickstart_of_kind("ClusterClass");
                class["metadata"]["name"] = json!("hostile");
                class = with_namespaced_refs(class);
                class["spec"]["patches"][0]["definitions"][0]["jsonPatches"][0]["valueFrom"] =
                    json!({"template": format!("{{{{ {}1{} }}}}", "(".repeat(50_000), ")".repeat(50_000))});
                create(Kind::ClusterClass, &class)
            },
            expect: INVALID,
            message: "",
        }),
    ]
}

fn cluster_with_variables(variables: Value) -> Value {
    let mut cluster = quickstart_of_kind("Cluster");
    cluster["metadata"]["name"] = json!("hostile");
    cluster["spec"]["topology"]["variables"] = variables;
    cluster
}

fn undefined_variables(n: usize) -> Value {
    json!((0..n)
        .map(|i| json!({"name": format!("x{i}"), "value": i}))
        .collect::<Vec<_>>())
}

fn cluster_cases() -> Vec<Build> {
    vec![
        lazy!(Case {
            name: "cluster_with_30000_undefined_variables",
            path: MUTATE_CLUSTER,
            body: create(
                Kind::Cluster,
                &cluster_with_variables(undefined_variables(30_000))
            ),
            expect: Expect::Refused(422),
            message: "spec.topology.variables: Too many: 30000: must have at most 1000 items",
        }),
        lazy!(Case {
            name: "cluster_with_100000_undefined_variables",
            path: MUTATE_CLUSTER,
            body: create(
                Kind::Cluster,
                &cluster_with_variables(undefined_variables(100_000))
            ),
            expect: Expect::Refused(400),
            message: "more than 40000 JSON objects and arrays",
        }),
        lazy!(Case {
            name: "cluster_with_999_copies_of_one_variable",
            path: MUTATE_CLUSTER,
            body: create(
                Kind::Cluster,
                &cluster_with_variables(json!(vec![json!({"name": "imageRepository", "value": "r"}); 999])),
            ),
            expect: Expect::Refused(422),
            message: "is set more than once",
        }),
        lazy!(Case {
            name: "cel_rule_expensive_at_runtime",
            path: MUTATE_CLUSTER,
            body: {
                let mut bomb = cluster_with_variables(
                    json!([{"name": "v", "value": {"l": (0..500).collect::<Vec<_>>()}}]),
                );
                bomb["spec"]["topology"]["classRef"]["name"] = json!("cel-bomb");
                create(Kind::Cluster, &bomb)
            },
            expect: Expect::Refused(422),
            message: "validation failed due to running out of cost budget",
        }),
        lazy!(Case {
            name: "cluster_with_30000_machine_deployments",
            path: MUTATE_CLUSTER,
            body: {
                let mut many_workers = quickstart_of_kind("Cluster");
                many_workers["metadata"]["name"] = json!("hostile");
                many_workers["spec"]["topology"]["workers"]["machineDeployments"] = json!((0..30_000)
                    .map(|i| json!({"class": "default-worker", "name": format!("md-{i}")}))
                    .collect::<Vec<_>>());
                create(Kind::Cluster, &many_workers)
            },
            expect: Expect::Allowed,
            message: "",
        }),
        lazy!(Case {
            name: "name_of_2_mb",
            path: VALIDATE_CLUSTER,
            body: {
                let mut huge_name = quickstart_of_kind("Cluster");
                huge_name["metadata"]["name"] = json!("n".repeat(2_000_000));
                create(Kind::Cluster, &huge_name)
            },
            expect: Expect::Refused(422),
            message: "more bytes)",
        }),
    ]
}

fn wire_cases() -> Vec<Build> {
    vec![
        lazy!(Case {
            name: "class_sent_as_a_cluster",
            path: VALIDATE_CLUSTER,
            body: {
                let mut not_a_cluster = quickstart_of_kind("ClusterClass");
                not_a_cluster["metadata"]["name"] = json!("c1");
                serde_json::to_vec(&review_json(
                    Kind::Cluster,
                    &Operation::Create,
                    Some(&not_a_cluster),
                    None,
                ))
                .expect("encodes")
            },
            expect: Expect::Refused(400),
            message: "but this webhook admits cluster.x-k8s.io/v1beta2 or cluster.x-k8s.io/v1beta1 Cluster",
        }),
        lazy!(Case {
            name: "json_nested_10000_deep",
            path: VALIDATE_CLUSTER,
            body: format!("{{\"request\": {}", "{\"a\":".repeat(10_000)).into_bytes(),
            expect: Expect::Refused(400),
            message: "cannot decode AdmissionReview",
        }),
    ]
}

/// The quickstart Cluster with `entries` as its `topology.cluster.x-k8s.io/v1beta1-fields`.
fn cluster_keeping(entries: Value) -> Value {
    let mut cluster = quickstart_of_kind("Cluster");
    cluster["spec"]["topology"]["version"] = json!("v1.31.2");
    cluster["metadata"]["annotations"] =
        json!({"topology.cluster.x-k8s.io/v1beta1-fields": entries.to_string()});
    cluster
}

/// The v1beta1-fields annotation (issue 36, items 6 and 7): accepted only for the fields it
/// exists for, each value checked as its field would be.
fn v1beta1_fields_cases() -> Vec<Build> {
    vec![
        lazy!(Case {
            name: "v1beta1_fields_show_paused_a_secret_and_a_phase",
            path: VALIDATE_CLUSTER,
            body: create(
                Kind::Cluster,
                &cluster_keeping(json!([
                    {"path": "/spec/paused", "value": true},
                    {"path": "/spec/controlPlaneRef", "value": {"apiVersion": "v1", "kind": "Secret", "name": "admin"}},
                    {"path": "/status/phase", "value": "Provisioned"},
                ]))
            ),
            expect: Expect::Refused(422),
            message: "metadata.annotations[topology.cluster.x-k8s.io/v1beta1-fields]: Invalid value: \"/spec/paused\": \
                      entry 0: not a v1beta1 field of a Cluster that this annotation keeps",
        }),
        lazy!(Case {
            name: "v1beta1_fields_rollout_after_runs_a_command",
            path: VALIDATE_CLUSTER,
            body: create(
                Kind::Cluster,
                &cluster_keeping(json!([{"path": "/spec/topology/rolloutAfter", "value": "not-a-time; $(rm -rf /)"}]))
            ),
            expect: Expect::Refused(422),
            message: "entry 0: spec.topology.rolloutAfter in body must be of type date-time: \"not-a-time; $(rm -rf /)\"",
        }),
        lazy!(Case {
            name: "v1beta1_fields_with_20000_bad_entries",
            path: VALIDATE_CLUSTER,
            body: create(
                Kind::Cluster,
                &cluster_keeping(json!(vec![json!({"path": "/status/phase", "value": "x"}); 20_000]))
            ),
            expect: Expect::Refused(422),
            message: "entries 10 and after: not checked",
        }),
        lazy!(Case {
            name: "v1beta1_fields_as_written_durations",
            path: VALIDATE_CLUSTER,
            body: create(
                Kind::Cluster,
                &cluster_keeping(json!([
                    {"path": "/spec/topology/controlPlane/nodeDrainTimeout", "value": "90s"},
                    {"path": "/spec/topology/rolloutAfter", "value": "2026-01-01T00:00:00Z"},
                ]))
            ),
            expect: Expect::Allowed,
            message: "",
        }),
    ]
}
