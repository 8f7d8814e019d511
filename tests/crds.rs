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

/// The webhook configurations of `manifests/base` register exactly the v1beta2 endpoints the
/// server serves, at their paths (objects of the older versions reach them converted; the
/// older paths the server still answers are for clients registered there before).
#[test]
fn webhook_manifests_match_the_served_endpoints() {
    use capi_topology::admission::Webhook;
    use capi_topology::store::parse_manifests;

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/base/webhooks.yaml");
    let text = std::fs::read_to_string(&path).expect("manifests/base/webhooks.yaml");
    let mut registered = Vec::new();
    for configuration in parse_manifests(&text).expect("webhooks.yaml parses") {
        let mutating = configuration["kind"] == "MutatingWebhookConfiguration";
        for webhook in configuration["webhooks"].as_array().into_iter().flatten() {
            assert_eq!(webhook["matchPolicy"], "Equivalent", "{}", webhook["name"]);
            assert_eq!(webhook["admissionReviewVersions"], serde_json::json!(["v1"]));
            assert_eq!(webhook["rules"][0]["apiVersions"], serde_json::json!(["v1beta2"]));
            registered.push((
                mutating,
                webhook["name"].as_str().unwrap_or_default().to_owned(),
                webhook["clientConfig"]["service"]["path"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ));
        }
    }
    let mut served: Vec<(bool, String, String)> = Webhook::ALL
        .iter()
        .filter(|w| !w.spoke)
        .map(|w| (w.mutating, w.configuration_name().to_owned(), w.path().to_owned()))
        .collect();
    registered.sort();
    served.sort();
    assert_eq!(registered, served);
}
