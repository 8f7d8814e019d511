//! Seed 003's `definitionFrom` across storage: a v1beta1 Cluster setting one value per
//! conflicting definition is stored as v1beta2 (the store converts it to the hub), typed again as
//! the controller and `plan` read it, and each patch is given the value of its own definition;
//! read back through v1beta1, every `definitionFrom` is where it was written.

use capi_topology::api::convert::{from_hub, ContractVersions};
use capi_topology::api::{Cluster, ClusterClassStatus};
use capi_topology::decode::decode_value;
use capi_topology::patches::hook_requests::{defined_by, generate_request, HookInputs};
use capi_topology::store::{MemoryStore, ObjectSource};
use capi_topology::topology::builtins;
use serde_json::{json, Value};

struct NoCrds;

impl ContractVersions for NoCrds {
    fn version_of(&self, _: &str, _: &str) -> Option<String> {
        None
    }
}

fn v1beta1_cluster() -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
        "metadata": {"name": "proxy-dev", "namespace": "default"},
        "spec": {"topology": {"class": "proxy-class", "version": "v1.31.2",
            "workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0",
                "variables": {"overrides": [
                    {"name": "http-proxy", "definitionFrom": "lbImageRepository", "value": {"host": "md.example"}}]}}]},
            "variables": [
                {"name": "no-proxy", "value": "internal.domain.com"},
                {"name": "http-proxy", "definitionFrom": "inline", "value": "http://proxy.example2.com:1234"},
                {"name": "http-proxy", "definitionFrom": "lbImageRepository",
                 "value": {"host": "proxy.example2.com", "port": 1234}}]}}
    })
}

#[test]
fn definition_from_survives_storage_as_v1beta2_and_selects_the_values() {
    let mut store = MemoryStore::default();
    store.insert(v1beta1_cluster()).unwrap();
    let stored = store
        .get("cluster.x-k8s.io", "Cluster", "default", "proxy-dev")
        .unwrap();
    assert_eq!(stored["apiVersion"], "cluster.x-k8s.io/v1beta2");
    assert!(
        stored["spec"]["topology"]["variables"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v.get("definitionFrom").is_none()),
        "v1beta2 has no definitionFrom: {stored}"
    );
    let cluster: Cluster = decode_value((*stored).clone()).unwrap();
    let topology = &cluster.spec.topology;
    // Inline patches (and builtins) are given the inline definition's value.
    let inline = builtins::inline_values(&topology.variables);
    assert_eq!(inline["http-proxy"], json!("http://proxy.example2.com:1234"));
    assert_eq!(inline["no-proxy"], json!("internal.domain.com"));
    let md = builtins::variables(
        &inline,
        &topology.workers.machine_deployments[0].variables.overrides,
        json!({}),
    );
    assert_eq!(md["http-proxy"], json!("http://proxy.example2.com:1234"));
    // The extension's GeneratePatches request carries its definition's value.
    let status: ClusterClassStatus = serde_json::from_value(json!({"variables": [
        {"name": "http-proxy", "definitionsConflict": true, "definitions": [
            {"from": "inline", "schema": {"openAPIV3Schema": {"type": "string"}}},
            {"from": "lbImageRepository", "schema": {"openAPIV3Schema": {"type": "object"}}}]}]}))
    .unwrap();
    let builtin = json!({});
    let inputs = HookInputs {
        values: &topology.variables,
        builtin: &builtin,
        status: Some(&status),
    };
    let defined = defined_by(Some(&status), "lbImageRepository");
    let request = generate_request(&[], &inputs, &defined, &Default::default());
    assert_eq!(request.variables[0].name, "http-proxy");
    assert_eq!(
        request.variables[0].value,
        json!({"host": "proxy.example2.com", "port": 1234})
    );
    // Written again (the engine's hub JSON) and read through v1beta1: as written.
    let hub = serde_json::to_value(&cluster).unwrap();
    assert_eq!(&hub, &*stored);
    let back = from_hub(hub, "cluster.x-k8s.io/v1beta1", &NoCrds).unwrap();
    assert_eq!(back["spec"]["topology"], v1beta1_cluster()["spec"]["topology"]);
}
