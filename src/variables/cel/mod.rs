//! CEL `x-kubernetes-validations` of a variable schema: compiled once with the Kubernetes CEL
//! libraries (kube-cel), checked at definition time, evaluated against values (with `oldSelf` for
//! transition rules), and reported the way the API server reports them.

use std::collections::HashMap;
use std::sync::Arc;

use kube_cel::{compile_schema, CompiledSchema};
use serde_json::Value;

use crate::api::JSONSchemaProps;
use crate::field::{ErrorType, FieldError, FieldErrors, FieldPath};

mod checks;
mod cost;
mod escaping;
mod evaluate;
mod field_path;
mod guard;
pub mod limits;
mod total_cost;
mod value;

/// The evaluation cost one object's rules may spend, all together (the API server's
/// `RuntimeCELCostBudget`); about 0.4 s of evaluation here.
pub const RUNTIME_COST_BUDGET: u64 = 10_000_000;

/// Runs `validation` (which may evaluate the rules of many values) with one shared
/// [`RUNTIME_COST_BUDGET`], as the API server charges every rule of one object to one budget.
pub fn with_object_budget<T>(validation: impl FnOnce() -> T) -> T {
    cel::budget::with_limit(RUNTIME_COST_BUDGET, validation).0
}

/// The compiled CEL rules of one schema tree.
#[derive(Debug, Clone)]
pub struct CelRules {
    compiled: Option<Arc<CompiledSchema>>,
    /// How an evaluation error names each rule (its message, else the rule), by rule.
    rule_names: Arc<HashMap<String, String>>,
    /// The root's `type`, which a budget error shows as the value (as the API server does).
    root_type: String,
}

impl CelRules {
    /// Checks every rule of the tree (non-blank, message rules, reason, fieldPath, `oldSelf`
    /// placement, cost) and compiles them. Errors sit at `schema_path` + the node's keyword path,
    /// e.g. `...openAPIV3Schema.properties[a].x-kubernetes-validations[0].rule`. Expressions past
    /// the parser's size and depth limits (see [`limits`]), and trees nested deeper than any
    /// schema may be, are refused before anything is parsed.
    pub fn compile(schema: &JSONSchemaProps, schema_path: &FieldPath) -> Result<CelRules, FieldErrors> {
        if !checks::has_rules(schema) {
            return Ok(CelRules {
                compiled: None,
                rule_names: Arc::default(),
                root_type: String::new(),
            });
        }
        checks::check_limits(schema, schema_path).into_result()?;
        let json = serde_json::to_value(schema)
            .map_err(|e| FieldErrors::from(FieldError::internal(schema_path, e.to_string())))?;
        let compiled = guard::compiling(|| {
            let compiled = compile_schema(&json);
            let errors = checks::check_tree(schema, &compiled, schema_path);
            (compiled, errors)
        });
        let (compiled, errors) = compiled.map_err(|panic| {
            FieldErrors::from(FieldError::internal(
                schema_path,
                format!("the CEL rules of this schema cannot be compiled: {}", panic.0),
            ))
        })?;
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(CelRules {
            compiled: Some(Arc::new(compiled)),
            rule_names: Arc::new(checks::rule_names(schema)),
            root_type: schema.type_.clone(),
        })
    }

    /// True when the tree has no rule.
    pub fn is_empty(&self) -> bool {
        self.compiled.is_none()
    }

    /// Evaluates every rule against `value` (`old` binds `oldSelf`; transition rules are skipped
    /// without it). Errors sit at `value_path` plus the rule's node or `fieldPath`.
    pub fn validate(&self, value: &Value, old: Option<&Value>, value_path: &FieldPath) -> FieldErrors {
        let Some(compiled) = &self.compiled else {
            return FieldErrors::new();
        };
        let (result, spent) = cel::budget::with_limit(RUNTIME_COST_BUDGET, || {
            guard::evaluating(|| evaluate::evaluate(compiled, value, old, value_path))
        });
        if spent.exhausted {
            return FieldError::invalid(
                value_path,
                self.root_type.as_str(),
                "validation failed due to running out of cost budget, no further validation rules will be run",
            )
            .into();
        }
        let failures = match result {
            Ok(failures) if failures.is_empty() => return FieldErrors::new(),
            Ok(failures) => failures,
            Err(panic) => {
                return FieldError::internal(
                    value_path,
                    format!("the CEL rules cannot be evaluated: {}", panic.0),
                )
                .into()
            }
        };
        let raw = serde_json::to_string(value).unwrap_or_default();
        failures
            .into_iter()
            .map(|failure| self.field_error(failure, &raw))
            .collect()
    }

    /// A failed rule as a field error: its reason picks the type (an evaluation error is always
    /// Invalid); Invalid and Duplicate show the whole value, as `raw` JSON.
    fn field_error(&self, failure: evaluate::Failure<'_>, raw: &str) -> FieldError {
        let rule_text = failure.rule.map_or("", |rule| rule.rule.rule.as_str());
        let (kind, detail) = match failure.outcome {
            evaluate::Outcome::False(message) => {
                let kind = match failure.rule.and_then(|rule| rule.rule.reason.as_deref()) {
                    Some("FieldValueRequired") => ErrorType::Required,
                    Some("FieldValueForbidden") => ErrorType::Forbidden,
                    Some("FieldValueDuplicate") => ErrorType::Duplicate,
                    _ => ErrorType::Invalid,
                };
                (kind, message)
            }
            evaluate::Outcome::NotBoolean => (
                ErrorType::Invalid,
                format!("rule \"{rule_text}\" did not evaluate to bool"),
            ),
            evaluate::Outcome::Error(cel::ExecutionError::UndeclaredReference(name)) => (
                ErrorType::Invalid,
                format!(
                    "rule references '{name}', which is not supported here (an unsupported CEL macro or \
                     function); it cannot be evaluated"
                ),
            ),
            evaluate::Outcome::Error(error) => (
                ErrorType::Invalid,
                self.evaluation_error(rule_text, &error.to_string()),
            ),
            evaluate::Outcome::NotCompiled(message) => (ErrorType::Invalid, message),
            evaluate::Outcome::TooDeep => (
                ErrorType::Invalid,
                format!("the value nests deeper than {} levels", value::MAX_VALUE_DEPTH),
            ),
        };
        let shown = matches!(kind, ErrorType::Invalid | ErrorType::Duplicate).then(|| Value::from(raw));
        FieldError::new(kind, &failure.path, shown, detail)
    }

    /// An evaluation error as the API server words it: `no such key: a evaluating rule: <the
    /// rule's message, else the rule>`.
    fn evaluation_error(&self, rule: &str, message: &str) -> String {
        let cause = message.strip_prefix("rule evaluation error: ").unwrap_or(message);
        let mut chars = cause.chars();
        let cause: String = chars
            .next()
            .map(|first| first.to_lowercase().chain(chars).collect())
            .unwrap_or_default();
        let name = self.rule_names.get(rule).map_or(rule.trim(), String::as_str);
        format!("{cause} evaluating rule: {name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(schema: &str) -> CelRules {
        let props: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
        CelRules::compile(&props, &FieldPath::new("schema")).unwrap()
    }

    fn failures(schema: &str, value: Value, old: Option<Value>) -> Vec<String> {
        let path = FieldPath::new("spec")
            .children(&["topology", "variables"])
            .key("v")
            .child("value");
        rules(schema)
            .validate(&value, old.as_ref(), &path)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    const P: &str = "spec.topology.variables[v].value";

    #[test]
    fn failing_rules_report_message_and_path() {
        let schema = "{type: object, properties: {dataDir: {type: string}}, x-kubernetes-validations: \
                      [{rule: \"self.dataDir.startsWith('/')\", message: dataDir must be an absolute path}]}";
        assert_eq!(
            failures(schema, json!({"dataDir": "var"}), None),
            [format!(
                r#"{P}: Invalid value: "{{\"dataDir\":\"var\"}}": dataDir must be an absolute path"#
            )]
        );
        assert!(failures(schema, json!({"dataDir": "/var"}), None).is_empty());
    }

    #[test]
    fn message_expression_reason_and_kubernetes_libraries() {
        let schema = "{type: string, x-kubernetes-validations: [{rule: 'self == \"\" || self != \"\"', \
                      messageExpression: \"'got %s'.format([self])\"}]}";
        assert!(failures(schema, json!("x"), None).is_empty());
        let schema = "{type: string, x-kubernetes-validations: [{rule: 'isCIDR(self) && cidr(self).prefixLength() <= 24', \
                      message: too small, reason: FieldValueForbidden}]}";
        assert_eq!(
            failures(schema, json!("10.0.0.0/28"), None),
            [format!("{P}: Forbidden: too small")]
        );
    }

    #[test]
    fn transition_rules_need_an_old_value() {
        let schema = "{type: integer, x-kubernetes-validations: [{rule: 'self >= oldSelf', message: may not decrease}]}";
        assert!(failures(schema, json!(1), None).is_empty());
        assert_eq!(
            failures(schema, json!(1), Some(json!(2))),
            [format!(r#"{P}: Invalid value: "1": may not decrease"#)]
        );
    }

    #[test]
    fn running_out_of_the_cost_budget_stops_evaluation_with_the_api_server_words() {
        let schema = "{type: array, maxItems: 100, items: {type: integer}, x-kubernetes-validations: \
                      [{rule: 'self.all(a, self.all(b, a + b >= 0))', message: m}]}";
        let value = json!((0..100).collect::<Vec<_>>());
        assert!(failures(schema, value.clone(), None).is_empty());
        let spent_out = cel::budget::with_limit(1_000, || failures(schema, value, None)).0;
        assert_eq!(
            spent_out,
            [format!(
                r#"{P}: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run"#
            )]
        );
    }

    #[test]
    fn message_construction_is_an_error_not_a_panic() {
        let schema = "{type: object, x-kubernetes-validations: [{rule: 'Foo{a: 1} == self', message: m}]}";
        let props: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
        if let Ok(rules) = CelRules::compile(&props, &FieldPath::new("schema")) {
            let path = FieldPath::new("v");
            assert_eq!(rules.validate(&json!({}), None, &path).len(), 1);
        }
    }

    #[test]
    fn schemas_without_rules_compile_to_nothing() {
        assert!(rules("{type: object, properties: {a: {type: string}}}").is_empty());
    }
}
