//! A rule as the API server shows it when one of its expressions does not compile: the Go
//! value of the `ValidationRule` (`%#v`), e.g. `apiextensions.ValidationRule{Rule:"self.x > 0",
//! Message:"", ...}`.

use crate::api::ValidationRule;
use crate::field::{truncate, ErrorType, FieldError, FieldPath, MAX_RENDERED_VALUE};
use crate::go_format::quote as go_quote;

/// `Invalid value: <the rule as a Go value>: <detail>` at `path`; the rule is cut as any shown
/// value is (see [`MAX_RENDERED_VALUE`]), so a huge rule leaves room for the detail.
pub fn invalid_rule(path: &FieldPath, rule: &ValidationRule, detail: &str) -> FieldError {
    let shown = truncate(go_value(rule), MAX_RENDERED_VALUE);
    FieldError::new(ErrorType::Invalid, path, None, format!("{shown}: {detail}"))
}

/// The rule as Go's `%#v` prints it. A set `reason` is a pointer there, printed as an address
/// no one can reproduce; it is shown as the pointer's value instead.
fn go_value(rule: &ValidationRule) -> String {
    let reason = rule.reason.as_deref().map_or_else(
        || "(*apiextensions.FieldValueErrorReason)(nil)".to_owned(),
        |reason| format!("(*apiextensions.FieldValueErrorReason)({})", go_quote(reason)),
    );
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:(*bool)(nil)}}",
        go_quote(&rule.rule),
        go_quote(&rule.message),
        go_quote(&rule.message_expression),
        go_quote(&rule.field_path),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_print_as_go_values() {
        let rule: ValidationRule =
            serde_yaml_ng::from_str("{rule: \"self.a == \\\"x\\\"\", message: m}").unwrap();
        assert_eq!(
            invalid_rule(&FieldPath::new("r"), &rule, "compilation failed").to_string(),
            r#"r: Invalid value: apiextensions.ValidationRule{Rule:"self.a == \"x\"", Message:"m", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed"#
        );
    }
}
