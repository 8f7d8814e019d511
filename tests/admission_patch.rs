//! The mutating Cluster webhook's JSONPatch is recorded by the defaulting itself; this holds it
//! to what a diff of the Cluster's typed serialisation before and after defaulting gives, over
//! every Cluster admission fixture, the benchmark's Cluster, and variants of each that leave
//! more to default (no ref namespaces, no `v` prefix, null, empty or absent variable values).

use capi_topology::admission::cluster;
use capi_topology::api::Cluster;
use capi_topology::store::MemoryStore;
use pretty_assertions::assert_eq;
use serde_json::Value;

#[path = "common/cluster_fixtures.rs"]
mod cluster_fixtures;
use cluster_fixtures::{admission_fixtures, benchmark_cluster, variants};

/// Defaults `object` and checks the recorded patch against the diff of before and after.
fn check(what: &str, object: &Value, old: Option<&Value>, store: &MemoryStore) {
    let Ok(mut cluster) = serde_json::from_value::<Cluster>(object.clone()) else {
        return;
    };
    let old: Option<Cluster> = old.and_then(|o| serde_json::from_value(o.clone()).ok());
    let before = serde_json::to_value(&cluster).unwrap();
    let (_, patch) = cluster::default(&mut cluster, old.as_ref(), store);
    let after = serde_json::to_value(&cluster).unwrap();
    assert_eq!(patch, json_patch::diff(&before, &after), "{what}");
}

#[test]
fn recorded_patch_is_the_diff_for_every_cluster_fixture() {
    let fixtures = admission_fixtures();
    assert!(fixtures.len() > 20, "fixtures found: {}", fixtures.len());
    let mut checked = 0;
    for (path, fixture, store) in fixtures {
        let Some(object) = fixture.get("object").filter(|o| !o.is_null()) else {
            continue;
        };
        for (variant, object) in variants(object) {
            let what = format!("{} ({variant})", path.display());
            check(&what, &object, fixture.get("oldObject"), &store);
            checked += 1;
        }
    }
    assert!(checked > 100, "variants checked: {checked}");
}

#[test]
fn recorded_patch_is_the_diff_for_the_benchmark_cluster() {
    let (cluster, store) = benchmark_cluster();
    for (variant, object) in variants(&cluster) {
        check(variant, &object, None, &store);
    }
}
