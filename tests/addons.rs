//! The ClusterResourceSet engine on the proposal's example (`tests/fixtures/addons/`): which sets
//! select the Cluster, and the objects and hash of each resource they list.

use capi_topology::addons::{matching, read_resource, ResourceError};
use capi_topology::api::{Cluster, ClusterResourceSet};
use capi_topology::store::parse_manifests;
use serde_json::Value;

fn fixture() -> Vec<Value> {
    let text = std::fs::read_to_string("tests/fixtures/addons/calico.yaml").expect("fixture");
    parse_manifests(&text).expect("manifests parse")
}

fn find<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

fn names(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn the_set_selects_the_labelled_cluster() {
    let objects = fixture();
    let set: ClusterResourceSet =
        serde_json::from_value(find(&objects, "ClusterResourceSet").clone()).unwrap();
    let cluster: Cluster = serde_json::from_value(find(&objects, "Cluster").clone()).unwrap();
    let selected = matching::sets_selecting(&cluster, [&set]);
    assert_eq!(selected.len(), 1);
    let clusters = matching::clusters_selected(&set, [&cluster]).unwrap();
    assert_eq!(clusters.len(), 1);
}

#[test]
fn a_config_map_holds_the_objects_of_every_key_in_key_order() {
    let resource = read_resource(find(&fixture(), "ConfigMap")).unwrap();
    assert_eq!(
        names(&resource.objects),
        [
            "Secret/calico-secret1",
            "Secret/calico-secret2",
            "ConfigMap/calico-configmap"
        ]
    );
    // sha256 of the values of calico1.yaml and calico2.yaml, concatenated.
    assert_eq!(
        resource.hash,
        "sha256:774aa8ebe6f42c4db869816294ea7dbe2f6152f10b7f390d1df1276c84cb2437"
    );
}

#[test]
fn a_resource_set_secret_is_read_and_any_other_secret_refused() {
    let objects = fixture();
    let secret = find(&objects, "Secret");
    let resource = read_resource(secret).unwrap();
    assert_eq!(
        names(&resource.objects),
        ["Secret/mysql-access", "ClusterRole/db-admin"]
    );
    assert_eq!(
        resource.hash,
        "sha256:83201604e219cb04d0a4ffe6d2214c92f3695c011fb59939bfef5220724d6163"
    );
    let mut opaque = secret.clone();
    opaque["type"] = "Opaque".into();
    assert_eq!(
        read_resource(&opaque).unwrap_err(),
        ResourceError::WrongSecretType("Opaque".to_owned())
    );
}
