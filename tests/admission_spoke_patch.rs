//! The mutating Cluster webhook's JSONPatch against a Cluster sent in v1beta1 is defaulting's hub
//! patch mapped onto the object as sent (`spoke_patch::mapped`), or, where that mapping does
//! not answer, the hub object before and after defaulting rendered back to v1beta1 and diffed
//! (`spoke_patch::rendered`). This holds the two to the same patch, and the webhook's answer to
//! that patch, over every Cluster written in v1beta1 that we have: the admission fixtures (and
//! variants of each that leave more to default), the real-world Clusters with their classes, the
//! conversion goldens' Cluster and the benchmark's; and over Clusters made to default variables
//! at the top and in each override list, or to take the rendering's way.

use std::path::PathBuf;

use capi_topology::admission::spoke_patch::{mapped, rendered};
use capi_topology::admission::{self, cluster, request::review_json, Kind};
use capi_topology::api::convert::to_hub;
use capi_topology::api::{Cluster, ClusterClass};
use capi_topology::decode::decode_value;
use capi_topology::store::{parse_manifests, MemoryStore};
use capi_topology::variables::status_variables;
use kube::core::admission::Operation;
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

#[path = "common/cluster_fixtures.rs"]
mod cluster_fixtures;
use cluster_fixtures::{admission_fixtures, benchmark_cluster, variants};

const MUTATE_V1BETA1: &str = "/mutate-cluster-x-k8s-io-v1beta1-cluster";

/// How many Clusters defaulting changed, and for how many of them the mapping answered.
#[derive(Debug, Default)]
struct Tally {
    defaulted: usize,
    mapped: usize,
}

/// Defaults `sent` (a v1beta1 Cluster; `old` for an update) on the hub, checks that the mapped
/// patch, when there is one, is the rendered one, and that the webhook answers with that patch.
fn check(what: &str, sent: &Value, old: Option<&Value>, store: &MemoryStore, tally: &mut Tally) {
    let hub_of = |object: &Value| decode_value::<Cluster>(to_hub(object.clone()).ok()?).ok();
    let Some(before) = hub_of(sent) else { return };
    let old_hub = old.and_then(hub_of);
    let mut after = before.clone();
    let (outcome, hub_patch) = cluster::default(&mut after, old_hub.as_ref(), store);
    if !outcome.errors.is_empty() || hub_patch.0.is_empty() {
        return;
    }
    tally.defaulted += 1;
    let expected = rendered(&before, &after, sent).unwrap_or_else(|e| panic!("{what}: {e}"));
    if let Some(fast) = mapped(&hub_patch, sent) {
        tally.mapped += 1;
        assert_eq!(fast, expected, "{what}: the mapped patch is the rendered one");
    }
    let (operation, old) = match old_hub {
        Some(_) => (Operation::Update, old),
        None => (Operation::Create, None),
    };
    let body = serde_json::to_vec(&review_json(Kind::Cluster, &operation, Some(sent), old)).unwrap();
    let response = admission::review(MUTATE_V1BETA1, &body, store).response.unwrap();
    assert!(response.allowed, "{what}: {}", response.result.message);
    let answered: Value = serde_json::from_slice(response.patch.as_deref().unwrap_or(b"[]")).unwrap();
    assert_eq!(
        answered,
        serde_json::to_value(&expected).unwrap(),
        "{what}: the webhook's patch"
    );
}

fn is_v1beta1(object: &Value) -> bool {
    object["apiVersion"] == "cluster.x-k8s.io/v1beta1"
}

#[test]
fn every_v1beta1_admission_fixture_and_its_variants() {
    let mut tally = Tally::default();
    for (path, fixture, store) in admission_fixtures() {
        let Some(object) = fixture.get("object").filter(|o| is_v1beta1(o)) else {
            continue;
        };
        let old = fixture.get("oldObject").filter(|o| is_v1beta1(o));
        for (variant, object) in variants(object) {
            let what = format!("{} ({variant})", path.display());
            check(&what, &object, old, &store, &mut tally);
        }
    }
    eprintln!("admission fixtures: {tally:?}");
    assert!(tally.defaulted > 40, "{tally:?}");
    assert!(
        tally.mapped * 10 >= tally.defaulted * 9,
        "the mapping answers most: {tally:?}"
    );
}

/// A store with `class` (a v1beta1 ClusterClass) as its reconciler would leave it: its status
/// describes its generation and its inline variables.
fn store_with_reconciled(class: Value, others: impl IntoIterator<Item = Value>) -> MemoryStore {
    let mut hub = to_hub(class).unwrap();
    let typed: ClusterClass = decode_value(hub.clone()).unwrap();
    hub["status"] = json!({
        "observedGeneration": typed.metadata.generation.unwrap_or(0),
        "conditions": [{"type": "VariablesReady", "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "VariablesReady", "message": ""}],
        "variables": status_variables(&typed.spec.variables, &[]),
    });
    let mut store = MemoryStore::default();
    store.insert(hub).unwrap();
    for object in others {
        store.insert(object).unwrap();
    }
    store
}

#[test]
fn every_real_world_cluster_and_its_variants() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("tests/fixtures/realworld")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("cluster.yaml").exists())
        .collect();
    dirs.sort();
    let mut tally = Tally::default();
    for dir in &dirs {
        let read = |file: &str| parse_manifests(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
        let (classes, others): (Vec<Value>, Vec<Value>) = read("clusterclass.yaml")
            .into_iter()
            .partition(|o| o["kind"] == "ClusterClass");
        let Some(class) = classes.into_iter().next() else {
            continue;
        };
        let store = store_with_reconciled(class, others);
        for cluster in read("cluster.yaml")
            .iter()
            .filter(|o| o["kind"] == "Cluster" && is_v1beta1(o))
        {
            let checked = check_variants(&dir.display().to_string(), cluster, &store);
            tally.defaulted += checked.defaulted;
            tally.mapped += checked.mapped;
        }
    }
    eprintln!("real-world Clusters: {tally:?}");
    assert!(dirs.len() > 20, "real-world directories: {}", dirs.len());
    assert!(tally.defaulted > 40, "{tally:?}");
    assert!(
        tally.mapped * 10 >= tally.defaulted * 9,
        "the mapping answers most: {tally:?}"
    );
}

/// [`check`] of every variant of `cluster`, named `name`.
fn check_variants(name: &str, cluster: &Value, store: &MemoryStore) -> Tally {
    let mut tally = Tally::default();
    for (variant, object) in variants(cluster) {
        check(&format!("{name} ({variant})"), &object, None, store, &mut tally);
    }
    tally
}

#[test]
fn the_golden_conversion_cluster_and_the_benchmark_cluster() {
    let golden: Value =
        serde_yaml_ng::from_str(include_str!("../src/api/convert/testdata/cluster.v1beta1.yaml")).unwrap();
    let tally = check_variants("golden", &golden, &MemoryStore::default());
    assert!(tally.defaulted > 0, "{tally:?}");
    let (cluster, store) = benchmark_cluster();
    let benchmark = check_variants("benchmark", &cluster, &store);
    assert!(benchmark.defaulted > 0, "{benchmark:?}");
    assert_eq!(
        benchmark.mapped, benchmark.defaulted,
        "the benchmark's Cluster is mapped"
    );
}
