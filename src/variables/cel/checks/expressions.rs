//! The definition-time checks of one rule's expressions: they compile, read only fields the
//! schema has, stay within the per-expression cost limit (counting towards the schema's total),
//! and use `oldSelf` only where old and new values correlate.

use kube_cel::{CompilationError, CompilationResult};

use super::{Context, Found, MAX_RULE_COST};
use crate::api::{JSONSchemaProps, ValidationRule};
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::variables::cel::cost;
use crate::variables::cel::field_check::field_errors;
use crate::variables::cel::rule_value::invalid_rule;
use crate::variables::cel::total_cost::cost_message;

/// One rule's expressions: they compile, their estimated cost (times the node's cardinality)
/// stays within the per-expression limit, and `oldSelf` is not used where it cannot correlate.
pub(super) fn check_expressions(
    schema: &JSONSchemaProps,
    rule: &ValidationRule,
    compiled: Option<&Result<CompilationResult, CompilationError>>,
    index: usize,
    at: &Context,
    found: &mut Found,
) {
    let rule_path = at.path.child("x-kubernetes-validations").index(index);
    let compiled = match compiled {
        Some(Ok(compiled)) => compiled,
        Some(Err(error)) => {
            found.expressions.push(compilation_error(rule, error, &rule_path));
            return;
        }
        None => return,
    };
    if !fields_exist(schema, rule, at, &rule_path, &mut found.expressions) {
        return;
    }
    if at.costs {
        check_costs(schema, compiled, at, &rule_path, found);
    }
    transition_errors(rule, compiled, at, &rule_path, &mut found.expressions);
}

/// The error of a rule whose rule or messageExpression does not compile, at the field that
/// failed.
fn compilation_error(rule: &ValidationRule, error: &CompilationError, rule_path: &FieldPath) -> FieldError {
    match error {
        CompilationError::MessageExpressionParse { source, .. } => invalid_rule(
            &rule_path.child("messageExpression"),
            rule,
            &format!("messageExpression compilation failed: {source}"),
        ),
        CompilationError::Parse { source, .. } => invalid_rule(
            &rule_path.child("rule"),
            rule,
            &format!("compilation failed: {source}"),
        ),
        error => invalid_rule(
            &rule_path.child("rule"),
            rule,
            &format!("compilation failed: {error}"),
        ),
    }
}

/// Whether the fields the rule and its messageExpression read exist in the schema; each that
/// does not is an error.
fn fields_exist(
    schema: &JSONSchemaProps,
    rule: &ValidationRule,
    at: &Context,
    rule_path: &FieldPath,
    errors: &mut FieldErrors,
) -> bool {
    let rule_fields = field_errors(&rule.rule, schema, at.resource_root);
    if let Some(found) = &rule_fields {
        errors.push(invalid_rule(
            &rule_path.child("rule"),
            rule,
            &format!("compilation failed: {found}"),
        ));
    }
    let message_fields = (!rule.message_expression.is_empty())
        .then(|| field_errors(&rule.message_expression, schema, at.resource_root))
        .flatten();
    if let Some(found) = &message_fields {
        errors.push(invalid_rule(
            &rule_path.child("messageExpression"),
            rule,
            &format!("messageExpression compilation failed: {found}"),
        ));
    }
    rule_fields.is_none() && message_fields.is_none()
}

/// The rule's estimated cost (times the node's cardinality) and its messageExpression's stay
/// within the per-expression limit; both count towards the schema's total.
fn check_costs(
    schema: &JSONSchemaProps,
    compiled: &CompilationResult,
    at: &Context,
    rule_path: &FieldPath,
    found: &mut Found,
) {
    let errors = &mut found.expressions;
    let scaled = |cost: u64| {
        let cardinality = at
            .cardinality
            .unwrap_or_else(|| cost::max_cardinality(cost::min_serialized_size(schema)));
        if cost == 0 {
            0
        } else {
            cost.saturating_mul(cardinality)
        }
    };
    let rule_cost = scaled(cost::estimate(compiled.program.expression(), schema));
    if rule_cost > MAX_RULE_COST {
        errors.push(FieldError::forbidden(
            &rule_path.child("rule"),
            cost_message("estimated rule cost", rule_cost, MAX_RULE_COST),
        ));
    }
    found.total.observe(rule_path.child("rule"), rule_cost);
    if let Some(message) = &compiled.message_program {
        // The API server does not scale a messageExpression's cost by the node's cardinality.
        let message_cost = cost::estimate(message.expression(), schema);
        if message_cost > MAX_RULE_COST {
            errors.push(FieldError::forbidden(
                &rule_path.child("messageExpression"),
                cost_message("estimated messageExpression cost", message_cost, MAX_RULE_COST),
            ));
        }
        found
            .total
            .observe(rule_path.child("messageExpression"), message_cost);
    }
}

/// A transition rule (reading `oldSelf`) below a list without a correlating key is refused.
fn transition_errors(
    rule: &ValidationRule,
    compiled: &CompilationResult,
    at: &Context,
    rule_path: &FieldPath,
    errors: &mut FieldErrors,
) {
    if let (true, Some(list)) = (compiled.is_transition_rule, &at.uncorrelatable) {
        errors.push(FieldError::invalid(
            &rule_path.child("rule"),
            rule.rule.as_str(),
            format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {list}"),
        ));
    }
}
