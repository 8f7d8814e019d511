//! Unit tests of `walk.rs`.

use super::*;
use serde_json::json;

const P: &str = "spec.topology.variables[v].value";

fn errors(schema: &str, value: Value) -> Vec<String> {
    let schema = Schema::compile(&serde_yaml_ng::from_str(schema).unwrap()).unwrap();
    let base = FieldPath::new("spec")
        .children(&["topology", "variables"])
        .key("v")
        .child("value");
    let mut errors = FieldErrors::new();
    validate(&schema, &value, &base, &value, &mut errors);
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn types_keep_checking_enum_and_accept_integral_numbers_as_integers() {
    assert_eq!(
        errors("{type: integer}", json!("1")),
        [format!(
            r#"{P}: Invalid value: "\"1\"": must be of type integer: "string""#
        )]
    );
    assert_eq!(
        errors("{type: string, enum: ['1', '2']}", json!(3)),
        [
            format!(r#"{P}: Invalid value: "3": must be of type string: "integer""#),
            format!(r#"{P}: Unsupported value: "3": supported values: "1", "2""#),
        ]
    );
    assert!(errors("{type: integer}", json!(3.0)).is_empty());
    assert!(errors("{type: number, enum: [1, 2]}", json!(2.0)).is_empty());
    assert_eq!(
        errors("{type: integer}", json!(3.5)),
        [format!(
            r#"{P}: Invalid value: "3.5": must be of type integer: "number""#
        )]
    );
    assert_eq!(
        errors("{type: string}", Value::Null),
        [format!(
            r#"{P}: Invalid value: "null": must be of type string: "null""#
        )]
    );
    assert_eq!(
        errors("{x-kubernetes-int-or-string: true}", json!(true)),
        [format!(
            r#"{P}: Invalid value: "true": must be of type integer,string: "boolean""#
        )]
    );
    assert!(errors("{}", Value::Null).is_empty());
}

#[test]
fn bounds_strings_and_formats() {
    assert_eq!(
        errors("{type: integer, minimum: 1, maximum: 10}", json!(0)),
        [format!(
            r#"{P}: Invalid value: "0": should be greater than or equal to 1"#
        )]
    );
    assert_eq!(
        errors("{type: number, maximum: 10, exclusiveMaximum: true}", json!(10)),
        [format!(r#"{P}: Invalid value: "10": should be less than 10"#)]
    );
    assert_eq!(
        errors(
            "{type: string, maxLength: 2, minLength: 5, pattern: '^[0-9]+$'}",
            json!("abc")
        ),
        [
            format!("{P}: Too long: may not be more than 2 bytes"),
            format!(r#"{P}: Invalid value: "\"abc\"": should be at least 5 chars long"#),
            format!(r#"{P}: Invalid value: "\"abc\"": should match '^[0-9]+$'"#),
        ]
    );
    assert_eq!(
        errors("{type: string, format: uri}", json!("not a URI")),
        [format!(
            r#"{P}: Invalid value: "\"not a URI\"": must be of type uri: "not a URI""#
        )]
    );
}

#[test]
fn nested_fields_are_named_as_kube_openapi_names_them() {
    let schema =
        "{type: object, required: [url], properties: {enabled: {type: boolean}, url: {type: string}, \
                      ports: {type: array, items: {type: integer, maximum: 5}}}}";
    let value = json!({"enabled": "yes", "ports": [1, 9]});
    let shown = r#"{\"enabled\":\"yes\",\"ports\":[1,9]}"#;
    assert_eq!(
        errors(schema, value),
        [
            format!(
                r#"{P}.enabled: Invalid value: "{shown}": enabled in body must be of type boolean: "string""#
            ),
            format!(
                r#"{P}.ports[1]: Invalid value: "{shown}": ports[1] in body should be less than or equal to 5"#
            ),
            format!("{P}.url: Required value"),
        ]
    );
    assert_eq!(
        errors(
            "{type: array, items: {type: string, enum: [a]}}",
            json!(["a", "b"])
        ),
        [format!(
            r#"{P}.[1]: Unsupported value: "[\"a\",\"b\"]": supported values: "a""#
        )]
    );
    assert_eq!(
        errors(
            "{type: object, additionalProperties: {type: string}}",
            json!({"k": 1})
        ),
        [format!(
            r#"{P}.k: Invalid value: "{{\"k\":1}}": .k in body must be of type string: "integer""#
        )]
    );
}

#[test]
fn sizes_and_uniqueness() {
    assert_eq!(
        errors(
            "{type: array, items: {type: string}, maxItems: 1}",
            json!(["a", "b"])
        ),
        [format!(
            r#"{P}: Too many: "[\"a\",\"b\"]": must have at most 1 items"#
        )]
    );
    assert_eq!(
        errors(
            "{type: array, items: {type: string}, minItems: 3, uniqueItems: true}",
            json!(["a", "a"])
        ),
        [
            format!(r#"{P}: Invalid value: "[\"a\",\"a\"]": should have at least 3 items"#),
            format!(r#"{P}: Invalid value: "[\"a\",\"a\"]": shouldn't contain duplicates"#),
        ]
    );
    assert_eq!(
        errors(
            "{type: object, maxProperties: 1, x-kubernetes-preserve-unknown-fields: true}",
            json!({"b": 1, "a": 2})
        ),
        [format!(
            r#"{P}: Too many: "{{\"a\":2,\"b\":1}}": must have at most 1 items"#
        )]
    );
    assert_eq!(
        errors("{type: object, minProperties: 1}", json!({})),
        [format!(
            r#"{P}: Invalid value: "{{}}": should have at least 1 properties"#
        )]
    );
}

#[test]
fn enums_of_objects_print_go_json() {
    assert_eq!(
        errors(
            "{type: object, x-kubernetes-preserve-unknown-fields: true, enum: [{url: u, location: l}]}",
            json!({"location": "x"})
        ),
        [format!(
            r#"{P}: Unsupported value: "{{\"location\":\"x\"}}": supported values: "{{\"location\":\"l\",\"url\":\"u\"}}""#
        )]
    );
}

const AB: &str = "properties: {a: {type: boolean}, b: {type: boolean}}";

#[test]
fn combinators_report_at_the_value_with_inner_errors() {
    assert_eq!(
        errors(
            &format!("{{type: object, {AB}, oneOf: [{{required: [a]}}, {{required: [b]}}]}}"),
            json!({"a": true, "b": true})
        ),
        [format!(
            r#"{P}: Invalid value: "{{\"a\":true,\"b\":true}}": "" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        )]
    );
    assert_eq!(
        errors(
            &format!("{{type: object, {AB}, oneOf: [{{required: [a]}}, {{required: [b]}}]}}"),
            json!({})
        ),
        [
            format!(
                r#"{P}: Invalid value: "{{}}": "" must validate one and only one schema (oneOf). Found none valid"#
            ),
            format!("{P}.a: Required value"),
        ]
    );
    assert_eq!(
        errors(
            &format!("{{type: object, {AB}, allOf: [{{required: [a]}}, {{required: [b]}}]}}"),
            json!({"a": true})
        ),
        [
            format!("{P}.b: Required value"),
            format!(r#"{P}: Invalid value: "{{\"a\":true}}": "" must validate all the schemas (allOf)"#),
        ]
    );
    assert_eq!(
        errors(
            &format!("{{type: object, {AB}, anyOf: [{{required: [a]}}, {{required: [b]}}]}}"),
            json!({})
        ),
        [
            format!(r#"{P}: Invalid value: "{{}}": "" must validate at least one schema (anyOf)"#),
            format!("{P}.a: Required value"),
        ]
    );
    assert_eq!(
        errors(
            &format!("{{type: object, {AB}, not: {{required: [a, b]}}}}"),
            json!({"a": true, "b": true})
        ),
        [format!(
            r#"{P}: Invalid value: "{{\"a\":true,\"b\":true}}": "" must not validate the schema (not)"#
        )]
    );
    assert_eq!(
        errors(
            "{type: object, properties: {n: {type: string, not: {enum: [x]}}}}",
            json!({"n": "x"})
        ),
        [format!(
            r#"{P}: Invalid value: "{{\"n\":\"x\"}}": "n" must not validate the schema (not)"#
        )]
    );
}
