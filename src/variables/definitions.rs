//! Checks of a ClusterClass's variable definitions (`spec.variables`): names, structural
//! schemas, and defaults, examples and enum values that the schema itself accepts.

use std::collections::BTreeSet;

use serde_json::Value;

use super::cel::CelRules;
use super::schema::{Schema, MAX_DEPTH};
use crate::api::{ClusterClassVariable, JSONSchemaProps};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// The name reserved for builtin variables.
const BUILTIN: &str = "builtin";
/// JSON types a schema may declare.
const TYPES: [&str; 6] = ["object", "array", "string", "number", "integer", "boolean"];

/// Every error of `variables`, keyed by variable name (`spec.variables[cpu].schema.openAPIV3Schema...`).
pub fn validate_definitions(variables: &[ClusterClassVariable], path: &FieldPath) -> FieldErrors {
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
                "variable names must be unique",
            ));
        }
        let schema_path = variable_path.children(&["schema", "openAPIV3Schema"]);
        errors.extend(validate_schema(&variable.schema.open_api_v3_schema, &schema_path));
    }
    errors
}

/// Checks one variable's schema: structure, then values the schema must accept, then CEL rules.
fn validate_schema(schema: &JSONSchemaProps, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    check_structure(schema, path, 0, &mut errors);
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
    errors
}

/// Structural-schema rules of the API server, recursively.
fn check_structure(schema: &JSONSchemaProps, path: &FieldPath, depth: usize, errors: &mut FieldErrors) {
    if depth > MAX_DEPTH {
        errors.push(FieldError::forbidden(
            path,
            format!("must not be nested deeper than {MAX_DEPTH} levels"),
        ));
        return;
    }
    let untyped_ok = schema.x_int_or_string || schema.x_preserve_unknown_fields;
    if schema.type_.is_empty() && !untyped_ok {
        errors.push(FieldError::required(
            &path.child("type"),
            "must not be empty for specified object fields",
        ));
    } else if !schema.type_.is_empty() && !TYPES.contains(&schema.type_.as_str()) {
        errors.push(FieldError::not_supported(
            &path.child("type"),
            schema.type_.as_str(),
            &TYPES,
        ));
    }
    if schema.type_ == "array" && schema.items.is_none() {
        errors.push(FieldError::required(&path.child("items"), "must be specified"));
    }
    if schema.additional_properties.is_some() && !schema.properties.is_empty() {
        errors.push(FieldError::forbidden(
            &path.child("additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    for (name, property) in &schema.properties {
        check_structure(property, &path.child("properties").key(name), depth + 1, errors);
    }
    if let Some(additional) = &schema.additional_properties {
        check_structure(additional, &path.child("additionalProperties"), depth + 1, errors);
    }
    if let Some(items) = &schema.items {
        check_structure(items, &path.child("items"), depth + 1, errors);
    }
    for (keyword, list) in [
        ("allOf", &schema.all_of),
        ("anyOf", &schema.any_of),
        ("oneOf", &schema.one_of),
    ] {
        for (i, branch) in list.iter().enumerate() {
            check_combinator_branch(branch, &path.child(keyword).index(i), schema, errors);
        }
    }
    if let Some(not) = &schema.not {
        check_combinator_branch(not, &path.child("not"), schema, errors);
    }
}

/// Inside allOf/anyOf/oneOf/not only value checks may appear: no type, default, additionalProperties,
/// description or CEL rules (int-or-string's `type` patterns excepted).
fn check_combinator_branch(
    branch: &JSONSchemaProps,
    path: &FieldPath,
    parent: &JSONSchemaProps,
    errors: &mut FieldErrors,
) {
    let int_or_string_pattern =
        parent.x_int_or_string && matches!(branch.type_.as_str(), "integer" | "string");
    if !branch.type_.is_empty() && !int_or_string_pattern {
        errors.push(FieldError::forbidden(
            &path.child("type"),
            "must be empty to be structural",
        ));
    }
    if branch.default.is_some() {
        errors.push(FieldError::forbidden(
            &path.child("default"),
            "must be undefined to be structural",
        ));
    }
    if branch.additional_properties.is_some() {
        errors.push(FieldError::forbidden(
            &path.child("additionalProperties"),
            "must be undefined to be structural",
        ));
    }
    if !branch.description.is_empty() {
        errors.push(FieldError::forbidden(
            &path.child("description"),
            "must be empty to be structural",
        ));
    }
    if !branch.x_validations.is_empty() {
        errors.push(FieldError::forbidden(
            &path.child("x-kubernetes-validations"),
            "must be empty to be structural",
        ));
    }
    if branch.x_preserve_unknown_fields || branch.x_int_or_string {
        errors.push(FieldError::forbidden(
            path,
            "must not set x-kubernetes extensions to be structural",
        ));
    }
}

/// `default`, `example` and every `enum` value, at every level, must pass the schema and its rules.
fn check_values(schema: &Schema, rules: &CelRules, path: &FieldPath, errors: &mut FieldErrors) {
    let props = &schema.props;
    if let Some(default) = &props.default {
        check_value(schema, Some(rules), default, &path.child("default"), errors);
        let mut unknown = Vec::new();
        schema.unknown_fields(default, "", &mut unknown);
        if !unknown.is_empty() {
            errors.push(FieldError::invalid(
                &path.child("default"),
                default.clone(),
                format!(
                    "failed validation: {:?} field(s) are not specified in the schema",
                    unknown.join(",")
                ),
            ));
        }
    }
    if let Some(example) = &props.example {
        check_value(schema, Some(rules), example, &path.child("example"), errors);
    }
    for (i, value) in props.r#enum.iter().enumerate() {
        check_value(schema, Some(rules), value, &path.child("enum").index(i), errors);
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
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let before = errors.len();
    schema.validate(value, path, value, errors);
    if errors.len() == before {
        if let Some(rules) = rules {
            errors.extend(rules.validate(value, None, path));
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
                r#"spec.variables[a].name: Invalid value: "a": variable names must be unique"#,
                r#"spec.variables[builtin].name: Invalid value: "builtin": "builtin" is a reserved variable name"#,
                r#"spec.variables[a.b].name: Invalid value: "a.b": variable name cannot contain ".""#,
            ]
        );
    }

    #[test]
    fn schemas_must_be_structural() {
        let yaml = "[{name: v, required: false, schema: {openAPIV3Schema: {type: object, properties: {a: {}, l: {type: array}},
                     additionalProperties: {type: string}}}}]";
        assert_eq!(
            errors(yaml),
            [
                "spec.variables[v].schema.openAPIV3Schema.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
                "spec.variables[v].schema.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields",
                "spec.variables[v].schema.openAPIV3Schema.properties[l].items: Required value: must be specified",
            ]
        );
        let yaml = "[{name: v, required: false, schema: {openAPIV3Schema: {type: string, anyOf: [{type: string, default: x}]}}}]";
        assert_eq!(errors(yaml).len(), 2);
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
        assert!(found.contains(&r#"spec.variables[v].schema.openAPIV3Schema.default: Invalid value: {"a":"x","b":1}: failed validation: "b" field(s) are not specified in the schema"#.to_owned()), "{found:?}");
        assert!(found.iter().any(|e| e.ends_with("a must be y")), "{found:?}");
    }
}
