//! Unit tests of `checks.rs`.

use super::super::CelRules;
use crate::api::JSONSchemaProps;
use crate::field::FieldPath;

fn errors(schema: &str) -> Vec<String> {
    let props: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
    match CelRules::compile(&props, &FieldPath::new("schema")) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

fn root_errors(schema: &str) -> Vec<String> {
    let props: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
    match CelRules::compile_root(&props, &FieldPath::new("schema")) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn blank_rules_bad_messages_and_reasons() {
    assert_eq!(
        errors("{type: string, x-kubernetes-validations: [{rule: ' '}]}"),
        ["schema.x-kubernetes-validations[0].rule: Required value: rule is not specified"]
    );
    assert_eq!(
        errors("{type: string, x-kubernetes-validations: [{rule: 'self != \"\"', message: \"a\\nb\"}]}"),
        [
            r#"schema.x-kubernetes-validations[0].message: Invalid value: "a\nb": message must not contain line breaks"#
        ]
    );
    assert_eq!(
            errors("{type: string, x-kubernetes-validations: [{rule: \"self != ''\\n|| true\"}]}"),
            ["schema.x-kubernetes-validations[0].message: Required value: message must be specified if rule contains line breaks"]
        );
    assert_eq!(
        errors("{type: string, x-kubernetes-validations: [{rule: 'true', reason: Nope}]}"),
        [
            r#"schema.x-kubernetes-validations[0].reason: Unsupported value: "Nope": supported values: "FieldValueRequired", "FieldValueInvalid", "FieldValueDuplicate", "FieldValueForbidden""#
        ]
    );
}

#[test]
fn field_paths_compile_errors_and_old_self_in_lists() {
    assert_eq!(
            errors("{type: object, properties: {a: {type: string}}, x-kubernetes-validations: [{rule: 'true', fieldPath: .b}]}"),
            [r#"schema.x-kubernetes-validations[0].fieldPath: Invalid value: ".b": fieldPath must be a valid path: does not refer to a valid field"#]
        );
    assert!(errors("{type: object, properties: {a: {type: string}}, x-kubernetes-validations: [{rule: 'true', fieldPath: \"['a']\"}]}").is_empty());
    let bad = errors("{type: string, x-kubernetes-validations: [{rule: 'self ==='}]}");
    assert_eq!(bad.len(), 1);
    assert!(
            bad[0].starts_with(
                r#"schema.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self ===", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed"#
            ),
            "{bad:?}"
        );
    assert_eq!(
            errors("{type: array, maxItems: 10, items: {type: string, maxLength: 10, x-kubernetes-validations: [{rule: 'self == oldSelf', message: m}]}}"),
            [r#"schema.items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within schema.items"#]
        );
}

#[test]
fn unbounded_rules_exceed_the_per_rule_and_the_per_variable_budgets() {
    let unbounded = errors(
            "{type: array, items: {type: array, items: {type: string}}, x-kubernetes-validations: \
             [{rule: \"self.all(x, x.all(y, y.matches('^a+$') && self.exists(z, z.exists(w, w == y))))\", message: m}]}",
        );
    assert_eq!(
            unbounded,
            [
                "schema.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
                "schema.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
                "schema: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
            ]
        );
    assert!(errors(
        "{type: array, maxItems: 5, items: {type: string, maxLength: 10}, x-kubernetes-validations: \
                        [{rule: \"self.all(x, x.matches('^a+$'))\", message: m}]}"
    )
    .is_empty());
}

#[test]
fn rule_costs_scale_with_the_cardinality_of_their_node() {
    // One string rule is cheap alone; under 200,000 list items (each a map of up to 100
    // strings of up to 10,000 characters) it is not.
    let nested = |max_items: u64| {
        format!(
                "{{type: array, maxItems: {max_items}, items: {{type: object, maxProperties: 100, additionalProperties: \
                 {{type: string, maxLength: 10000, x-kubernetes-validations: [{{rule: \"self.contains('a')\", message: m}}]}}}}}}"
            )
    };
    assert!(errors(&nested(10)).is_empty());
    let found = errors(&nested(200_000));
    assert!(
            found[0].starts_with("schema.items.additionalProperties.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x"),
            "{found:?}"
        );
}

#[test]
fn message_expressions_have_a_cost_of_their_own() {
    let found = errors(
        "{type: array, items: {type: string}, x-kubernetes-validations: [{rule: 'size(self) < 5', \
             messageExpression: \"self.map(x, self.map(y, x + y)).join(',')\"}]}",
    );
    assert!(
            found[0].starts_with("schema.x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of"),
            "{found:?}"
        );
}

#[test]
fn messages_follow_the_reference_order_of_checks() {
    let long = "x".repeat(2049);
    assert_eq!(
        errors(&format!(
            "{{type: string, x-kubernetes-validations: [{{rule: 'true', message: {long}}}]}}"
        )),
        [
            r#"schema.x-kubernetes-validations[0].message: Invalid value: "xxxxxxxxxx...": message must have a maximum length of 2048 characters"#
        ]
    );
    assert_eq!(
        errors("{type: string, x-kubernetes-validations: [{rule: 'true', message: '  '}]}"),
        [
            r#"schema.x-kubernetes-validations[0].message: Invalid value: "  ": message must be non-empty if specified"#
        ]
    );
    // A trailing line break is trimmed away; a rule on two lines needs a message even with a
    // messageExpression.
    assert!(
        errors("{type: string, x-kubernetes-validations: [{rule: 'true', message: \"m\\n\"}]}").is_empty()
    );
    assert_eq!(
            errors("{type: string, x-kubernetes-validations: [{rule: \"true &&\\r true\", messageExpression: \"'m'\"}]}"),
            ["schema.x-kubernetes-validations[0].message: Required value: message must be specified if rule contains line breaks"]
        );
    assert_eq!(
            errors("{type: string, x-kubernetes-validations: [{rule: 'true', messageExpression: ' '}]}"),
            ["schema.x-kubernetes-validations[0].messageExpression: Required value: messageExpression must be non-empty if specified"]
        );
}

#[test]
fn field_paths_are_checked_as_the_api_server_checks_them() {
    let schema = |field_path: &str| {
        format!(
                "{{type: object, properties: {{a: {{type: object, additionalProperties: {{type: string}}}}, l: {{type: array, items: {{type: string}}}}}}, \
                 x-kubernetes-validations: [{{rule: 'true', fieldPath: \"{field_path}\"}}]}}"
            )
    };
    for ok in [".a", ".a.anyKey", "['a']['x.y']", ".l"] {
        assert!(errors(&schema(ok)).is_empty(), "{ok}");
    }
    for (bad, why) in [
        (".l[0]", "expected single quoted string but got 0"),
        (".l.x", "does not refer to a valid field"),
        ("a", "expected [ or . but got: a"),
        (".a.", "unexpected end of JSON path"),
        ("['a'", "unexpected end of JSON path"),
        (" ", "expected [ or . but got:  "),
    ] {
        let found = errors(&schema(bad));
        assert_eq!(
                found.last().map(String::as_str),
                Some(format!(r#"schema.x-kubernetes-validations[0].fieldPath: Invalid value: "{bad}": fieldPath must be a valid path: {why}"#).as_str()),
                "{bad}"
            );
    }
    assert_eq!(
        errors(&schema(" "))[0],
        r#"schema.x-kubernetes-validations[0].fieldPath: Invalid value: " ": fieldPath must be non-empty if specified"#
    );
}

#[test]
fn rules_of_a_list_variable_with_rules_at_its_root_cannot_be_typed() {
    let untyped = "Internal error: internal error: failed to construct type information for \
                       x-kubernetes-validations rules: unable to convert structural schema to CEL declarations";
    assert_eq!(
            root_errors("{type: array, maxItems: 5, items: {type: string, maxLength: 5, x-kubernetes-validations: [{rule: 'self ==='}]}, \
                    x-kubernetes-validations: [{rule: 'size(self) > 0'}]}"),
            [
                format!("schema.items.x-kubernetes-validations: {untyped}"),
                format!("schema.x-kubernetes-validations: {untyped}"),
            ]
        );
    // Without rules at the root, each node is typed on its own, and so is a list below it.
    assert!(errors("{type: array, maxItems: 5, items: {type: string}, x-kubernetes-validations: [{rule: 'size(self) > 0'}]}")
            .is_empty());
    assert!(root_errors(
        "{type: array, maxItems: 5, items: {type: string, maxLength: 5, \
                        x-kubernetes-validations: [{rule: 'self != \"\"'}]}}"
    )
    .is_empty());
}

#[test]
fn shape_errors_below_a_node_skip_the_compilation_of_its_rules() {
    assert_eq!(
        errors(
            "{type: object, properties: {a: {type: string, x-kubernetes-validations: [{rule: ' '}]}}, \
                    x-kubernetes-validations: [{rule: 'self ==='}]}"
        ),
        ["schema.properties[a].x-kubernetes-validations[0].rule: Required value: rule is not specified"]
    );
}
