//! The API server's structural-schema rules for a variable's schema: a type at every level,
//! items for arrays, and allOf/anyOf/oneOf/not holding value checks only. Then Cluster API's own
//! shape rules (known types, additionalProperties or properties).

use crate::api::JSONSchemaProps;
use crate::field::{FieldError, FieldErrors, FieldPath};

use super::limits::MAX_DEPTH;

/// JSON types a schema may declare.
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Where a node sits, which words the missing-type error uses.
#[derive(Clone, Copy)]
enum Level {
    /// A field of an object (the schema root counts: Cluster API wraps it as a property).
    Field,
    /// The items of an array.
    Item,
}

/// Structural errors of `schema`, sorted as the API server sorts them (by their text).
pub fn structural_errors(schema: &JSONSchemaProps, path: &FieldPath) -> FieldErrors {
    let mut errors = Vec::new();
    invariants(schema, Level::Field, path, 0, &mut errors);
    errors.sort_by_cached_key(ToString::to_string);
    errors.into_iter().collect()
}

/// Unknown types and additionalProperties next to properties, at every level; checked once the
/// schema is structural.
pub fn shape_errors(schema: &JSONSchemaProps, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    shape(schema, path, 0, &mut errors);
    errors
}

fn invariants(
    schema: &JSONSchemaProps,
    level: Level,
    path: &FieldPath,
    depth: usize,
    errors: &mut Vec<FieldError>,
) {
    if depth > MAX_DEPTH {
        let detail = format!("must not be nested deeper than {MAX_DEPTH} levels");
        errors.push(FieldError::forbidden(path, detail));
        return;
    }
    if schema.type_ == "array" && schema.items.is_none() {
        errors.push(FieldError::required(&path.child("items"), "must be specified"));
    }
    if let Some(items) = &schema.items {
        invariants(items, Level::Item, &path.child("items"), depth + 1, errors);
    }
    for (name, property) in &schema.properties {
        let property_path = path.child("properties").key(name);
        invariants(property, Level::Field, &property_path, depth + 1, errors);
    }
    if let Some(additional) = &schema.additional_properties {
        let additional_path = path.child("additionalProperties");
        invariants(additional, Level::Field, &additional_path, depth + 1, errors);
    }
    value_validation(schema, path, depth, errors);
    if schema.type_.is_empty() && !schema.is_int_or_string() && !schema.preserves_unknown_fields() {
        let detail = match level {
            Level::Field => "must not be empty for specified object fields",
            Level::Item => "must not be empty for specified array items",
        };
        errors.push(FieldError::required(&path.child("type"), detail));
    }
}

/// The combinators of a node: each branch may only hold value checks (int-or-string's
/// `anyOf: [{type: integer}, {type: string}]`, also as the first `allOf`, is allowed).
fn value_validation(schema: &JSONSchemaProps, path: &FieldPath, depth: usize, errors: &mut Vec<FieldError>) {
    let int_or_string = |branches: &[JSONSchemaProps]| {
        schema.is_int_or_string()
            && branches.len() == 2
            && branches.first().is_some_and(|b| b.type_ == "integer")
            && branches.get(1).is_some_and(|b| b.type_ == "string")
    };
    for (i, branch) in schema.all_of.iter().enumerate() {
        let branch_path = path.child("allOf").index(i);
        if i == 0 && int_or_string(&branch.any_of) {
            let mut inner = branch.clone();
            inner.any_of.clear();
            nested(&inner, &branch_path, depth + 1, errors);
        } else {
            nested(branch, &branch_path, depth + 1, errors);
        }
    }
    if !int_or_string(&schema.any_of) {
        for (i, branch) in schema.any_of.iter().enumerate() {
            nested(branch, &path.child("anyOf").index(i), depth + 1, errors);
        }
    }
    for (i, branch) in schema.one_of.iter().enumerate() {
        nested(branch, &path.child("oneOf").index(i), depth + 1, errors);
    }
    if let Some(not) = &schema.not {
        nested(not, &path.child("not"), depth + 1, errors);
    }
}

/// A schema inside a combinator (and its properties and items): value checks only.
fn nested(schema: &JSONSchemaProps, path: &FieldPath, depth: usize, errors: &mut Vec<FieldError>) {
    if depth > MAX_DEPTH {
        let detail = format!("must not be nested deeper than {MAX_DEPTH} levels");
        errors.push(FieldError::forbidden(path, detail));
        return;
    }
    value_validation(schema, path, depth, errors);
    if let Some(items) = &schema.items {
        nested(items, &path.child("items"), depth + 1, errors);
    }
    for (name, property) in &schema.properties {
        nested(property, &path.child("properties").key(name), depth + 1, errors);
    }
    let forbidden = [
        ("type", !schema.type_.is_empty(), "must be empty to be structural"),
        (
            "additionalProperties",
            schema.additional_properties.is_some(),
            "must be undefined to be structural",
        ),
        (
            "default",
            schema.default.is_some(),
            "must be undefined to be structural",
        ),
        (
            "description",
            !schema.description.is_empty(),
            "must be empty to be structural",
        ),
        (
            "x-kubernetes-preserve-unknown-fields",
            schema.preserves_unknown_fields(),
            "must be false to be structural",
        ),
        (
            "x-kubernetes-int-or-string",
            schema.is_int_or_string(),
            "must be false to be structural",
        ),
        (
            "x-kubernetes-validations",
            !schema.x_validations.is_empty(),
            "must be empty to be structural",
        ),
    ];
    for (keyword, present, detail) in forbidden {
        if present {
            errors.push(FieldError::forbidden(&path.child(keyword), detail));
        }
    }
}

fn shape(schema: &JSONSchemaProps, path: &FieldPath, depth: usize, errors: &mut FieldErrors) {
    if depth > MAX_DEPTH {
        return;
    }
    if !schema.type_.is_empty() && !TYPES.contains(&schema.type_.as_str()) {
        errors.push(FieldError::not_supported(
            &path.child("type"),
            schema.type_.as_str(),
            &TYPES,
        ));
        return;
    }
    if let Some(additional) = &schema.additional_properties {
        if !schema.properties.is_empty() {
            errors.push(FieldError::forbidden(
                path,
                "additionalProperties and properties are mutually exclusive",
            ));
        }
        shape(additional, &path.child("additionalProperties"), depth + 1, errors);
    }
    for (name, property) in &schema.properties {
        shape(property, &path.child("properties").key(name), depth + 1, errors);
    }
    if let Some(items) = &schema.items {
        shape(items, &path.child("items"), depth + 1, errors);
    }
    if let Some(not) = &schema.not {
        shape(not, &path.child("not"), depth + 1, errors);
    }
    for (keyword, branches) in [
        ("allOf", &schema.all_of),
        ("oneOf", &schema.one_of),
        ("anyOf", &schema.any_of),
    ] {
        for (i, branch) in branches.iter().enumerate() {
            shape(branch, &path.child(keyword).index(i), depth + 1, errors);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "spec.variables[v].schema.openAPIV3Schema";

    fn errors(schema: &str) -> Vec<String> {
        let schema: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
        let path = FieldPath::new("spec")
            .child("variables")
            .key("v")
            .children(&["schema", "openAPIV3Schema"]);
        let mut found = structural_errors(&schema, &path);
        if found.is_empty() {
            found = shape_errors(&schema, &path);
        }
        found.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn types_are_required_below_the_root_too() {
        assert_eq!(
            errors("{type: object, properties: {a: {}, l: {type: array, items: {}}, p: {x-kubernetes-preserve-unknown-fields: true}}}"),
            [
                format!("{P}.properties[a].type: Required value: must not be empty for specified object fields"),
                format!("{P}.properties[l].items.type: Required value: must not be empty for specified array items"),
            ]
        );
        assert_eq!(
            errors("{type: array}"),
            [format!("{P}.items: Required value: must be specified")]
        );
        assert_eq!(
            errors("{}"),
            [format!(
                "{P}.type: Required value: must not be empty for specified object fields"
            )]
        );
    }

    #[test]
    fn combinators_hold_value_checks_only_at_any_depth() {
        let schema = "{type: object, properties: {f: {type: number}}, \
                      oneOf: [{properties: {f: {type: number}}}], not: {default: 1, description: d}, \
                      allOf: [{x-kubernetes-validations: [{rule: 'true'}]}], anyOf: [{additionalProperties: {}}]}";
        assert_eq!(
            errors(schema),
            [
                format!("{P}.allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural"),
                format!("{P}.anyOf[0].additionalProperties: Forbidden: must be undefined to be structural"),
                format!("{P}.not.default: Forbidden: must be undefined to be structural"),
                format!("{P}.not.description: Forbidden: must be empty to be structural"),
                format!("{P}.oneOf[0].properties[f].type: Forbidden: must be empty to be structural"),
            ]
        );
        assert!(errors(
            "{x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}], \
             allOf: [{anyOf: [{type: integer}, {type: string}]}, {pattern: '^\\d+%?$'}]}"
        )
        .is_empty());
    }

    #[test]
    fn shapes_are_checked_once_structural() {
        assert_eq!(
            errors("{type: object, properties: {a: {type: string}}, additionalProperties: {type: string}}"),
            [format!(
                "{P}: Forbidden: additionalProperties and properties are mutually exclusive"
            )]
        );
        assert_eq!(
            errors("{type: object, properties: {a: {type: text}}}"),
            [format!(
                r#"{P}.properties[a].type: Unsupported value: "text": supported values: "array", "boolean", "integer", "number", "object", "string""#
            )]
        );
    }
}
