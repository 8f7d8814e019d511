//! Unit tests of `field.rs`.

use super::*;
use serde_json::json;

#[test]
fn paths_render_fields_indexes_and_keys() {
    let path = FieldPath::new("spec")
        .child("topology")
        .child("variables")
        .key("cpu")
        .child("value");
    assert_eq!(path.to_string(), "spec.topology.variables[cpu].value");
    let path = FieldPath::new("spec")
        .children(&["workers", "machineDeployments"])
        .index(1)
        .child("name");
    assert_eq!(path.to_string(), "spec.workers.machineDeployments[1].name");
}

#[test]
fn invalid_quotes_strings_and_keeps_numbers_bare() {
    let path = FieldPath::parse_dotted("spec.topology.version");
    let err = FieldError::invalid(&path, "1.x", "must be a valid semantic version");
    assert_eq!(
        err.to_string(),
        r#"spec.topology.version: Invalid value: "1.x": must be a valid semantic version"#
    );
    let err = FieldError::invalid(&FieldPath::new("replicas"), 3, "too many");
    assert_eq!(err.body(), "Invalid value: 3: too many");
    let err = FieldError::invalid(&FieldPath::new("v"), json!({"a": 1}), "bad");
    assert_eq!(err.body(), r#"Invalid value: {"a":1}: bad"#);
}

#[test]
fn required_and_forbidden_hide_the_value() {
    let path = FieldPath::new("spec").child("topology").child("class");
    assert_eq!(
        FieldError::required(&path, "").to_string(),
        "spec.topology.class: Required value"
    );
    assert_eq!(
        FieldError::forbidden(&path, "cannot be set").to_string(),
        "spec.topology.class: Forbidden: cannot be set"
    );
}

#[test]
fn aggregate_brackets_several_and_drops_repeats() {
    let a = FieldError::required(&FieldPath::new("a"), "");
    let b = FieldError::duplicate(&FieldPath::new("b"), "x");
    let one: FieldErrors = vec![a.clone()].into();
    assert_eq!(one.to_string(), "a: Required value");
    let many: FieldErrors = vec![a.clone(), b, a].into();
    assert_eq!(
        many.to_string(),
        r#"[a: Required value, b: Duplicate value: "x"]"#
    );
}

#[test]
fn huge_values_are_cut_saying_how_much() {
    let error = FieldError::invalid(&FieldPath::new("a"), "é".repeat(2_000), "bad");
    let shown = error.to_string();
    assert!(shown.len() < MAX_RENDERED_VALUE + 64, "{}", shown.len());
    assert!(
        shown.ends_with("...(2979 more bytes): bad"),
        "{}",
        &shown[shown.len() - 40..]
    );
}

#[test]
fn many_errors_aggregate_in_linear_time() {
    let errors: FieldErrors = (0..100_000)
        .map(|i| FieldError::required(&FieldPath::new("a").index(i % 50_000), "x"))
        .collect();
    assert_eq!(errors.to_string().matches("Required value").count(), 50_000);
}

#[test]
fn not_supported_lists_the_choices() {
    let err = FieldError::not_supported(&FieldPath::new("op"), "move", &["add", "replace", "remove"]);
    assert_eq!(
        err.to_string(),
        r#"op: Unsupported value: "move": supported values: "add", "replace", "remove""#
    );
}
