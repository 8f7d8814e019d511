//! Every real-world ClusterClass of the corpus (24 classes from 13 provider repositories), with
//! its templates and a Cluster using it, passes `check`: the webhooks accept what providers ship,
//! but for the classes Cluster API v1.14.0's CRDs themselves refuse (below).

use std::path::PathBuf;

use capi_topology::offline::apply::{apply, Verdict};
use capi_topology::store::{parse_manifests, MemoryStore};
use rstest::rstest;

/// Classes whose v1beta1 variables omit `required`, which v1.14.0's CRDs require in both
/// versions (`spec.variables[].required`): the API server refuses them beside Cluster API too.
const REFUSED_BY_THE_CRDS: &[(&str, &str)] = &[
    ("azure-rke2", "spec.variables[13].required: Required value"),
    ("metal3", "spec.variables[1].required: Required value"),
];

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
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            match REFUSED_BY_THE_CRDS.iter().find(|(dir, _)| *dir == name) {
                Some((_, cause)) if applied.verdict == Verdict::Denied => {
                    assert!(applied.message.contains(cause), "{}", applied.message);
                    return;
                }
                _ => assert_ne!(applied.verdict, Verdict::Denied, "{}", applied.message),
            }
        }
    }
}
