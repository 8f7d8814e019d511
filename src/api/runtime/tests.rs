use pretty_assertions::assert_eq;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::*;

/// The Go encoding of one value of each type (testdata/go_wire.json says how it was made).
fn go_wire(name: &str) -> Value {
    let all: Value = serde_json::from_str(include_str!("testdata/go_wire.json")).unwrap();
    all.get(name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in go_wire.json"))
}

/// Drops the `null`s Go writes for unset timestamps, which we leave out.
fn without_nulls(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.retain(|_, v| !v.is_null());
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

/// Decodes Go's JSON into `T` and encodes it again: the same JSON, once `adjust` has removed
/// from Go's what we knowingly leave out.
fn round_trip_with<T: Serialize + DeserializeOwned>(name: &str, adjust: fn(&mut Value)) -> T {
    let go = go_wire(name);
    let typed: T = serde_json::from_value(go.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let back = serde_json::to_value(&typed).unwrap();
    let mut expected = without_nulls(go);
    adjust(&mut expected);
    assert_eq!(back, expected, "{name}");
    typed
}

fn round_trip<T: Serialize + DeserializeOwned>(name: &str) -> T {
    round_trip_with(name, |_| {})
}

#[test]
fn extension_config_v1alpha1_round_trips_the_go_encoding() {
    use super::v1alpha1::{ExtensionConfig, FailurePolicy};

    let config: ExtensionConfig = round_trip("extension_config");
    assert_eq!(config.name(), "k8s-upgrade-with-runtimesdk");
    let service = config.spec.client_config.service.as_ref().unwrap();
    assert_eq!(
        (service.path.as_deref(), service.port),
        (Some("/hooks"), Some(8443))
    );
    // Go encodes the `[]byte` CA bundle as base64, which we keep as text.
    assert_eq!(
        config.spec.client_config.ca_bundle.as_deref(),
        Some("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==")
    );
    let handlers = &config.status.as_ref().unwrap().handlers;
    assert_eq!(handlers[0].failure_policy, Some(FailurePolicy::Fail));
    assert_eq!(handlers[1].timeout_seconds, None);
    let url: ExtensionConfig = round_trip("extension_config_url");
    assert_eq!(
        url.spec.client_config.url.as_deref(),
        Some("https://extension.example.com:9443/prefix")
    );
}

#[test]
fn discovery_round_trips_the_go_encoding() {
    let request: DiscoveryRequest = round_trip("discovery_request");
    assert_eq!(request.api_version, HOOKS_API_VERSION);
    let response: DiscoveryResponse = round_trip("discovery_response");
    assert_eq!(response.status, ResponseStatus::Success);
    assert_eq!(
        response.handlers[0].request_hook,
        GroupVersionHook {
            api_version: HOOKS_API_VERSION.to_owned(),
            hook: "GeneratePatches".to_owned()
        }
    );
}

#[test]
fn generate_patches_round_trips_the_go_encoding() {
    let request: GeneratePatchesRequest = round_trip("generate_patches_request");
    let item = &request.items[0];
    assert_eq!(
        item.holder_reference.field_path,
        "spec.template.spec.infrastructureRef"
    );
    assert_eq!(item.object["kind"], "DockerMachineTemplate");
    assert_eq!(item.variables[0].name, "builtin");
    let response: GeneratePatchesResponse = round_trip("generate_patches_response");
    let patches: Vec<(PatchType, Value)> = response
        .items
        .iter()
        .map(|item| (item.patch_type, serde_json::from_slice(&item.patch).unwrap()))
        .collect();
    assert_eq!(
        patches,
        [
            (
                PatchType::JsonPatch,
                json!([{"op": "add", "path": "/spec/template/spec/x", "value": 1}])
            ),
            (
                PatchType::JsonMergePatch,
                json!({"spec": {"template": {"spec": {"y": 2}}}})
            ),
        ]
    );
}

#[test]
fn validate_topology_and_discover_variables_round_trip_the_go_encoding() {
    let request: ValidateTopologyRequest = round_trip("validate_topology_request");
    assert_eq!(request.variables[0].value["port"], 1234);
    let response: ValidateTopologyResponse = round_trip("validate_topology_response");
    assert_eq!(response.status, ResponseStatus::Failure);
    let request: DiscoverVariablesRequest = round_trip("discover_variables_request");
    assert_eq!(request.settings["k"], "v");
    // Go (v1beta1 variables) writes a variable's empty `metadata` struct as `{}`; the v1beta2
    // variable has no such field.
    let response: DiscoverVariablesResponse = round_trip_with("discover_variables_response", |go| {
        go["variables"][0].as_object_mut().map(|v| v.remove("metadata"));
    });
    assert_eq!(response.variables[0].name, "http-proxy");
    assert!(response.variables[0].is_required());
}

#[test]
fn go_nulls_read_as_empty() {
    let response: GeneratePatchesResponse =
        serde_json::from_value(json!({"status": "Success", "items": null})).unwrap();
    assert!(response.items.is_empty());
    let item: GeneratePatchesResponseItem =
        serde_json::from_value(json!({"uid": "u", "patchType": "JSONPatch", "patch": null})).unwrap();
    assert!(item.patch.is_empty());
    let refused = serde_json::from_value::<GeneratePatchesResponseItem>(
        json!({"uid": "u", "patchType": "JSONPatch", "patch": "not base64!"}),
    );
    assert!(refused.is_err());
    assert!(serde_json::from_value::<DiscoveryResponse>(json!({"status": "Maybe"})).is_err());
}
