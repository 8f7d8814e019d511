//! Admission hot paths: a Cluster create through the mutating and validating webhooks (as the
//! API server sends it to Cluster API v1.14's v1beta2 paths, and as a client registered at the
//! v1beta1 paths sends it: converted to the hub and patched against what was sent), and a
//! ClusterClass update checked against the 1,000 Clusters that use it. Each iteration goes from
//! the request's bytes to the answer's bytes as the server writes them (`encode_review`: the
//! JSONPatch as base64, as the API server's types encode it).

use capi_topology::admission::{self, request::review_json, Kind, Webhook};
use capi_topology::store::{parse_manifests, MemoryStore};
use criterion::{criterion_group, criterion_main, Criterion};
use kube::core::admission::Operation;
use serde_json::{json, Value};

/// The binary's allocator, so the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CLASS: &str = include_str!("fixtures/class-20-variables.yaml");
const CLUSTER: &str = include_str!("fixtures/cluster-20-variables.yaml");

fn one(text: &str) -> Value {
    parse_manifests(text).expect("fixture parses").remove(0)
}

/// The fixture (written in v1beta1) on the hub, as the API server sends it to a v1beta2 webhook.
fn hub(text: &str) -> Value {
    capi_topology::api::convert::to_hub(one(text)).expect("fixture converts")
}

fn encode(kind: Kind, operation: Operation, object: Option<&Value>, old: Option<&Value>) -> Vec<u8> {
    serde_json::to_vec(&review_json(kind, &operation, object, old)).expect("encodes")
}

/// Mutate then validate a Cluster create: 20 variables (nested objects, lists, CEL) and 5 MachineDeployments.
fn cluster_create(c: &mut Criterion) {
    cluster_create_as(
        c,
        "cluster_create_mutate_validate_20_vars_5_mds",
        hub(CLUSTER),
        false,
    );
    cluster_create_as(
        c,
        "cluster_create_mutate_validate_20_vars_5_mds_v1beta1",
        one(CLUSTER),
        true,
    );
}

/// [`cluster_create`] of `cluster` at the v1beta1 paths (`spoke`) or the v1beta2 ones.
fn cluster_create_as(c: &mut Criterion, name: &str, cluster: Value, spoke: bool) {
    let mut store = MemoryStore::default();
    store.insert(one(CLASS)).expect("class stored");
    let mutate = Webhook {
        kind: Kind::Cluster,
        mutating: true,
        spoke,
    };
    let validate = Webhook {
        kind: Kind::Cluster,
        mutating: false,
        spoke,
    };
    let mutate_body = encode(Kind::Cluster, Operation::Create, Some(&cluster), None);
    let answer = admission::review(mutate.path(), &mutate_body, &store);
    let response = answer.response.expect("answered");
    assert!(
        response.allowed,
        "benchmark input must be admitted: {}",
        response.result.message
    );
    let mut defaulted = cluster.clone();
    if let Some(patch) = &response.patch {
        let patch: json_patch::Patch = serde_json::from_slice(patch).expect("patch decodes");
        json_patch::patch(&mut defaulted, &patch).expect("patch applies");
    }
    let validate_body = encode(Kind::Cluster, Operation::Create, Some(&defaulted), None);
    let validated = admission::review(validate.path(), &validate_body, &store)
        .response
        .expect("answered");
    assert!(
        validated.allowed,
        "benchmark input must be valid: {}",
        validated.result.message
    );
    c.bench_function(name, |b| {
        b.iter(|| {
            let m = admission::encode_review(&admission::review(mutate.path(), &mutate_body, &store))
                .expect("encodes");
            let v = admission::encode_review(&admission::review(validate.path(), &validate_body, &store))
                .expect("encodes");
            (m, v)
        })
    });
}

/// The Cluster written in v1beta1 as a cluster admits it with our webhooks registered at v1beta2
/// (`matchPolicy: Equivalent`): the API server's ConversionReview to our `/convert` answered
/// (bytes in, bytes out), the converted object read from the answer into the review, then the
/// mutating and validating webhooks as [`cluster_create`]'s v1beta2 row. The reference's row of
/// the same name converts with Cluster API's own conversion.
fn cluster_create_through_conversion(c: &mut Criterion) {
    let mut store = MemoryStore::default();
    store.insert(one(CLASS)).expect("class stored");
    let conversion = serde_json::to_vec(&json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "c0", "desiredAPIVersion": "cluster.x-k8s.io/v1beta2", "objects": [one(CLUSTER)]}
    }))
    .expect("encodes");
    let [mutate, validate] = [true, false].map(|mutating| Webhook {
        kind: Kind::Cluster,
        mutating,
        spoke: false,
    });
    let validate_body = encode(Kind::Cluster, Operation::Create, Some(&hub(CLUSTER)), None);
    let converted = |bytes: &[u8]| -> Value {
        let mut answer: Value = serde_json::from_slice(bytes).expect("a ConversionReview");
        answer["response"]["convertedObjects"][0].take()
    };
    let answer = capi_topology::api::convert::review::review_bytes(&conversion, &store);
    assert_eq!(converted(&answer.bytes)["apiVersion"], "cluster.x-k8s.io/v1beta2");
    c.bench_function("cluster_create_through_conversion_v1beta1", |b| {
        b.iter(|| {
            let answer = capi_topology::api::convert::review::review_bytes(&conversion, &store);
            let body = encode(
                Kind::Cluster,
                Operation::Create,
                Some(&converted(&answer.bytes)),
                None,
            );
            let m =
                admission::encode_review(&admission::review(mutate.path(), &body, &store)).expect("encodes");
            let v = admission::encode_review(&admission::review(validate.path(), &validate_body, &store))
                .expect("encodes");
            (m, v)
        })
    });
}

/// Validate a ClusterClass update that changes a variable's schema, with 1,000 Clusters using the class.
fn class_update_with_1000_clusters(c: &mut Criterion) {
    let class = hub(CLASS);
    let mut store = MemoryStore::default();
    store.insert(class.clone()).expect("class stored");
    let cluster = one(CLUSTER);
    for i in 0..1000 {
        let mut cluster = cluster.clone();
        cluster["metadata"]["name"] = json!(format!("bench-{i}"));
        cluster["metadata"]["namespace"] = json!(format!("team-{}", i % 10));
        cluster["spec"]["topology"]["classNamespace"] = json!("default");
        store.insert(cluster).expect("cluster stored");
    }
    let mut updated = class.clone();
    updated["spec"]["variables"][6]["schema"]["openAPIV3Schema"]["maximum"] = json!(2000);
    let validate = Webhook {
        kind: Kind::ClusterClass,
        mutating: false,
        spoke: false,
    };
    let body = encode(
        Kind::ClusterClass,
        Operation::Update,
        Some(&updated),
        Some(&class),
    );
    let answer = admission::review(validate.path(), &body, &store)
        .response
        .expect("answered");
    assert!(
        answer.allowed,
        "benchmark input must be admitted: {}",
        answer.result.message
    );
    c.bench_function("clusterclass_update_1000_clusters", |b| {
        b.iter(|| {
            admission::encode_review(&admission::review(validate.path(), &body, &store)).expect("encodes")
        })
    });
}

criterion_group!(
    benches,
    cluster_create,
    cluster_create_through_conversion,
    class_update_with_1000_clusters
);
criterion_main!(benches);
