//! Checks of a ClusterClass's variable definitions (`spec.variables`): names, structural
//! schemas, and defaults, examples and enum values that the schema itself accepts.

use std::collections::BTreeSet;

use serde_json::Value;

use super::cel::{CelRules, Shown};
use super::default_errors;
use super::limits::{schema_limit_errors, variable_count_error, MAX_DEPTH};
use super::schema::Schema;
use super::structural::{shape_errors, structural_errors};
use crate::api::{ClusterClassVariable, JSONSchemaProps};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// The name reserved for builtin variables.
const BUILTIN: &str = "builtin";

/// Every error of `variables`, keyed by variable name (`spec.variables[cpu].schema.openAPIV3Schema...`).
pub fn validate_definitions(variables: &[ClusterClassVariable], path: &FieldPath) -> FieldErrors {
    if let Some(too_many) = variable_count_error(variables.len(), path) {
        return too_many.into();
    }
    let mut errors = FieldErrors::new();
    let mut seen = BTreeSet::new();
    for variable in variables {
        let variable_path = path.key(&variable.name);
        let name_path = variable_path.child("name");
        if variable.name.is_empty() {
            errors.push(FieldError::required(&name_path, "variable name must be defined"));
        } else if variable.name == BUILTIN {
            errors.push(FieldError::invalid(
                &name_path,
                BUILTIN,
                "\"builtin\" is a reserved variable name",
            ));
        } else if variable.name.contains('.') {
            errors.push(FieldError::invalid(
                &name_path,
                variable.name.as_str(),
                "variable name cannot contain \".\"",
            ));
        }
        if !seen.insert(variable.name.as_str()) {
            errors.push(FieldError::invalid(
                &name_path,
                variable.name.as_str(),
                format!(
                    "variable name must be unique. Variable with name {:?} is defined more than once",
                    variable.name
                ),
            ));
        }
        let schema_path = variable_path.children(&["schema", "openAPIV3Schema"]);
        errors.extend(validate_schema(&variable.schema.open_api_v3_schema, &schema_path));
    }
    errors
}

/// Checks one variable's schema in the reference's order: structure, then defaults (alone: when
/// a default is wrong nothing else is reported), then CEL rules, examples and enum values.
fn validate_schema(schema: &JSONSchemaProps, path: &FieldPath) -> FieldErrors {
    let mut errors = schema_limit_errors(schema, path);
    if !errors.is_empty() {
        return errors;
    }
    errors = structural_errors(schema, path);
    if !errors.is_empty() {
        return errors;
    }
    let compiled = match Schema::compile(schema) {
        Ok(compiled) => compiled,
        Err(error) => {
            let at = error
                .path
                .iter()
                .fold(path.clone(), |p, segment| p.child(segment));
            errors.push(FieldError::invalid(&at, schema.pattern.as_str(), error.message));
            return errors;
        }
    };
    check_defaults(&compiled, path, 0, &mut errors);
    if !errors.is_empty() {
        return errors;
    }
    let rules = match CelRules::compile_root(schema, path) {
        Ok(rules) => rules,
        Err(cel_errors) => return cel_errors,
    };
    check_examples_and_enums(&compiled, Some(&rules), path, 0, &mut errors);
    errors.extend(shape_errors(schema, path));
    errors
}

/// Every `default` along properties and items (defaults are forbidden elsewhere) must be free
/// of unknown fields and pass its node's schema and rules. The API server checks the variable's
/// own default as a resource root, whose rules cannot be typed when it is a list (see
/// [`untyped_rule_errors`]); nested defaults are checked before any default below them applies.
fn check_defaults(schema: &Schema, path: &FieldPath, depth: usize, errors: &mut FieldErrors) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(default) = &schema.props.default {
        let default_path = path.child("default");
        let mut unknown = Vec::new();
        schema.unknown_fields(default, "", &mut unknown);
        if !unknown.is_empty() {
            errors.push(FieldError::invalid(
                &default_path,
                default.clone(),
                "must not have unknown fields",
            ));
        }
        let mut schema_errors = FieldErrors::new();
        schema.validate(default, &default_path, default, &mut schema_errors);
        let passed = schema_errors.is_empty();
        errors.extend(default_errors::reword(schema_errors, default, &default_path));
        if passed {
            if depth == 0 && schema.props.type_ == "array" {
                untyped_rule_errors(&schema.props, default, &default_path, 0, errors);
            } else {
                match CelRules::compile_to_evaluate(&schema.props, path) {
                    // Checked as an update from itself: transition rules see the default as `oldSelf`.
                    Ok(rules) => {
                        errors.extend(rules.validate(default, Some(default), &default_path, Shown::NodeType))
                    }
                    Err(_) => uncompiled_rule_errors(&schema.props, path, depth == 0, errors),
                }
            }
        }
    }
    for (name, property) in &schema.properties {
        check_defaults(property, &path.child("properties").key(name), depth + 1, errors);
    }
    if let Some(items) = &schema.items {
        check_defaults(items, &path.child("items"), depth + 1, errors);
    }
}

/// A default whose node has a rule that does not compile fails on it, as the API server's
/// validator of the default reports it (`rule compile error: compilation failed: ...`); the
/// variable's own default is typed as a resource root.
fn uncompiled_rule_errors(schema: &JSONSchemaProps, path: &FieldPath, root: bool, errors: &mut FieldErrors) {
    for (_, why) in CelRules::node_compile_errors(schema, root) {
        errors.push(FieldError::invalid(
            &path.child("default"),
            schema.type_.as_str(),
            format!("rule compile error: {why}"),
        ));
    }
}

/// The API server gives no CEL type to a list at a resource root, nor to anything reached from
/// it through items or map values (properties below are not validated at all): the first node
/// with rules on each such path fails to compile them.
fn untyped_rule_errors(
    schema: &JSONSchemaProps,
    value: &Value,
    path: &FieldPath,
    depth: usize,
    errors: &mut FieldErrors,
) {
    if depth > MAX_DEPTH || value.is_null() {
        return;
    }
    if !schema.x_validations.is_empty() {
        errors.push(FieldError::invalid(
            path,
            schema.type_.as_str(),
            "rule compiler initialization error: failed to convert to declType for CEL validation rules",
        ));
        return;
    }
    match (value, &schema.items, &schema.additional_properties) {
        (Value::Array(items), Some(schema), _) => {
            for (i, item) in items.iter().enumerate() {
                untyped_rule_errors(schema, item, &path.index(i), depth + 1, errors);
            }
        }
        (Value::Object(entries), _, Some(schema)) => {
            for (key, entry) in entries {
                untyped_rule_errors(schema, entry, &path.key(key), depth + 1, errors);
            }
        }
        _ => {}
    }
}

/// `example` and every `enum` value, at every level, must pass the schema and its rules.
fn check_examples_and_enums(
    schema: &Schema,
    rules: Option<&CelRules>,
    path: &FieldPath,
    depth: usize,
    errors: &mut FieldErrors,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let props = &schema.props;
    // The API server runs the rules on a node's example and enum values only where the node
    // has rules of its own (they then cover the rules below it too).
    let rules = rules.filter(|_| !props.x_validations.is_empty());
    if let Some(example) = &props.example {
        check_value(schema, rules, example, &path.child("example"), errors);
    }
    for (i, value) in props.r#enum.iter().enumerate() {
        check_value(schema, rules, value, &path.child("enum").index(i), errors);
    }
    let nested = |child: &Schema| CelRules::compile(&child.props, path).ok();
    for (name, property) in &schema.properties {
        let rules = nested(property);
        let property_path = path.child("properties").key(name);
        check_examples_and_enums(property, rules.as_ref(), &property_path, depth + 1, errors);
    }
    if let Some(items) = &schema.items {
        let rules = nested(items);
        check_examples_and_enums(items, rules.as_ref(), &path.child("items"), depth + 1, errors);
    }
    if let Some(additional) = &schema.additional {
        let rules = nested(additional);
        let additional_path = path.child("additionalProperties");
        check_examples_and_enums(additional, rules.as_ref(), &additional_path, depth + 1, errors);
    }
}

/// A value passes the schema, and then its rules.
fn check_value(
    schema: &Schema,
    rules: Option<&CelRules>,
    value: &Value,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let before = errors.len();
    schema.validate(value, path, value, errors);
    if errors.len() == before {
        if let Some(rules) = rules {
            errors.extend(rules.validate(value, None, path, Shown::NodeType));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(yaml: &str) -> Vec<String> {
        let variables: Vec<ClusterClassVariable> = serde_yaml_ng::from_str(yaml).unwrap();
        validate_definitions(&variables, &FieldPath::new("spec").child("variables"))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn names_must_be_unique_non_empty_not_builtin_and_dotless() {
        let yaml = "[{name: a, required: false, schema: {openAPIV3Schema: {type: string}}},
                     {name: a, required: false, schema: {openAPIV3Schema: {type: string}}},
                     {name: builtin, required: false, schema: {openAPIV3Schema: {type: string}}},
                     {name: a.b, required: false, schema: {openAPIV3Schema: {type: string}}}]";
        assert_eq!(
            errors(yaml),
            [
                r#"spec.variables[a].name: Invalid value: "a": variable name must be unique. Variable with name "a" is defined more than once"#,
                r#"spec.variables[builtin].name: Invalid value: "builtin": "builtin" is a reserved variable name"#,
                r#"spec.variables[a.b].name: Invalid value: "a.b": variable name cannot contain ".""#,
            ]
        );
    }

    #[test]
    fn defaults_examples_and_enums_must_pass_the_schema_and_rules() {
        let class = |default: u8| {
            format!(
                "[{{name: v, required: false, schema: {{openAPIV3Schema: {{type: integer, maximum: 5, default: {default},
                     example: 1, enum: [1, 7]}}}}}}]"
            )
        };
        // A wrong default is reported alone.
        assert_eq!(
            errors(&class(9)),
            [
                r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: 9:  in body should be less than or equal to 5"#,
                r#"spec.variables[v].schema.openAPIV3Schema.default: Unsupported value: 9: supported values: "1", "7""#,
            ]
        );
        assert_eq!(
            errors(&class(1)),
            [
                r#"spec.variables[v].schema.openAPIV3Schema.enum[1]: Invalid value: "7": should be less than or equal to 5"#
            ]
        );
        let yaml = "[{name: v, required: false, schema: {openAPIV3Schema: {type: object, default: {a: x, b: 1},
                     properties: {a: {type: string}}, x-kubernetes-validations: [{rule: 'self.a == \"y\"', message: a must be y}]}}}]";
        let found = errors(yaml);
        assert_eq!(
            found,
            [
                r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: {"a":"x","b":1}: must not have unknown fields"#,
                r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: "object": a must be y"#,
            ]
        );
    }

    #[test]
    fn defaults_are_checked_as_an_update_from_themselves() {
        let class = |rule: &str| {
            format!(
                "[{{name: v, required: false, schema: {{openAPIV3Schema: {{type: integer, default: 3,
                   x-kubernetes-validations: [{{rule: '{rule}', message: m}}]}}}}}}]"
            )
        };
        assert!(errors(&class("self >= oldSelf")).is_empty());
        assert_eq!(
            errors(&class("self != oldSelf")),
            [r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: "integer": m"#]
        );
        // Examples and enum values are checked as creations: transition rules do not run.
        let example =
            "[{name: v, required: false, schema: {openAPIV3Schema: {type: integer, example: 3, enum: [3],
                        x-kubernetes-validations: [{rule: 'self != oldSelf', message: m}]}}}]";
        assert!(errors(example).is_empty());
    }

    #[test]
    fn the_default_of_a_list_variable_cannot_be_checked_against_rules() {
        let class = |rules_on: &str| {
            let rule = "x-kubernetes-validations: [{rule: 'size(self) > 0', message: m}]";
            let (list, items) = match rules_on {
                "list" => (rule, ""),
                _ => ("", rule),
            };
            format!(
                "[{{name: v, required: false, schema: {{openAPIV3Schema: {{type: array, maxItems: 5, default: [a, b],
                   items: {{type: string, maxLength: 5, {items}}}, {list}}}}}}}]"
            )
        };
        let untyped =
            "rule compiler initialization error: failed to convert to declType for CEL validation rules";
        assert_eq!(
            errors(&class("list")),
            [format!(
                r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: "array": {untyped}"#
            )]
        );
        assert_eq!(
            errors(&class("items")),
            [
                format!(
                    r#"spec.variables[v].schema.openAPIV3Schema.default[0]: Invalid value: "string": {untyped}"#
                ),
                format!(
                    r#"spec.variables[v].schema.openAPIV3Schema.default[1]: Invalid value: "string": {untyped}"#
                ),
            ]
        );
    }

    #[test]
    fn a_default_is_checked_before_the_defaults_below_it_apply() {
        let yaml = "[{name: v, required: false, schema: {openAPIV3Schema: {type: object, default: {},
                     properties: {mode: {type: string, default: fast}},
                     x-kubernetes-validations: [{rule: 'self.mode != \"off\"', message: mode must not be off}]}}}]";
        assert_eq!(
            errors(yaml),
            [
                r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: "object": no such key: mode evaluating rule: mode must not be off"#
            ]
        );
    }
}
