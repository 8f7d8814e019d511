use serde_json::json;

use crate::api::JSONSchemaProps;
use crate::field::FieldPath;
use crate::variables::cel::{CelRules, Shown};

fn shown_failures(schema: &str, value: serde_json::Value, shown: Shown) -> Vec<String> {
    let props: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
    let rules = CelRules::compile(&props, &FieldPath::new("schema")).unwrap();
    rules
        .validate(&value, None, &FieldPath::new("v"), shown)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn failures(schema: &str, value: serde_json::Value) -> Vec<String> {
    shown_failures(schema, value, Shown::Json)
}

#[test]
fn escaped_property_names_evaluate() {
    for (name, access) in [
        ("foo-bar", "foo__dash__bar"),
        ("a.b", "a__dot__b"),
        ("__x", "__underscores__x"),
        ("my_field", "my_field"),
        ("namespace", "__namespace__"),
        ("x/y", "x__slash__y"),
    ] {
        let schema = format!(
            "{{type: object, properties: {{'{name}': {{type: integer}}}}, \
             x-kubernetes-validations: [{{rule: 'self.{access} == 1'}}]}}"
        );
        assert!(
            failures(&schema, json!({ name: 1 })).is_empty(),
            "{name} as {access}"
        );
        assert_eq!(
            failures(&schema, json!({ name: 2 })).len(),
            1,
            "{name} as {access}"
        );
    }
}

#[test]
fn an_escaped_name_is_reached_only_through_its_escape() {
    let unescaped: JSONSchemaProps = serde_yaml_ng::from_str(
        "{type: object, properties: {a__b: {type: integer}}, \
         x-kubernetes-validations: [{rule: 'self.a__b == 1'}]}",
    )
    .unwrap();
    let refused = CelRules::compile(&unescaped, &FieldPath::new("schema")).unwrap_err();
    assert!(
        refused
            .iter()
            .any(|e| e.to_string().contains("undefined field 'a__b'")),
        "{refused:?}"
    );
    let schema = "{type: object, properties: {a__b: {type: integer}}, \
                  x-kubernetes-validations: [{rule: 'self.a__underscores__b == 1'}]}";
    assert!(failures(schema, json!({"a__b": 1})).is_empty());
    assert_eq!(
        failures(schema, json!({"a__b": 2})),
        [r#"v: Invalid value: "{\"a__b\":2}": failed rule: self.a__underscores__b == 1"#]
    );
}

#[test]
fn map_keys_are_not_escaped_and_entries_report_as_keys() {
    let schema = "{type: object, additionalProperties: {type: integer, \
                  x-kubernetes-validations: [{rule: 'self > 0', message: positive}]}, \
                  x-kubernetes-validations: [{rule: \"self['foo-bar'] > 0\", message: has foo-bar}]}";
    assert!(failures(schema, json!({"foo-bar": 1})).is_empty());
    assert_eq!(
        failures(schema, json!({"foo-bar": -1})),
        [
            r#"v: Invalid value: "{\"foo-bar\":-1}": has foo-bar"#,
            r#"v[foo-bar]: Invalid value: "{\"foo-bar\":-1}": positive"#,
        ]
    );
    assert_eq!(
        shown_failures(schema, json!({"foo-bar": -1}), Shown::NodeType),
        [
            r#"v: Invalid value: "object": has foo-bar"#,
            r#"v[foo-bar]: Invalid value: "integer": positive"#,
        ]
    );
}

#[test]
fn nested_rules_see_one_value_and_report_parents_first() {
    let schema = "{type: object, properties: {items: {type: array, items: {type: object, \
                  properties: {n: {type: integer}}, \
                  x-kubernetes-validations: [{rule: 'self.n < 3', message: small}]}}}, \
                  x-kubernetes-validations: [{rule: 'self.items.all(i, i.n < 3)', message: all small}]}";
    assert_eq!(
        failures(schema, json!({"items": [{"n": 1}, {"n": 5}]})),
        [
            r#"v: Invalid value: "{\"items\":[{\"n\":1},{\"n\":5}]}": all small"#,
            r#"v.items[1]: Invalid value: "{\"items\":[{\"n\":1},{\"n\":5}]}": small"#,
        ]
    );
}

#[test]
fn rules_see_the_value_as_written_without_schema_defaults() {
    let schema = "{type: object, properties: {n: {type: integer, default: 5}, \
                  o: {type: object, default: {}, properties: {k: {type: string, default: x}}}}, \
                  x-kubernetes-validations: [{rule: '!has(self.n) && !has(self.o)', message: nothing added}, \
                  {rule: 'self.n == 5', message: five}]}";
    assert_eq!(
        failures(schema, json!({})),
        [r#"v: Invalid value: "{}": no such key: n evaluating rule: five"#]
    );
    let schema = "{type: object, properties: {o: {type: object, \
                  properties: {k: {type: string, default: x}}, \
                  x-kubernetes-validations: [{rule: 'self.k == \"x\"'}]}}}";
    assert_eq!(
        failures(schema, json!({"o": {}})),
        [r#"v.o: Invalid value: "{\"o\":{}}": no such key: k evaluating rule: self.k == "x""#]
    );
}
