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
mod cost_functions;
#[cfg(test)]
mod cost_reference;
mod cost_size;
mod cost_types;
mod escaping;
mod evaluate;
mod field_check;
mod field_path;
mod guard;
mod kept;
pub mod limits;
mod message;
mod rule_value;
mod schema_json;
mod total_cost;
mod value;
mod value_path;

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
    /// The schema the rules belong to: a failure in a schema's own values shows the `type` of
    /// the node holding the failing rule.
    schema: Arc<JSONSchemaProps>,
}

/// What an error of a failing rule shows as the value it judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// The whole value as JSON, as Cluster API shows a Cluster's variable values.
    Json,
    /// The `type` of the schema node holding the rule, as the API server shows a schema's own
    /// `default`, `example` and `enum` values.
    NodeType,
}

impl CelRules {
    /// [`CelRules::compile`] for the root of a variable's schema, which the API server types as
    /// a resource root when the root has rules: a list there cannot be typed, and none of the
    /// tree's rules compile (an internal error at each node with rules).
    pub fn compile_root(schema: &JSONSchemaProps, schema_path: &FieldPath) -> Result<CelRules, FieldErrors> {
        Self::compile_tree(schema, schema_path, true, true)
    }

    /// Checks every rule of the tree (non-blank, message rules, reason, fieldPath, `oldSelf`
    /// placement, cost) and compiles them. Errors sit at `schema_path` + the node's keyword path,
    /// e.g. `...openAPIV3Schema.properties[a].x-kubernetes-validations[0].rule`. Expressions past
    /// the parser's size and depth limits (see [`limits`]), and trees nested deeper than any
    /// schema may be, are refused before anything is parsed.
    pub fn compile(schema: &JSONSchemaProps, schema_path: &FieldPath) -> Result<CelRules, FieldErrors> {
        Self::compile_tree(schema, schema_path, false, true)
    }

    /// [`CelRules::compile`] without the static cost limits, to evaluate rules on a value the
    /// definition itself holds (a `default`): the API server's validator of a default compiles
    /// the rules without estimating their cost, which the definition's own check reports.
    pub fn compile_to_evaluate(
        schema: &JSONSchemaProps,
        schema_path: &FieldPath,
    ) -> Result<CelRules, FieldErrors> {
        Self::compile_tree(schema, schema_path, false, false)
    }

    fn compile_tree(
        schema: &JSONSchemaProps,
        schema_path: &FieldPath,
        root: bool,
        costs: bool,
    ) -> Result<CelRules, FieldErrors> {
        if !checks::has_rules(schema) {
            return Ok(CelRules {
                compiled: None,
                rule_names: Arc::default(),
                schema: Arc::default(),
            });
        }
        let key = kept::Key::of(schema, root, costs);
        if let Some(rules) = key.as_ref().and_then(kept::get) {
            return Ok(rules);
        }
        let rules = Self::compile_checked(schema, schema_path, root, costs)?;
        if let Some(key) = key {
            kept::keep(key, &rules);
        }
        Ok(rules)
    }

    /// [`CelRules::compile_tree`] of a schema with rules, every time.
    fn compile_checked(
        schema: &JSONSchemaProps,
        schema_path: &FieldPath,
        root: bool,
        costs: bool,
    ) -> Result<CelRules, FieldErrors> {
        checks::check_limits(schema, schema_path).into_result()?;
        let json = schema_json::without_defaults(schema)
            .map_err(|e| FieldErrors::from(FieldError::internal(schema_path, e.to_string())))?;
        let compiled = guard::compiling(|| {
            let compiled = compile_schema(&json);
            let errors = checks::check_tree(schema, &compiled, schema_path, root, costs);
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
            schema: Arc::new(schema.clone()),
        })
    }

    /// Why each rule of `schema`'s own node does not compile (`compilation failed: ERROR: ...`),
    /// by rule index: a parse error, else a field the checker finds undefined. `resource_root`:
    /// the node is typed as a resource root.
    pub fn node_compile_errors(schema: &JSONSchemaProps, resource_root: bool) -> Vec<(usize, String)> {
        schema
            .x_validations
            .iter()
            .enumerate()
            .filter_map(|(i, rule)| {
                let why = match cel::Program::compile(&rule.rule) {
                    Err(parse) => parse.to_string(),
                    Ok(_) => field_check::field_errors(&rule.rule, schema, resource_root)?,
                };
                Some((i, format!("compilation failed: {why}")))
            })
            .collect()
    }

    /// True when the tree has no rule.
    pub fn is_empty(&self) -> bool {
        self.compiled.is_none()
    }

    /// Evaluates every rule against `value` (`old` binds `oldSelf`; transition rules are skipped
    /// without it). Errors sit at `value_path` plus the rule's node or `fieldPath`, and show the
    /// value as `shown` says.
    pub fn validate(
        &self,
        value: &Value,
        old: Option<&Value>,
        value_path: &FieldPath,
        shown: Shown,
    ) -> FieldErrors {
        let Some(compiled) = &self.compiled else {
            return FieldErrors::new();
        };
        let (result, spent) = cel::budget::with_limit(RUNTIME_COST_BUDGET, || {
            guard::evaluating(|| evaluate::evaluate(compiled, value, old))
        });
        let raw = || match shown {
            Shown::Json => Value::from(serde_json::to_string(value).unwrap_or_default()),
            Shown::NodeType => Value::from(self.schema.type_.as_str()),
        };
        if spent.exhausted {
            return FieldError::invalid(
                value_path,
                raw(),
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
        let json = raw();
        failures
            .into_iter()
            .map(|failure| self.field_error(failure, value_path, shown, &json))
            .collect()
    }

    /// A failed rule as a field error at `value_path` plus the failure's steps: its reason picks
    /// the type (an evaluation error is always Invalid); Invalid and Duplicate show the value as
    /// `shown` says (`json` for [`Shown::Json`]).
    fn field_error(
        &self,
        failure: evaluate::Failure<'_>,
        value_path: &FieldPath,
        shown: Shown,
        json: &Value,
    ) -> FieldError {
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
        let value = matches!(kind, ErrorType::Invalid | ErrorType::Duplicate).then(|| match shown {
            Shown::Json => json.clone(),
            Shown::NodeType => value_path::rule_node_type(&self.schema, &failure.steps, rule_text).into(),
        });
        FieldError::new(
            kind,
            &value_path::field_path(value_path, &failure.steps),
            value,
            detail,
        )
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
            .validate(&value, old.as_ref(), &path, Shown::Json)
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
    fn a_message_expression_falls_back_to_the_message_then_to_the_rule() {
        let with = |expression: &str, message: Option<&str>| {
            let mut rule = json!({"rule": " self.a == 'ok' ", "messageExpression": expression});
            if let Some(message) = message {
                rule["message"] = json!(message);
            }
            let schema = json!({"type": "object", "x-kubernetes-validations": [rule],
                                "properties": {"a": {"type": "string"},
                                               "m": {"type": "object", "additionalProperties": {"type": "string"}}}});
            failures(&schema.to_string(), json!({"a": "no"}), None)
        };
        let expected = |detail: &str| [format!(r#"{P}: Invalid value: "{{\"a\":\"no\"}}": {detail}"#)];
        assert_eq!(with("'  a is ' + self.a + ' '", Some("m")), expected("a is no"));
        assert_eq!(with("'one\\rline'", Some("m")), expected("one\rline"));
        // An error, a non-string, an empty, a multi-line and a too long message all fall back.
        let too_long = format!("'{}'", "x".repeat(5121));
        for bad in ["self.m.b", "1", "' '", "'x\\ny'", too_long.as_str()] {
            assert_eq!(with(bad, Some("static ")), expected("static"), "{bad}");
            assert_eq!(with(bad, None), expected("failed rule: self.a == 'ok'"), "{bad}");
        }
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
                r#"{P}: Invalid value: "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99]": validation failed due to running out of cost budget, no further validation rules will be run"#
            )]
        );
    }

    #[test]
    fn message_construction_is_an_error_not_a_panic() {
        let schema = "{type: object, x-kubernetes-validations: [{rule: 'Foo{a: 1} == self', message: m}]}";
        let props: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
        if let Ok(rules) = CelRules::compile(&props, &FieldPath::new("schema")) {
            let path = FieldPath::new("v");
            assert_eq!(rules.validate(&json!({}), None, &path, Shown::Json).len(), 1);
        }
    }

    #[test]
    fn schemas_without_rules_compile_to_nothing() {
        assert!(rules("{type: object, properties: {a: {type: string}}}").is_empty());
    }
}
