//! Every real-world ClusterClass of the corpus (24 classes from 13 provider repositories), with
//! its templates and a Cluster using it, passes `check`: the webhooks accept what providers ship.

use std::path::PathBuf;

use capi_topology::offline::apply::{apply, Verdict};
use capi_topology::store::{parse_manifests, MemoryStore};
use rstest::rstest;

#[rstest]
fn real_world_class_and_cluster_are_admitted(
    #[files("tests/fixtures/realworld/*")]
    #[dirs]
    dir: PathBuf,
) {
    let mut store = MemoryStore::default();
    for file in ["clusterclass.yaml", "cluster.yaml"] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        for object in parse_manifests(&text).unwrap() {
            let applied = apply(
                &mut store,
                object,
                &path.display().to_string(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
            assert_ne!(applied.verdict, Verdict::Denied, "{}", applied.message);
        }
    }
}
