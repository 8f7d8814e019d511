//! The message of a rule that evaluated to false, picked as the API server picks it
//! (`evalMessageExpression` in apiextensions-apiserver): the messageExpression's result when it is
//! usable, else the static message, else `failed rule: <rule>`.

use kube_cel::cel::{Context, Value as Cel};
use kube_cel::CompilationResult;

/// The longest message a messageExpression may evaluate to (Kubernetes'
/// `MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_EVALUATED_MESSAGE_BYTES: usize = 5 * 1024;

/// The messageExpression's string, trimmed, unless it fails, is not a string, or trims to an
/// empty, multi-line or longer than 5 KiB string; else the static message, trimmed; else
/// `failed rule: <the rule, trimmed>`.
pub(super) fn failure_message(rule: &CompilationResult, scope: &Context<'_>) -> String {
    if let Some(Ok(Cel::String(evaluated))) = rule.message_program.as_ref().map(|p| p.execute(scope)) {
        let trimmed = evaluated.trim();
        if !trimmed.is_empty() && !trimmed.contains('\n') && trimmed.len() <= MAX_EVALUATED_MESSAGE_BYTES {
            return trimmed.to_owned();
        }
    }
    match rule.rule.message.as_deref() {
        Some(message) if !message.is_empty() => message.trim().to_owned(),
        _ => format!("failed rule: {}", rule.rule.rule.trim()),
    }
}

#[cfg(test)]
mod tests {
    use kube_cel::KubeCelExt;
    use serde_json::json;

    use super::*;
    use crate::variables::cel::value::untyped;

    fn message_of(rule: serde_json::Value, value: serde_json::Value) -> String {
        let schema = json!({"type": "object", "x-kubernetes-validations": [rule],
                            "properties": {"a": {"type": "string"},
                                           "m": {"type": "object", "additionalProperties": {"type": "string"}}}});
        let compiled = kube_cel::compile_schema(&schema);
        let rule = compiled.validations[0].as_ref().unwrap();
        let mut scope = Context::default().with_all();
        scope.add_variable_from_value("self", untyped(&value, 0).unwrap());
        failure_message(rule, &scope)
    }

    #[test]
    fn a_usable_expression_result_is_trimmed() {
        let rule = json!({"rule": "false", "messageExpression": "' a is ' + self.a + '\\t'", "message": "m"});
        assert_eq!(message_of(rule, json!({"a": "x"})), "a is x");
    }

    #[test]
    fn an_unusable_result_falls_back_to_the_message_then_the_rule() {
        let too_long = format!("'{}'", "x".repeat(MAX_EVALUATED_MESSAGE_BYTES + 1));
        let at_limit = format!("'{}'", "x".repeat(MAX_EVALUATED_MESSAGE_BYTES));
        assert_eq!(
            message_of(json!({"rule": "false", "messageExpression": at_limit}), json!({})).len(),
            MAX_EVALUATED_MESSAGE_BYTES
        );
        for bad in ["self.m.b", "1", "'  '", "'a\\nb'", too_long.as_str()] {
            let with_message = json!({"rule": "false", "messageExpression": bad, "message": " static "});
            assert_eq!(message_of(with_message, json!({"m": {}})), "static", "{bad}");
            let without = json!({"rule": " false ", "messageExpression": bad});
            assert_eq!(
                message_of(without, json!({"m": {}})),
                "failed rule: false",
                "{bad}"
            );
        }
    }
}
