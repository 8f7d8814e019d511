//! `manifests/crds/` is exactly what the API types generate: regenerate with
//! `cargo run -- crds --out manifests/crds` when this fails.

use std::path::Path;

use capi_topology::api::crd::custom_resource_definitions;

#[test]
fn committed_crds_match_the_api_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/crds");
    let crds = custom_resource_definitions().expect("CRDs generate");
    let mut expected_files: Vec<String> = Vec::new();
    for crd in &crds {
        let name = format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural);
        let generated = serde_yaml_ng::to_string(crd).expect("CRD encodes");
        let committed = std::fs::read_to_string(dir.join(&name)).unwrap_or_else(|e| {
            panic!("manifests/crds/{name}: {e}; run `cargo run -- crds --out manifests/crds`")
        });
        assert!(
            committed == generated,
            "manifests/crds/{name} drifted from the API types; run `cargo run -- crds --out manifests/crds`"
        );
        expected_files.push(name);
    }
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .expect("manifests/crds exists")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".yaml"))
        .collect();
    present.sort();
    expected_files.sort();
    assert_eq!(present, expected_files, "stale CRD files in manifests/crds");
}
