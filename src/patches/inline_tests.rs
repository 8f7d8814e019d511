//! Unit tests of `inline.rs`.

use super::*;
use serde_json::json;

fn patch(yaml: &str) -> CompiledPatch {
    CompiledPatch::compile(&serde_yaml_ng::from_str(yaml).unwrap()).unwrap()
}

fn item(role: Role, variables: Value) -> PatchItem {
    PatchItem {
        role,
        holder: HolderReference::default(),
        overrides: Arc::from(Vec::new()),
        object: json!({"apiVersion": "infra/v1", "kind": "MachineTemplate", "metadata": {"name": "t"},
                           "spec": {"template": {"spec": {"list": ["a"]}}}}),
        variables: Arc::new(variables.as_object().cloned().unwrap()),
    }
}

const PATCH: &str = r#"
name: image
enabledIf: '{{ if .enabled }}true{{ end }}'
definitions:
- selector: {apiVersion: infra/v1, kind: MachineTemplate, matchResources: {machineDeploymentClass: {names: ["*-worker"]}}}
  jsonPatches:
  - {op: add, path: /spec/template/spec/image, valueFrom: {template: 'node:{{ .builtin.machineDeployment.version | replace "+" "_" }}'}}
  - {op: add, path: /spec/template/spec/size, valueFrom: {variable: sizes.large}}
  - {op: add, path: /spec/template/spec/list/0, value: first}
  - {op: replace, path: /spec/template/spec/port, valueFrom: {template: '8080'}}
"#;

#[test]
fn a_template_changing_its_data_does_not_change_what_later_patches_see() {
    let setter = patch(
        r#"
name: setter
definitions:
- selector: {apiVersion: infra/v1, kind: MachineTemplate, matchResources: {machineDeploymentClass: {names: [w]}}}
  jsonPatches:
  - {op: add, path: /spec/template/spec/a, valueFrom: {template: '{{ $_ := set .sizes "large" 99 }}{{ .sizes.large }}'}}
"#,
    );
    let reader = patch(
        r#"
name: reader
definitions:
- selector: {apiVersion: infra/v1, kind: MachineTemplate, matchResources: {machineDeploymentClass: {names: [w]}}}
  jsonPatches:
  - {op: add, path: /spec/template/spec/b, valueFrom: {template: '{{ .sizes.large }}'}}
"#,
    );
    let role = Role::MachineDeployment { class: "w".into() };
    let mut items = vec![item(role, json!({"sizes": {"large": 8}}))];
    let caches = ItemCache::of_items(&items);
    let options = ExecOptions::default();
    reader.apply_cached(&mut items, &caches, &options).unwrap();
    setter.apply_cached(&mut items, &caches, &options).unwrap();
    reader.apply_cached(&mut items, &caches, &options).unwrap();
    let spec = &items[0].object["spec"]["template"]["spec"];
    assert_eq!((&spec["a"], &spec["b"]), (&json!(99), &json!(8)));
}

#[test]
fn applies_matching_enabled_items_only() {
    let vars = json!({"enabled": true, "sizes": {"large": 8},
                          "builtin": {"machineDeployment": {"version": "v1.31.0+k3s1"}}});
    let mut items = vec![
        item(
            Role::MachineDeployment {
                class: "default-worker".into(),
            },
            vars.clone(),
        ),
        item(Role::MachineDeployment { class: "gpu".into() }, vars.clone()),
        item(
            Role::MachineDeployment {
                class: "big-worker".into(),
            },
            json!({"enabled": false}),
        ),
    ];
    items[0].object["spec"]["template"]["spec"]["port"] = json!(1);
    patch(PATCH).apply(&mut items, &ExecOptions::default()).unwrap();
    assert_eq!(
        items[0].object["spec"]["template"]["spec"],
        json!({"list": ["first", "a"], "image": "node:v1.31.0_k3s1", "size": 8, "port": 8080})
    );
    assert_eq!(
        items[1].object["spec"]["template"]["spec"],
        json!({"list": ["a"]}),
        "class does not match"
    );
    assert_eq!(
        items[2].object["spec"]["template"]["spec"],
        json!({"list": ["a"]}),
        "enabledIf is false"
    );
}

#[test]
fn errors_name_the_patch_definition_and_op() {
    let vars = json!({"enabled": true, "sizes": {}, "builtin": {"machineDeployment": {"version": "v1"}}});
    let mut items = vec![item(
        Role::MachineDeployment {
            class: "a-worker".into(),
        },
        vars,
    )];
    let err = patch(PATCH)
        .apply(&mut items, &ExecOptions::default())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"patch "image", definition 0, op 1: failed to calculate value: variable "sizes.large" not found"#
    );
}

#[test]
fn replace_of_a_missing_field_fails_naming_the_template() {
    let vars =
        json!({"enabled": true, "sizes": {"large": 1}, "builtin": {"machineDeployment": {"version": "v1"}}});
    let mut items = vec![item(
        Role::MachineDeployment {
            class: "a-worker".into(),
        },
        vars,
    )];
    let err = patch(PATCH)
        .apply(&mut items, &ExecOptions::default())
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(r#"patch "image": cannot apply to MachineTemplate "t": "#),
        "{err}"
    );
}

#[test]
fn value_and_value_from_together_do_not_compile() {
    let err = CompiledPatch::compile(
        &serde_yaml_ng::from_str(
            "name: p\ndefinitions:\n- selector: {apiVersion: a/v1, kind: T}\n  jsonPatches:\n  \
                 - {op: add, path: /spec/x, value: 1, valueFrom: {variable: v}}\n",
        )
        .unwrap(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"patch "p", definition 0, op 0: only one of value and valueFrom may be set"#
    );
}

#[test]
fn a_patch_that_removes_the_template_spec_is_an_error_naming_it() {
    for (path, missing) in [
        ("/spec/template/spec", "spec.template.spec"),
        ("/spec/template", "spec.template.spec"),
        ("/spec", "spec"),
    ] {
        let yaml = format!(
                "name: wipe\ndefinitions:\n- selector: {{apiVersion: infra/v1, kind: MachineTemplate, matchResources: {{controlPlane: true}}}}\n  \
                 jsonPatches:\n  - {{op: remove, path: {path}}}\n"
            );
        let mut items = [item(Role::ControlPlane, json!({}))];
        let err = patch(&yaml)
            .apply(&mut items, &ExecOptions::default())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(r#"patch "wipe": cannot apply to MachineTemplate "t": missing field "{missing}""#)
        );
    }
}
