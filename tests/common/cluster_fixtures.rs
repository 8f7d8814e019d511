//! The Cluster admission fixtures' stores, and variants of a Cluster that leave more to the
//! defaulting: shared by the tests of the mutating webhook's patch (`admission_patch.rs`,
//! `admission_spoke_patch.rs`).

use std::path::{Path, PathBuf};

use capi_topology::store::{parse_manifests, MemoryStore};
use serde_json::{json, Value};

/// Every Cluster admission fixture (`tests/fixtures/admission/cluster`), in file order: its
/// path, its content and the store its objects make.
pub fn admission_fixtures() -> Vec<(PathBuf, Value, MemoryStore)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("tests/fixtures/admission/cluster")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let fixture: Value = serde_yaml_ng::from_str(&text).unwrap();
            let store = store_of(&fixture, path.parent().unwrap());
            (path, fixture, store)
        })
        .collect()
}

/// The benchmark's Cluster (`benches/fixtures`, written in v1beta1) and a store with its class.
pub fn benchmark_cluster() -> (Value, MemoryStore) {
    let class = std::fs::read_to_string("benches/fixtures/class-20-variables.yaml").unwrap();
    let cluster = std::fs::read_to_string("benches/fixtures/cluster-20-variables.yaml").unwrap();
    let mut store = MemoryStore::default();
    for object in parse_manifests(&class).unwrap() {
        store.insert(object).unwrap();
    }
    (parse_manifests(&cluster).unwrap().remove(0), store)
}

/// The objects a fixture stores, from its `objectsFrom` files and its `objects`.
fn store_of(fixture: &Value, dir: &Path) -> MemoryStore {
    let mut store = MemoryStore::default();
    let files = fixture["objectsFrom"].as_array().cloned().unwrap_or_default();
    for file in files {
        let path = dir.join(file.as_str().expect("objectsFrom holds paths"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for object in parse_manifests(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
            store.insert(object).expect("stored");
        }
    }
    for object in fixture["objects"].as_array().cloned().unwrap_or_default() {
        store.insert(object).expect("stored");
    }
    store
}

/// Every variable list of a serialised Cluster: the Cluster's and each override list.
fn variable_lists(cluster: &mut Value) -> Vec<&mut Value> {
    let topology = &mut cluster["spec"]["topology"];
    let mut lists = Vec::new();
    let Some(topology) = topology.as_object_mut() else {
        return lists;
    };
    for (key, value) in topology.iter_mut() {
        match key.as_str() {
            "variables" => lists.push(value),
            "controlPlane" => lists.extend(value.pointer_mut("/variables/overrides")),
            "workers" => {
                for part in value.as_object_mut().into_iter().flat_map(|w| w.values_mut()) {
                    for item in part.as_array_mut().into_iter().flatten() {
                        lists.extend(item.pointer_mut("/variables/overrides"));
                    }
                }
            }
            _ => {}
        }
    }
    lists
}

/// The Cluster as written, and variants of it that leave more to the defaulting.
pub fn variants(cluster: &Value) -> Vec<(&'static str, Value)> {
    let mut out = vec![("as written", cluster.clone())];
    let mut bare = cluster.clone();
    for field in ["infrastructureRef", "controlPlaneRef"] {
        if let Some(reference) = bare["spec"][field].as_object_mut() {
            reference.remove("namespace");
        }
    }
    if let Some(version) = bare.pointer_mut("/spec/topology/version") {
        *version = json!(version.as_str().unwrap_or_default().trim_start_matches('v'));
    }
    out.push(("no ref namespaces, no v", bare));
    let mut remediation = cluster.clone();
    if let Some(topology) = remediation["spec"]["topology"].as_object_mut() {
        let template = |namespace: Option<&str>| {
            let mut reference = json!({"kind": "Remediation", "name": "r"});
            if let Some(namespace) = namespace {
                reference["namespace"] = json!(namespace);
            }
            json!({"remediationTemplate": reference})
        };
        let control_plane = topology.entry("controlPlane").or_insert_with(|| json!({}));
        control_plane["machineHealthCheck"] = template(None);
        let mds = remediation
            .pointer_mut("/spec/topology/workers/machineDeployments")
            .and_then(Value::as_array_mut);
        for (index, md) in mds.into_iter().flatten().enumerate() {
            let namespace = [None, Some(""), Some("elsewhere")][index % 3];
            md["machineHealthCheck"] = template(namespace);
        }
    }
    out.push(("remediation templates", remediation));
    let mut empty_ns = cluster.clone();
    for field in ["infrastructureRef", "controlPlaneRef"] {
        if let Some(reference) = empty_ns["spec"][field].as_object_mut() {
            reference.insert("namespace".into(), json!(""));
        }
    }
    out.push(("empty ref namespaces", empty_ns));
    let mut no_variables = cluster.clone();
    if let Some(topology) = no_variables["spec"]["topology"].as_object_mut() {
        topology.remove("variables");
    }
    out.push(("no Cluster variables", no_variables));
    for (name, value) in [("null values", Value::Null), ("empty object values", json!({}))] {
        let mut changed = cluster.clone();
        for list in variable_lists(&mut changed) {
            for entry in list.as_array_mut().into_iter().flatten() {
                if name == "null values" || entry["value"].is_object() {
                    entry["value"] = value.clone();
                }
            }
        }
        out.push((name, changed));
    }
    out
}
