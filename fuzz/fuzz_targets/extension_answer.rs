//! Arbitrary GeneratePatches answers applied to two templates as the engine applies an
//! extension's answer: the input's first byte picks the patch type and which template it names,
//! the rest is the patch. Applying must return (an error is fine) within the bounds of
//! `patches::bounded`, never panic, hang or allocate without a bound; a template that was patched
//! stays within the size the API server stores.
#![no_main]

use std::sync::Arc;

use capi_topology::api::runtime::{
    GeneratePatchesResponse, GeneratePatchesResponseItem, HolderReference, PatchType, ResponseStatus,
};
use capi_topology::patches::bounded::check_object_size;
use capi_topology::patches::hook_requests::apply_response;
use capi_topology::patches::inline::PatchItem;
use capi_topology::patches::selector::Role;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, patch)) = data.split_first() else {
        return;
    };
    let patch_type = if choice & 1 == 0 {
        PatchType::JsonPatch
    } else {
        PatchType::JsonMergePatch
    };
    let uid = format!("00000000-0000-4000-8000-{:012}", (choice >> 1) & 1);
    let item = |kind: &str| PatchItem {
        role: Role::InfrastructureCluster,
        holder: HolderReference::default(),
        object: json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": kind,
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {"template": {"spec": {"list": [0, 1, 2], "map": {"k": "v", "~/": 1}}}},
        }),
        variables: Arc::new(Map::new()),
        overrides: Arc::from(Vec::new()),
    };
    let mut items = [item("DockerClusterTemplate"), item("DockerMachineTemplate")];
    let response = GeneratePatchesResponse {
        api_version: String::new(),
        kind: String::new(),
        status: ResponseStatus::Success,
        message: String::new(),
        items: vec![
            GeneratePatchesResponseItem {
                uid: uid.clone(),
                patch_type,
                patch: patch.to_vec(),
            };
            2
        ],
    };
    if apply_response(&mut items, &response).is_ok() {
        for item in &items {
            assert!(check_object_size(&item.object).is_ok());
        }
    }
});
