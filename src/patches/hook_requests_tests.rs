use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::api::runtime::{GeneratePatchesResponseItem, HolderReference, ResponseStatus};
use crate::patches::selector::Role;

fn value(name: &str, value: Value) -> ClusterVariable {
    serde_json::from_value(json!({"name": name, "value": value})).unwrap()
}

fn items() -> Vec<PatchItem> {
    let template = |kind: &str| {
        json!({"apiVersion": "infra/v1", "kind": kind, "metadata": {"name": "t", "namespace": "ns"},
               "spec": {"template": {"spec": {}}}})
    };
    let builtin = |scope: Value| Arc::new(json!({"builtin": scope}).as_object().cloned().unwrap());
    vec![
        PatchItem {
            role: Role::InfrastructureCluster,
            holder: HolderReference {
                kind: "Cluster".into(),
                field_path: "spec.infrastructureRef".into(),
                ..HolderReference::default()
            },
            object: template("ClusterTemplate"),
            variables: builtin(json!({"cluster": {"name": "c"}})),
            overrides: Arc::from(Vec::new()),
        },
        PatchItem {
            role: Role::ControlPlane,
            holder: HolderReference::default(),
            object: template("ControlPlaneTemplate"),
            variables: builtin(json!({"cluster": {"name": "c"}, "controlPlane": {"name": "cp"}})),
            overrides: Arc::from(vec![value("region", json!("eu")), value("other", json!(1))]),
        },
    ]
}

#[test]
fn requests_carry_the_patch_variables_globally_and_per_item() {
    let status: ClusterClassStatus = serde_json::from_value(json!({"variables": [
        {"name": "region", "definitions": [{"from": "ext", "schema": {"openAPIV3Schema": {"type": "string"}}}]},
        {"name": "other", "definitions": [{"from": "inline", "schema": {"openAPIV3Schema": {"type": "integer"}}}]}]}))
    .unwrap();
    let values = [value("region", json!("us")), value("other", json!(2))];
    let builtin = json!({"cluster": {"name": "c"}});
    let inputs = HookInputs {
        values: &values,
        builtin: &builtin,
        status: Some(&status),
    };
    let defined = defined_by(Some(&status), "ext");
    let request = generate_request(&items(), &inputs, &defined, &BTreeMap::new());
    let request = serde_json::to_value(request).unwrap();
    assert_eq!(
        request["variables"],
        json!([{"name": "region", "value": "us"}, {"name": "builtin", "value": {"cluster": {"name": "c"}}}])
    );
    assert_eq!(request["items"][0]["uid"], "00000000-0000-4000-8000-000000000000");
    assert_eq!(
        request["items"][0]["holderReference"]["fieldPath"],
        "spec.infrastructureRef"
    );
    assert!(
        request["items"][0].get("variables").is_none(),
        "no builtins of its own"
    );
    assert_eq!(
        request["items"][1]["variables"],
        json!([{"name": "region", "value": "eu"}, {"name": "builtin", "value": {"controlPlane": {"name": "cp"}}}])
    );
    let validation = validate_request(&items(), &inputs, &defined, &BTreeMap::new());
    assert_eq!(validation.items.len(), 2);
}

/// Seed 003: of a variable with conflicting definitions, an external patch is given the
/// value set for its own definition (`definitionFrom` its name), never the inline one.
#[test]
fn an_external_patch_gets_the_value_of_its_definition() {
    let status: ClusterClassStatus = serde_json::from_value(json!({"variables": [
        {"name": "proxy", "definitionsConflict": true, "definitions": [
            {"from": "inline", "schema": {"openAPIV3Schema": {"type": "string"}}},
            {"from": "ext", "schema": {"openAPIV3Schema": {"type": "object"}}}]}]}))
    .unwrap();
    let from = |from: &str, set: Value| ClusterVariable {
        definition_from: from.into(),
        ..value("proxy", set)
    };
    let values = [from("inline", json!("p")), from("ext", json!({"host": "h"}))];
    let builtin = json!({"cluster": {"name": "c"}});
    let inputs = HookInputs {
        values: &values,
        builtin: &builtin,
        status: Some(&status),
    };
    let request = generate_request(&[], &inputs, &defined_by(Some(&status), "ext"), &BTreeMap::new());
    assert_eq!(
        serde_json::to_value(&request.variables).unwrap(),
        json!([{"name": "proxy", "value": {"host": "h"}}, {"name": "builtin", "value": {"cluster": {"name": "c"}}}])
    );
}

fn response(patch_type: PatchType, patch: Value) -> GeneratePatchesResponse {
    GeneratePatchesResponse {
        api_version: String::new(),
        kind: String::new(),
        status: ResponseStatus::Success,
        message: String::new(),
        items: vec![GeneratePatchesResponseItem {
            uid: uid(1),
            patch_type,
            patch: serde_json::to_vec(&patch).unwrap(),
        }],
    }
}

#[test]
fn answers_change_the_template_spec_only() {
    let mut items = items();
    let patch = json!([{"op": "add", "path": "/spec/template/spec/image", "value": "x"}]);
    apply_response(&mut items, &response(PatchType::JsonPatch, patch)).unwrap();
    let merge = json!({"spec": {"template": {"spec": {"size": 2}}}});
    apply_response(&mut items, &response(PatchType::JsonMergePatch, merge)).unwrap();
    assert_eq!(
        items[1].object["spec"]["template"]["spec"],
        json!({"image": "x", "size": 2})
    );
    assert_eq!(items[0].object["spec"]["template"]["spec"], json!({}));
    let before = items.clone();
    for (patch, field) in [
        (
            json!([{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]),
            "metadata",
        ),
        (
            json!([{"op": "add", "path": "/spec/replicas", "value": 3}]),
            "spec.replicas",
        ),
        (
            json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}}),
            "spec.template.metadata",
        ),
    ] {
        let patch_type = if patch.is_array() {
            PatchType::JsonPatch
        } else {
            PatchType::JsonMergePatch
        };
        let err = apply_response(&mut items, &response(patch_type, patch)).unwrap_err();
        assert_eq!(
            err,
            format!(
                "failed to apply patch to template: only spec.template.spec may change, not {field:?}, in ControlPlaneTemplate ns/t"
            )
        );
        assert_eq!(
            items[1].object, before[1].object,
            "a refused answer changes nothing"
        );
    }
}

#[test]
fn answers_that_drop_the_template_spec_or_name_no_item_are_errors() {
    let mut items = items();
    let wipe = json!([{"op": "remove", "path": "/spec/template"}]);
    assert_eq!(
        apply_response(&mut items, &response(PatchType::JsonPatch, wipe)).unwrap_err(),
        "failed to apply patch to template: missing field \"spec.template.spec\" in ControlPlaneTemplate ns/t"
    );
    let mut unknown = response(PatchType::JsonMergePatch, json!({}));
    unknown.items[0].uid = "nope".into();
    assert_eq!(
        apply_response(&mut items, &unknown).unwrap_err(),
        "unable to find corresponding request item for patch with uid \"nope\""
    );
}

/// Issue 26: a copy bomb in an answer is refused at a bound, naming the template and
/// the operation; the template is left as it was.
#[test]
fn an_answer_over_a_bound_is_refused_naming_the_template() {
    let mut items = items();
    let before = items.clone();
    let mut bomb = vec![json!({"op": "add", "path": "/spec/template/spec/a", "value": [0, 0]})];
    bomb.extend(
        (0..30).map(
            |_| json!({"op": "copy", "from": "/spec/template/spec/a", "path": "/spec/template/spec/a/0"}),
        ),
    );
    let err = apply_response(&mut items, &response(PatchType::JsonPatch, Value::Array(bomb))).unwrap_err();
    assert!(
        err.starts_with(
            "failed to apply patch: error applying json patch (RFC6902) to ControlPlaneTemplate ns/t: operation 18 (copy "
        ),
        "{err}"
    );
    assert!(err.ends_with("more than 524288 values"), "{err}");
    assert_eq!(items[1].object, before[1].object);
    let empty = response(PatchType::JsonPatch, json!([]));
    apply_response(&mut items, &empty).unwrap();
    assert_eq!(items[1].object, before[1].object);
}
