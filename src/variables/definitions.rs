//! Checks of a ClusterClass's variable definitions (`spec.variables`): names, structural
//! schemas, and defaults, examples and enum values that the schema itself accepts.

use std::collections::BTreeSet;

use serde_json::Value;

use super::cel::CelRules;
use super::limits::{schema_limit_errors, variable_count_error};
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

/// Checks one variable's schema: structure, then values the schema must accept, then CEL rules.
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
    let rules = match CelRules::compile(schema, path) {
        Ok(rules) => rules,
        Err(cel_errors) => return cel_errors,
    };
    check_values(&compiled, &rules, path, &mut errors);
    errors.extend(shape_errors(schema, path));
    errors
}

/// `default`, `example` and every `enum` value, at every level, must pass the schema and its rules.
fn check_values(schema: &Schema, rules: &CelRules, path: &FieldPath, errors: &mut FieldErrors) {
    let props = &schema.props;
    if let Some(default) = &props.default {
        let mut unknown = Vec::new();
        schema.unknown_fields(default, "", &mut unknown);
        if !unknown.is_empty() {
            errors.push(FieldError::invalid(
                &path.child("default"),
                default.clone(),
                "must not have unknown fields",
            ));
        }
        // The API server checks a default as an update from itself: transition rules see the
        // default as `oldSelf` too.
        check_value(
            schema,
            Some(rules),
            default,
            Some(default),
            &path.child("default"),
            errors,
        );
    }
    if let Some(example) = &props.example {
        check_value(schema, Some(rules), example, None, &path.child("example"), errors);
    }
    for (i, value) in props.r#enum.iter().enumerate() {
        check_value(
            schema,
            Some(rules),
            value,
            None,
            &path.child("enum").index(i),
            errors,
        );
    }
    for (name, property) in &schema.properties {
        let nested = CelRules::compile(&property.props, path).unwrap_or_else(|_| empty_rules());
        check_values(property, &nested, &path.child("properties").key(name), errors);
    }
    if let Some(items) = &schema.items {
        let nested = CelRules::compile(&items.props, path).unwrap_or_else(|_| empty_rules());
        check_values(items, &nested, &path.child("items"), errors);
    }
    if let Some(additional) = &schema.additional {
        let nested = CelRules::compile(&additional.props, path).unwrap_or_else(|_| empty_rules());
        check_values(additional, &nested, &path.child("additionalProperties"), errors);
    }
}

fn empty_rules() -> CelRules {
    CelRules::compile(&JSONSchemaProps::default(), &FieldPath::root())
        .unwrap_or_else(|_| unreachable!("no rules"))
}

fn check_value(
    schema: &Schema,
    rules: Option<&CelRules>,
    value: &Value,
    old: Option<&Value>,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let before = errors.len();
    schema.validate(value, path, value, errors);
    if errors.len() == before {
        if let Some(rules) = rules {
            errors.extend(rules.validate(value, old, path));
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
        let yaml =
            "[{name: v, required: false, schema: {openAPIV3Schema: {type: integer, maximum: 5, default: 9,
                     example: 1, enum: [1, 7]}}}]";
        assert_eq!(
            errors(yaml),
            [
                r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: "9": should be less than or equal to 5"#,
                r#"spec.variables[v].schema.openAPIV3Schema.default: Unsupported value: "9": supported values: "1", "7""#,
                r#"spec.variables[v].schema.openAPIV3Schema.enum[1]: Invalid value: "7": should be less than or equal to 5"#,
            ]
        );
        let yaml = "[{name: v, required: false, schema: {openAPIV3Schema: {type: object, default: {a: x, b: 1},
                     properties: {a: {type: string}}, x-kubernetes-validations: [{rule: 'self.a == \"y\"', message: a must be y}]}}}]";
        let found = errors(yaml);
        assert_eq!(
            found,
            [
                r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: {"a":"x","b":1}: must not have unknown fields"#,
                r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: "{\"a\":\"x\",\"b\":1}": a must be y"#,
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
            [r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: "3": m"#]
        );
        // Examples and enum values are checked as creations: transition rules do not run.
        let example =
            "[{name: v, required: false, schema: {openAPIV3Schema: {type: integer, example: 3, enum: [3],
                        x-kubernetes-validations: [{rule: 'self != oldSelf', message: m}]}}}]";
        assert!(errors(example).is_empty());
    }
}
