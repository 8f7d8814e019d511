//! Definition-time checks of `x-kubernetes-validations`, as the API server applies them to CRD
//! schemas: each rule is well-formed, compiles, stays within the cost budget, and only uses
//! `oldSelf` where old and new values correlate.

use std::collections::HashMap;

use kube_cel::CompiledSchema;

use super::field_path::check_field_path;
use super::limits::check_expression;
use super::rule_value::invalid_rule;
use super::total_cost::TotalCost;
use crate::api::{JSONSchemaProps, ValidationRule};
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::variables::limits::MAX_DEPTH;

mod expressions;

/// Longest `message` the API server accepts.
const MAX_MESSAGE_LENGTH: usize = 2048;
/// The estimated cost one rule may have (Kubernetes' per-expression static limit).
pub const MAX_RULE_COST: u64 = 10_000_000;
/// The reasons a rule may report.
const REASONS: [&str; 4] = [
    "FieldValueRequired",
    "FieldValueInvalid",
    "FieldValueDuplicate",
    "FieldValueForbidden",
];

/// True when any node of the tree has a rule (an iterative walk: any depth is safe).
pub fn has_rules(schema: &JSONSchemaProps) -> bool {
    let mut pending = vec![schema];
    while let Some(node) = pending.pop() {
        if !node.x_validations.is_empty() {
            return true;
        }
        pending.extend(children(node).map(|(_, child)| child));
    }
    false
}

/// Each rule's text as the API server names the rule in an evaluation error: its `message`
/// when it has one, else the rule itself (trimmed), keyed by the rule.
pub fn rule_names(schema: &JSONSchemaProps) -> HashMap<String, String> {
    let mut names = HashMap::new();
    let mut pending = vec![schema];
    while let Some(node) = pending.pop() {
        for rule in &node.x_validations {
            let name = if rule.message.trim().is_empty() {
                &rule.rule
            } else {
                &rule.message
            };
            names
                .entry(rule.rule.clone())
                .or_insert_with(|| name.trim().to_owned());
        }
        pending.extend(children(node).map(|(_, child)| child));
    }
    names
}

/// The nodes that can carry rules below `node`, with the keyword path to each.
fn children(node: &JSONSchemaProps) -> impl Iterator<Item = (ChildKey<'_>, &JSONSchemaProps)> {
    let properties = node
        .properties
        .iter()
        .map(|(name, child)| (ChildKey::Property(name), child));
    let additional = node
        .additional_properties
        .as_deref()
        .map(|child| (ChildKey::Additional, child));
    let items = node.items.as_deref().map(|child| (ChildKey::Items, child));
    properties.chain(additional).chain(items)
}

/// Where a child sits under its parent.
enum ChildKey<'a> {
    Property(&'a str),
    Additional,
    Items,
}

impl ChildKey<'_> {
    fn under(&self, path: &FieldPath) -> FieldPath {
        match self {
            ChildKey::Property(name) => path.child("properties").key(name),
            ChildKey::Additional => path.child("additionalProperties"),
            ChildKey::Items => path.child("items"),
        }
    }
}

/// The errors that must stop a tree before the CEL parser sees it: nesting deeper than any
/// schema may be, and rules or message expressions past the parser's size and depth limits
/// (worded as the API server's compiler reports them).
pub fn check_limits(schema: &JSONSchemaProps, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let mut pending = vec![(schema, path.clone(), 0_usize)];
    while let Some((node, node_path, depth)) = pending.pop() {
        if depth > MAX_DEPTH {
            errors.push(FieldError::forbidden(
                &node_path,
                format!("schemas may not be nested deeper than {MAX_DEPTH} levels"),
            ));
            continue;
        }
        for (i, rule) in node.x_validations.iter().enumerate() {
            let rule_path = node_path.child("x-kubernetes-validations").index(i);
            for (field, expression) in [
                ("rule", &rule.rule),
                ("messageExpression", &rule.message_expression),
            ] {
                if let Err(limit) = check_expression(expression) {
                    let detail = match field {
                        "rule" => format!("compilation failed: ERROR: <input>:-1:0: {limit}"),
                        _ => format!("messageExpression compilation failed: ERROR: <input>:-1:0: {limit}"),
                    };
                    errors.push(invalid_rule(&rule_path.child(field), rule, &detail));
                }
            }
        }
        // Reversed, so that errors come out in document order.
        let next: Vec<_> = children(node)
            .map(|(key, child)| (child, key.under(&node_path), depth + 1))
            .collect();
        pending.extend(next.into_iter().rev());
    }
    errors
}

/// Every definition-time error of the tree's rules, in the reference's order: the errors of the
/// rules' shape (message, reason, fieldPath) first, then those of their expressions (compilation,
/// cost, `oldSelf` placement), then the cost of the tree as a whole. A `root` list with rules
/// cannot be typed (see [`Context::untyped`]).
pub fn check_tree(
    schema: &JSONSchemaProps,
    compiled: &CompiledSchema,
    path: &FieldPath,
    root: bool,
    costs: bool,
) -> FieldErrors {
    let mut found = Found::default();
    let context = Context {
        path: path.clone(),
        uncorrelatable: None,
        cardinality: Some(1),
        untyped: root && !schema.x_validations.is_empty() && schema.type_ == "array",
        resource_root: root && !schema.x_validations.is_empty(),
        costs,
    };
    check_node(schema, compiled, &context, &mut found);
    let mut errors = found.shape;
    errors.extend(found.expressions);
    errors.extend(found.total.errors(path));
    errors
}

/// Errors found so far, and the cost of every expression seen.
#[derive(Default)]
struct Found {
    shape: FieldErrors,
    expressions: FieldErrors,
    total: TotalCost,
}

/// Where a node sits: its path, the first list above it (old and new items cannot be paired
/// there), and how many instances of it one value can hold (`None`: unbounded).
struct Context {
    path: FieldPath,
    uncorrelatable: Option<FieldPath>,
    cardinality: Option<u64>,
    /// The API server types rules from the root down when the root has rules, and a list at
    /// the root (a resource root to it) has no CEL type: then no rule of the tree compiles.
    untyped: bool,
    /// The node is the root and typed as a resource root (with `apiVersion`, `kind`, `metadata`).
    resource_root: bool,
    /// Whether the static cost limits apply (a definition), or not (rules compiled to evaluate a
    /// value, as the API server's validator of a schema's `default` compiles them).
    costs: bool,
}

impl Context {
    /// The context of a child of `parent` (whose schema is `schema`) at `path`.
    fn child(&self, schema: &JSONSchemaProps, path: FieldPath, items: bool) -> Context {
        let uncorrelatable = match (&self.uncorrelatable, items) {
            (None, true) => Some(path.clone()),
            (outer, _) => outer.clone(),
        };
        Context {
            path,
            uncorrelatable,
            cardinality: self
                .cardinality
                .zip(max_elements(schema))
                .map(|(a, b)| a.saturating_mul(b)),
            untyped: self.untyped,
            resource_root: false,
            costs: self.costs,
        }
    }
}

/// How many children a value of `schema` can have (`None`: unbounded), as the API server counts.
fn max_elements(schema: &JSONSchemaProps) -> Option<u64> {
    let bound = |max: Option<i64>| max.map(|m| u64::try_from(m).unwrap_or(0));
    match schema.type_.as_str() {
        "object" if schema.additional_properties.is_some() => bound(schema.max_properties),
        "array" => bound(schema.max_items),
        _ => Some(1),
    }
}

/// Children first, then the node's own rules; a node's expressions are only checked when
/// neither it nor anything below it has a shape error (as the API server does).
fn check_node(schema: &JSONSchemaProps, compiled: &CompiledSchema, at: &Context, found: &mut Found) {
    let shape_errors_before = found.shape.len();
    if let (Some(child), Some(compiled)) = (&schema.additional_properties, &compiled.additional_properties) {
        let context = at.child(schema, at.path.child("additionalProperties"), false);
        check_node(child, compiled, &context, found);
    }
    for (name, property) in &schema.properties {
        if let Some(compiled) = compiled.properties.get(name) {
            let context = at.child(schema, at.path.child("properties").key(name), false);
            check_node(property, compiled, &context, found);
        }
    }
    if let (Some(child), Some(compiled)) = (&schema.items, &compiled.items) {
        let context = at.child(schema, at.path.child("items"), true);
        check_node(child, compiled, &context, found);
    }
    for (i, rule) in schema.x_validations.iter().enumerate() {
        check_shape(
            schema,
            rule,
            &at.path.child("x-kubernetes-validations").index(i),
            &mut found.shape,
        );
    }
    if found.shape.len() == shape_errors_before && at.untyped && !schema.x_validations.is_empty() {
        found.expressions.push(FieldError::internal(
            &at.path.child("x-kubernetes-validations"),
            "internal error: failed to construct type information for x-kubernetes-validations rules: \
             unable to convert structural schema to CEL declarations",
        ));
    } else if found.shape.len() == shape_errors_before {
        for (i, rule) in schema.x_validations.iter().enumerate() {
            expressions::check_expressions(schema, rule, compiled.validations.get(i), i, at, found);
        }
    }
}

/// The shape of one rule: a rule, a one-line message, a known reason, a valid fieldPath.
fn check_shape(
    schema: &JSONSchemaProps,
    rule: &ValidationRule,
    rule_path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let message_path = rule_path.child("message");
    let message = rule.message.trim();
    if rule.rule.trim().is_empty() {
        errors.push(FieldError::required(
            &rule_path.child("rule"),
            "rule is not specified",
        ));
    } else if !rule.message.is_empty() && message.is_empty() {
        errors.push(FieldError::invalid(
            &message_path,
            rule.message.as_str(),
            "message must be non-empty if specified",
        ));
    } else if rule.message.len() > MAX_MESSAGE_LENGTH {
        let head: String = rule.message.chars().take(10).collect();
        errors.push(FieldError::invalid(
            &message_path,
            format!("{head}..."),
            format!("message must have a maximum length of {MAX_MESSAGE_LENGTH} characters"),
        ));
    } else if has_line_breaks(message) {
        errors.push(FieldError::invalid(
            &message_path,
            rule.message.as_str(),
            "message must not contain line breaks",
        ));
    } else if has_line_breaks(rule.rule.trim()) && message.is_empty() {
        errors.push(FieldError::required(
            &message_path,
            "message must be specified if rule contains line breaks",
        ));
    }
    if !rule.message_expression.is_empty() && rule.message_expression.trim().is_empty() {
        errors.push(FieldError::required(
            &rule_path.child("messageExpression"),
            "messageExpression must be non-empty if specified",
        ));
    }
    if let Some(reason) = rule.reason.as_deref().filter(|r| !REASONS.contains(r)) {
        errors.push(FieldError::not_supported(
            &rule_path.child("reason"),
            reason,
            &REASONS,
        ));
    }
    let field_path = rule_path.child("fieldPath");
    let invalid = |detail: String| FieldError::invalid(&field_path, rule.field_path.as_str(), detail);
    if !rule.field_path.is_empty() && rule.field_path.trim().is_empty() {
        errors.push(invalid("fieldPath must be non-empty if specified".into()));
    }
    if has_line_breaks(&rule.field_path) {
        errors.push(invalid("fieldPath must not contain line breaks".into()));
    }
    if !rule.field_path.is_empty() {
        if let Err(why) = check_field_path(schema, &rule.field_path) {
            errors.push(invalid(format!("fieldPath must be a valid path: {why}")));
        }
    }
}

/// CR and LF are the line breaks of CEL's grammar.
fn has_line_breaks(text: &str) -> bool {
    text.contains(['\n', '\r'])
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
