//! Definition-time checks of `x-kubernetes-validations`, as the API server applies them to CRD
//! schemas: each rule is well-formed, compiles, stays within the cost budget, and only uses
//! `oldSelf` where old and new values correlate.

use std::collections::HashMap;

use kube_cel::{estimate_rule_cost, CompilationError, CompiledSchema, WarningKind};

use super::limits::check_expression;
use crate::api::JSONSchemaProps;
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::variables::schema::MAX_DEPTH;

/// Longest `message` the API server accepts.
const MAX_MESSAGE_LENGTH: usize = 2048;
/// The estimated cost one rule may have (Kubernetes' per-expression static limit).
const MAX_RULE_COST: u64 = 10_000_000;
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
                    errors.push(FieldError::invalid(
                        &rule_path.child(field),
                        expression.as_str(),
                        detail,
                    ));
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

/// Every definition-time error of the tree's rules.
pub fn check_tree(schema: &JSONSchemaProps, compiled: &CompiledSchema, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    check_node(schema, compiled, path, false, &mut errors);
    errors
}

fn check_node(
    schema: &JSONSchemaProps,
    compiled: &CompiledSchema,
    path: &FieldPath,
    under_items: bool,
    errors: &mut FieldErrors,
) {
    for (i, rule) in schema.x_validations.iter().enumerate() {
        let rule_path = path.child("x-kubernetes-validations").index(i);
        if rule.rule.trim().is_empty() {
            errors.push(FieldError::required(
                &rule_path.child("rule"),
                "rule is not specified",
            ));
            continue;
        }
        check_message(rule, &rule_path, errors);
        if let Some(reason) = rule.reason.as_deref().filter(|r| !REASONS.contains(r)) {
            errors.push(FieldError::not_supported(
                &rule_path.child("reason"),
                reason,
                &REASONS,
            ));
        }
        if !rule.field_path.is_empty() && !field_path_exists(schema, &rule.field_path) {
            errors.push(FieldError::invalid(
                &rule_path.child("fieldPath"),
                rule.field_path.as_str(),
                "fieldPath must be a valid path to a field declared in the schema",
            ));
        }
        if under_items && rule.rule.contains("oldSelf") {
            errors.push(FieldError::invalid(
                &rule_path.child("rule"),
                rule.rule.as_str(),
                "oldSelf cannot be used on the uncorrelatable portion of the schema within a list",
            ));
        }
        match compiled.validations.get(i) {
            Some(Err(CompilationError::MessageExpressionParse { source, .. })) => {
                errors.push(FieldError::invalid(
                    &rule_path.child("messageExpression"),
                    rule.message_expression.as_str(),
                    format!("messageExpression compilation failed: {source}"),
                ))
            }
            Some(Err(CompilationError::Parse { source, .. })) => errors.push(FieldError::invalid(
                &rule_path.child("rule"),
                rule.rule.as_str(),
                format!("compilation failed: {source}"),
            )),
            Some(Err(error)) => errors.push(FieldError::invalid(
                &rule_path.child("rule"),
                rule.rule.as_str(),
                format!("compilation failed: {error}"),
            )),
            _ => check_cost(&rule.rule, compiled, &rule_path, errors),
        }
    }
    for (name, property) in &schema.properties {
        if let Some(child) = compiled.properties.get(name) {
            check_node(
                property,
                child,
                &path.child("properties").key(name),
                under_items,
                errors,
            );
        }
    }
    if let (Some(schema), Some(child)) = (&schema.additional_properties, &compiled.additional_properties) {
        check_node(
            schema,
            child,
            &path.child("additionalProperties"),
            under_items,
            errors,
        );
    }
    if let (Some(schema), Some(child)) = (&schema.items, &compiled.items) {
        check_node(schema, child, &path.child("items"), true, errors);
    }
}

fn check_message(rule: &crate::api::ValidationRule, rule_path: &FieldPath, errors: &mut FieldErrors) {
    let message_path = rule_path.child("message");
    if !rule.message.is_empty() {
        if rule.message.trim().is_empty() {
            errors.push(FieldError::invalid(
                &message_path,
                rule.message.as_str(),
                "message must be non-empty if specified",
            ));
        } else if rule.message.len() > MAX_MESSAGE_LENGTH {
            errors.push(FieldError::too_long(&message_path, MAX_MESSAGE_LENGTH));
        } else if rule.message.contains(['\n', '\r']) {
            errors.push(FieldError::invalid(
                &message_path,
                rule.message.as_str(),
                "message must not contain line breaks",
            ));
        }
    }
    if rule.rule.contains('\n') && rule.message.is_empty() && rule.message_expression.is_empty() {
        errors.push(FieldError::required(
            &message_path,
            "message must be specified if rule contains line break",
        ));
    }
    if !rule.message_expression.is_empty() && rule.message_expression.trim().is_empty() {
        errors.push(FieldError::required(
            &rule_path.child("messageExpression"),
            "messageExpression must be non-empty if specified",
        ));
    }
}

/// Rejects a rule whose estimated cost is over Kubernetes' per-expression limit.
fn check_cost(rule: &str, compiled: &CompiledSchema, rule_path: &FieldPath, errors: &mut FieldErrors) {
    for warning in estimate_rule_cost(rule, compiled) {
        if warning.kind != WarningKind::CostExceeded {
            continue;
        }
        let cost = warning
            .message
            .split_whitespace()
            .nth(2)
            .and_then(|c| c.parse::<u64>().ok())
            .unwrap_or(u64::MAX);
        if cost > MAX_RULE_COST {
            errors.push(FieldError::forbidden(
                &rule_path.child("rule"),
                format!(
                    "estimated rule cost exceeds budget by factor of {:.1}x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
                    cost as f64 / MAX_RULE_COST as f64
                ),
            ));
        }
    }
}

/// Whether a rule's `fieldPath` (`.a.b`, `['a'].b`, `.list[0]`) names a field declared under `schema`.
fn field_path_exists(schema: &JSONSchemaProps, field_path: &str) -> bool {
    let mut node = schema;
    let mut rest = field_path;
    while !rest.is_empty() {
        let (name, remainder) = if let Some(after) = rest.strip_prefix("['") {
            match after.split_once("']") {
                Some((name, remainder)) => (name, remainder),
                None => return false,
            }
        } else if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            (&after[..end], &after[end..])
        } else if let Some(after) = rest.strip_prefix('[') {
            let Some((index, remainder)) = after.split_once(']') else {
                return false;
            };
            if index.parse::<usize>().is_err() {
                return false;
            }
            let Some(items) = node.items.as_deref() else {
                return false;
            };
            node = items;
            rest = remainder;
            continue;
        } else {
            return false;
        };
        node = match node
            .properties
            .get(name)
            .or(node.additional_properties.as_deref())
        {
            Some(child) => child,
            None => return false,
        };
        rest = remainder;
    }
    true
}

#[cfg(test)]
mod tests {
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
            ["schema.x-kubernetes-validations[0].message: Required value: message must be specified if rule contains line break"]
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
            [r#"schema.x-kubernetes-validations[0].fieldPath: Invalid value: ".b": fieldPath must be a valid path to a field declared in the schema"#]
        );
        assert!(errors("{type: object, properties: {a: {type: string}}, x-kubernetes-validations: [{rule: 'true', fieldPath: \"['a']\"}]}").is_empty());
        let bad = errors("{type: string, x-kubernetes-validations: [{rule: 'self ==='}]}");
        assert_eq!(bad.len(), 1);
        assert!(
            bad[0].starts_with(
                r#"schema.x-kubernetes-validations[0].rule: Invalid value: "self ===": compilation failed"#
            ),
            "{bad:?}"
        );
        assert_eq!(
            errors("{type: array, items: {type: string, x-kubernetes-validations: [{rule: 'self == oldSelf', message: m}]}}"),
            [r#"schema.items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within a list"#]
        );
    }

    #[test]
    fn unbounded_rules_exceed_the_cost_budget() {
        let unbounded = errors(
            "{type: array, items: {type: array, items: {type: string}}, x-kubernetes-validations: \
             [{rule: \"self.all(x, x.all(y, y.matches('^a+$') && self.exists(z, z.exists(w, w == y))))\", message: m}]}",
        );
        assert_eq!(unbounded.len(), 1, "{unbounded:?}");
        assert!(
            unbounded[0].contains("estimated rule cost exceeds budget by factor of"),
            "{unbounded:?}"
        );
        assert!(errors(
            "{type: array, maxItems: 5, items: {type: string, maxLength: 10}, x-kubernetes-validations: \
                        [{rule: \"self.all(x, x.matches('^a+$'))\", message: m}]}"
        )
        .is_empty());
    }
}
