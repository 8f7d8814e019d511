//! Tests of `values.rs`: defaulting and validation of Cluster values, `definitionFrom` (seed 003)
//! included.

use super::*;
use serde_json::{json, Value};

const STATUS: &str = r#"
- name: region
  definitions: [{from: inline, required: true, schema: {openAPIV3Schema: {type: string, default: eu}}}]
- name: etcd
  definitions: [{from: inline, required: false, schema: {openAPIV3Schema: {type: object, default: {},
    properties: {tag: {type: string, default: "3.5"}, dir: {type: string}},
    x-kubernetes-validations: [{rule: "!has(self.dir) || self.dir.startsWith('/')", message: dir must be absolute}]}}}]
- name: size
  definitions: [{from: inline, required: false, schema: {openAPIV3Schema: {type: integer,
    x-kubernetes-validations: [{rule: self >= oldSelf, message: may not shrink}]}}}]
- name: proxy
  definitionsConflict: true
  definitions:
  - {from: inline, required: false, schema: {openAPIV3Schema: {type: string, default: p.example.com}}}
  - {from: lb, required: true, schema: {openAPIV3Schema: {type: object, properties: {host: {type: string}}}}}
"#;

fn compiled() -> CompiledVariables {
    CompiledVariables::compile(&serde_yaml_ng::from_str::<Vec<ClusterClassStatusVariable>>(STATUS).unwrap())
}

/// Values as v1beta1 writes them: `definitionFrom` (not serialised on the hub) is read too.
fn values(yaml: &str) -> Vec<ClusterVariable> {
    let entries: Vec<Value> = serde_yaml_ng::from_str(yaml).unwrap();
    entries
        .into_iter()
        .map(|entry| {
            let mut value: ClusterVariable = serde_json::from_value(entry.clone()).unwrap();
            value.definition_from = entry["definitionFrom"].as_str().unwrap_or_default().to_owned();
            value
        })
        .collect()
}

fn path() -> FieldPath {
    FieldPath::new("spec").children(&["topology", "variables"])
}

fn messages(errors: FieldErrors) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn defaults_keep_order_fill_nested_and_append_in_class_order() {
    let defaulted = compiled()
        .default_cluster_variables(
            values("[{name: etcd, value: {dir: /d}}, {name: size, value: 3}]"),
            &path(),
            None,
        )
        .unwrap();
    let got: Vec<(String, String, Value)> = defaulted
        .into_iter()
        .map(|v| (v.name, v.definition_from, v.value))
        .collect();
    assert_eq!(
        got,
        [
            ("etcd".into(), "".into(), json!({"dir": "/d", "tag": "3.5"})),
            ("size".into(), "".into(), json!(3)),
            ("region".into(), "".into(), json!("eu")),
            ("proxy".into(), "inline".into(), json!("p.example.com")),
        ]
    );
}

#[test]
fn variables_without_definitions_make_every_list_invalid() {
    let status = "[{name: a, definitions: []}, {name: b, definitions: []},
                   {name: c, definitions: [{from: inline, required: false, schema: {openAPIV3Schema: {type: string}}}]}]";
    let compiled = CompiledVariables::compile(&serde_yaml_ng::from_str::<Vec<_>>(status).unwrap());
    let expected = r#"spec.topology.variables: Invalid value: "[Name: a,Name: b,Name: c]": variable definitions in the ClusterClass not valid: [variable "a" has no definitions, variable "b" has no definitions]"#;
    let defaulted = compiled.default_cluster_variables(values("[{name: c, value: x}]"), &path(), None);
    assert_eq!(messages(defaulted.unwrap_err()), [expected]);
    assert_eq!(
        messages(compiled.validate_cluster_variables(&values("[]"), None, &path())),
        [expected]
    );
    let overrides = FieldPath::new("spec").children(&["topology", "controlPlane", "variables", "overrides"]);
    let errors = compiled.validate_override_variables(&values("[{name: c, value: x}]"), None, &overrides);
    assert_eq!(
        errors.iter().next().map(|e| e.kind.cause_type()),
        Some("FieldValueTypeInvalid")
    );
    let one = CompiledVariables::compile(
        &serde_yaml_ng::from_str::<Vec<_>>("[{name: a, definitions: []}]").unwrap(),
    );
    assert_eq!(
        messages(one.validate_cluster_variables(&[], None, &path())),
        [
            r#"spec.topology.variables: Invalid value: "[Name: a]": variable definitions in the ClusterClass not valid: variable "a" has no definitions"#
        ]
    );
}

#[test]
fn overrides_get_nested_defaults_but_no_new_entries() {
    let defaulted = compiled()
        .default_override_variables(values("[{name: etcd, value: {}}]"), &path(), None)
        .unwrap();
    assert_eq!(defaulted.len(), 1);
    assert_eq!(defaulted[0].value, json!({"tag": "3.5"}));
}

#[test]
fn required_undefined_and_conflicting_values() {
    let errors = compiled().validate_cluster_variables(
        &values("[{name: nope, value: 1}, {name: proxy, value: x}, {name: region, value: eu}]"),
        None,
        &path(),
    );
    assert_eq!(
        messages(errors),
        [
            r#"spec.topology.variables: Required value: required variable "proxy" must be set for the definition from "lb""#,
            r#"spec.topology.variables[nope]: Invalid value: "1": variable is not defined"#,
            r#"spec.topology.variables[proxy].definitionFrom: Required value: variable "proxy" has conflicting definitions: set one value per definition, with definitionFrom set to one of "inline", "lb" (a cluster.x-k8s.io/v1beta1 field: write the Cluster through cluster.x-k8s.io/v1beta1)"#,
        ]
    );
}

#[test]
fn schema_unknown_fields_and_cel_with_old_values() {
    let vars = values(
        "[{name: region, value: eu}, {name: proxy, definitionFrom: lb, value: {host: h, port: 1}},
          {name: etcd, value: {dir: rel}}, {name: size, value: 2}]",
    );
    let old = values("[{name: size, value: 5}]");
    assert_eq!(
        messages(compiled().validate_cluster_variables(&vars, Some(&old), &path())),
        [
            r#"spec.topology.variables[proxy]: Invalid value: "{\"host\":\"h\",\"port\":1}": failed validation: "port" field(s) are not specified in the variable schema of variable "proxy""#,
            r#"spec.topology.variables[etcd].value: Invalid value: "{\"dir\":\"rel\"}": dir must be absolute"#,
            r#"spec.topology.variables[size].value: Invalid value: "2": may not shrink"#,
        ]
    );
}

#[test]
fn repeated_entries_and_mixed_definition_from() {
    let errors = compiled().validate_override_variables(
        &values(
            "[{name: size, value: 1}, {name: size, value: 2}, {name: proxy, definitionFrom: lb, value: {}},
              {name: proxy, definitionFrom: lb, value: {}}, {name: region, value: a}, {name: region, definitionFrom: inline, value: b}]",
        ),
        None,
        &path(),
    );
    assert_eq!(
        messages(errors),
        [
            r#"spec.topology.variables[size]: Invalid value: "2": variable "size" is set more than once"#,
            r#"spec.topology.variables[proxy]: Invalid value: "{}": variable "proxy" from "lb" is set more than once"#,
            r#"spec.topology.variables[region].definitionFrom: Invalid value: "inline": variable "region" is set both with and without definitionFrom"#,
        ]
    );
}

#[test]
fn a_list_setting_a_variable_twice_is_not_defaulted() {
    let twice = values("[{name: size, value: 1}, {name: size, value: 2}, {name: size, value: 3}]");
    let errors = compiled()
        .default_cluster_variables(twice, &path(), None)
        .unwrap_err();
    assert_eq!(
        messages(errors),
        [
            r#"spec.topology.variables[size]: Invalid value: "2": variable "size" is set more than once"#,
            r#"spec.topology.variables[size]: Invalid value: "3": variable "size" is set more than once"#,
        ]
    );
}

#[test]
fn null_values_take_the_top_level_default() {
    let defaulted = compiled()
        .default_override_variables(
            values("[{name: region, value: null}, {name: etcd, value: null}]"),
            &path(),
            None,
        )
        .unwrap();
    let got: Vec<Value> = defaulted.into_iter().map(|v| v.value).collect();
    assert_eq!(got, [json!("eu"), json!({"tag": "3.5"})]);
}

/// On the hub an entry serialises without `definitionFrom` (the Cluster's annotation holds it).
#[test]
fn appended_entries_are_recorded_as_they_serialise() {
    for from in ["", "lb"] {
        let entry = ClusterVariable {
            name: "proxy".into(),
            definition_from: from.into(),
            value: json!({"host": "h"}),
        };
        assert_eq!(hub_entry(&entry), serde_json::to_value(&entry).unwrap());
    }
}
