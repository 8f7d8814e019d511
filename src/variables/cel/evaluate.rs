//! Evaluating a compiled schema tree's rules against a value. The walk converts each value to
//! CEL once, bottom-up: a node's CEL value is assembled from its children's, and every rule on a
//! node shares it, so nested rules cost one conversion in all, not one per level. Values are
//! read as the rules' schema says (escaped property names, formats, embedded resources) and as
//! written: no schema `default` is filled in before the rules run, as Cluster API runs them (the
//! compiled schema holds none, see `schema_json`). Failures come out node by node from the root
//! down, each node's before its children's.

use std::collections::HashMap;

use kube_cel::cel::{Context, ExecutionError, Value as Cel};
use kube_cel::{CompilationError, CompilationResult, CompiledSchema, KubeCelExt};
use serde_json::Value;

use super::message::failure_message;
use super::value::{self, TooDeep, MAX_VALUE_DEPTH};
use super::value_path::Step;

thread_local! {
    /// The CEL functions (standard and Kubernetes libraries), registered once per thread.
    static FUNCTIONS: Context<'static> = {
        let mut context = Context::default();
        context.register_all();
        context
    };
}

/// Why a rule did not pass.
#[derive(Debug)]
pub(super) enum Outcome {
    /// It evaluated to false; the message is picked by [`failure_message`].
    False(String),
    /// It evaluated to something other than a boolean.
    NotBoolean,
    /// Its evaluation failed.
    Error(ExecutionError),
    /// It could not be compiled (the class's checks refuse such rules; kept for safety).
    NotCompiled(String),
    /// Its value nests deeper than conversion follows.
    TooDeep,
}

/// One rule that did not pass, at the node it sits on (plus its `fieldPath`).
#[derive(Debug)]
pub(super) struct Failure<'a> {
    /// Where the failure is reported, from the evaluated value down.
    pub steps: Vec<Step<'a>>,
    /// The rule, when there is one (`None` for a value too deep to convert).
    pub rule: Option<&'a CompilationResult>,
    /// What happened.
    pub outcome: Outcome,
}

/// Evaluates every rule of `schema` against `value` (`old` binds `oldSelf` on transition rules,
/// which are skipped without it unless `optionalOldSelf`).
pub(super) fn evaluate<'a>(
    schema: &'a CompiledSchema,
    value: &'a Value,
    old: Option<&'a Value>,
) -> Vec<Failure<'a>> {
    FUNCTIONS.with(|functions| {
        let mut walk = Walk {
            functions,
            evaluating: true,
            failures: Vec::new(),
        };
        let node = Node { schema, value, old };
        walk.node(&node, &Path::Root, false, 0);
        walk.failures
    })
}

/// Where a node sits; turned into steps only when a failure is reported, so the happy path
/// allocates no path.
#[derive(Clone, Copy)]
enum Path<'p, 'a> {
    /// The evaluated value itself.
    Root,
    /// A declared property of the parent.
    Child(&'p Path<'p, 'a>, &'a str),
    /// A map entry of the parent.
    Key(&'p Path<'p, 'a>, &'a str),
    /// A list item of the parent.
    Index(&'p Path<'p, 'a>, usize),
}

impl<'a> Path<'_, 'a> {
    fn steps(&self) -> Vec<Step<'a>> {
        let mut steps = Vec::new();
        let mut at = self;
        loop {
            let (parent, step) = match at {
                Path::Root => break,
                Path::Child(parent, name) => (parent, Step::Field(name)),
                Path::Key(parent, key) => (parent, Step::Key(key)),
                Path::Index(parent, index) => (parent, Step::Index(*index)),
            };
            steps.push(step);
            at = parent;
        }
        steps.reverse();
        steps
    }
}

/// A schema node and the value (and old value) at it.
struct Node<'a> {
    schema: &'a CompiledSchema,
    value: &'a Value,
    old: Option<&'a Value>,
}

struct Walk<'a, 'f> {
    functions: &'f Context<'static>,
    /// False when only converting (an old value): no rule runs.
    evaluating: bool,
    failures: Vec<Failure<'a>>,
}

impl<'a> Walk<'a, '_> {
    /// Walks one node: evaluates the rules below it and its own, and returns its CEL value when
    /// `needed` (an ancestor has rules) or its own rules need it.
    fn node(&mut self, node: &Node<'a>, path: &Path<'_, 'a>, needed: bool, depth: usize) -> Option<Cel> {
        let schema = node.schema;
        let has_rules = self.evaluating && !schema.validations.is_empty();
        let needed_here = needed || has_rules;
        if depth > MAX_VALUE_DEPTH {
            self.too_deep(path);
            return None;
        }
        let slot = self.failures.len();
        let converted = match node.value {
            Value::Object(fields) => self.object(node, fields, path, needed_here, depth),
            Value::Array(items) => self.list(node, items, path, needed_here, depth),
            scalar => value::scalar(scalar, &schema.format),
        };
        for branch in schema.all_of.iter().chain(&schema.one_of).chain(&schema.any_of) {
            let branch = Node {
                schema: branch,
                value: node.value,
                old: node.old,
            };
            self.node(&branch, path, false, depth + 1);
        }
        if has_rules {
            if let Some(converted) = &converted {
                let own = self.rules(node, converted, path, depth);
                self.failures.splice(slot..slot, own);
            }
        }
        converted.filter(|_| needed)
    }

    fn object(
        &mut self,
        node: &Node<'a>,
        fields: &'a serde_json::Map<String, Value>,
        path: &Path<'_, 'a>,
        needed: bool,
        depth: usize,
    ) -> Option<Cel> {
        let schema = node.schema;
        let additional = schema
            .additional_properties
            .as_deref()
            .filter(|_| !schema.preserve_unknown_fields);
        let mut map = needed.then(|| HashMap::with_capacity(fields.len()));
        for (name, field) in fields {
            let (child_schema, child_path) = match (schema.properties.get(name), additional) {
                (Some(child), _) => (Some(child), Path::Child(path, name)),
                (None, Some(entry)) => (Some(entry), Path::Key(path, name)),
                (None, None) => (None, *path),
            };
            let converted = match child_schema {
                Some(child_schema) => {
                    let child = Node {
                        schema: child_schema,
                        value: field,
                        old: node.old.and_then(|old| old.get(name)),
                    };
                    self.node(&child, &child_path, needed, depth + 1)
                }
                None if needed => self.untyped(field, path, depth),
                None => None,
            };
            if let (Some(map), Some(converted)) = (map.as_mut(), converted) {
                if let Some(key) = value::key(name, schema.is_map) {
                    map.insert(key, converted);
                }
            }
        }
        let mut map = map?;
        if schema.embedded_resource {
            value::embedded_resource_fields(&mut map);
        }
        Some(value::object(map))
    }

    fn list(
        &mut self,
        node: &Node<'a>,
        items: &'a [Value],
        path: &Path<'_, 'a>,
        needed: bool,
        depth: usize,
    ) -> Option<Cel> {
        let Some(items_schema) = node.schema.items.as_deref() else {
            return needed.then(|| self.untyped(node.value, path, depth)).flatten();
        };
        let old_items = node.old.and_then(Value::as_array);
        let mut list = Vec::with_capacity(if needed { items.len() } else { 0 });
        for (index, item) in items.iter().enumerate() {
            let child = Node {
                schema: items_schema,
                value: item,
                old: old_items.and_then(|old| old.get(index)),
            };
            if let Some(converted) = self.node(&child, &Path::Index(path, index), needed, depth + 1) {
                list.push(converted);
            }
        }
        needed.then(|| Cel::List(list.into()))
    }

    fn untyped(&mut self, value: &Value, path: &Path<'_, 'a>, depth: usize) -> Option<Cel> {
        match value::untyped(value, depth + 1) {
            Ok(converted) => Some(converted),
            Err(TooDeep) => {
                self.too_deep(path);
                None
            }
        }
    }

    fn too_deep(&mut self, path: &Path<'_, 'a>) {
        self.failures.push(Failure {
            steps: path.steps(),
            rule: None,
            outcome: Outcome::TooDeep,
        });
    }

    /// Evaluates the node's own rules with `self` bound to its value.
    fn rules(&self, node: &Node<'a>, converted: &Cel, path: &Path<'_, 'a>, depth: usize) -> Vec<Failure<'a>> {
        let schema = node.schema;
        let needs_old = schema
            .validations
            .iter()
            .any(|rule| matches!(rule, Ok(rule) if rule.is_transition_rule));
        let old = match node.old.filter(|_| needs_old) {
            Some(old) => match convert_alone(schema, old, depth) {
                Ok(old) => Some(old),
                Err(TooDeep) => {
                    return vec![Failure {
                        steps: path.steps(),
                        rule: None,
                        outcome: Outcome::TooDeep,
                    }]
                }
            },
            None => None,
        };
        let mut scope = self.functions.new_inner_scope();
        scope.add_variable_from_value("self", converted.clone());
        if let Some(old) = &old {
            scope.add_variable_from_value("oldSelf", old.clone());
        }
        let mut failures = Vec::new();
        for compiled in &schema.validations {
            let rule = match compiled {
                Ok(rule) => rule,
                Err(error) => {
                    failures.push(Failure {
                        steps: path.steps(),
                        rule: None,
                        outcome: Outcome::NotCompiled(compilation_error(error)),
                    });
                    continue;
                }
            };
            let optional_old = rule.rule.optional_old_self == Some(true);
            if rule.is_transition_rule && old.is_none() && !optional_old {
                continue;
            }
            let outcome = if rule.is_transition_rule && old.is_none() {
                let mut null_old = scope.new_inner_scope();
                null_old.add_variable_from_value("oldSelf", Cel::Null);
                outcome(rule, &null_old)
            } else {
                outcome(rule, &scope)
            };
            if let Some(outcome) = outcome {
                failures.push(Failure {
                    steps: rule_steps(path, rule.rule.field_path.as_deref()),
                    rule: Some(rule),
                    outcome,
                });
            }
        }
        failures
    }
}

/// A value converted for a node on its own (an old value for `oldSelf`): the same reading as
/// the walk's, without evaluating anything.
fn convert_alone<'a>(schema: &'a CompiledSchema, value: &'a Value, depth: usize) -> Result<Cel, TooDeep> {
    FUNCTIONS.with(|functions| {
        let mut walk = Walk {
            functions,
            evaluating: false,
            failures: Vec::new(),
        };
        let node = Node {
            schema,
            value,
            old: None,
        };
        let converted = walk.node(&node, &Path::Root, true, depth);
        match converted {
            Some(converted) if walk.failures.is_empty() => Ok(converted),
            _ => Err(TooDeep),
        }
    })
}

fn outcome(rule: &CompilationResult, scope: &Context<'_>) -> Option<Outcome> {
    match rule.program.execute(scope) {
        Ok(Cel::Bool(true)) => None,
        Ok(Cel::Bool(false)) => Some(Outcome::False(failure_message(rule, scope))),
        Ok(_) => Some(Outcome::NotBoolean),
        Err(error) => Some(Outcome::Error(error)),
    }
}

fn compilation_error(error: &CompilationError) -> String {
    match error {
        CompilationError::Parse { rule, source } => format!("failed to compile rule {rule:?}: {source}"),
        other => format!("{other:?}"),
    }
}

/// The node's steps followed by the rule's `fieldPath` (`.spec.x` or `spec.x`), one field per
/// dot-separated segment.
fn rule_steps<'a>(path: &Path<'_, 'a>, field_path: Option<&'a str>) -> Vec<Step<'a>> {
    let mut steps = path.steps();
    steps.extend(
        field_path
            .into_iter()
            .flat_map(|fp| fp.split('.'))
            .filter(|segment| !segment.is_empty())
            .map(Step::Field),
    );
    steps
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::api::JSONSchemaProps;
    use crate::field::FieldPath;
    use crate::variables::cel::{CelRules, Shown};

    fn shown_failures(schema: &str, value: serde_json::Value, shown: Shown) -> Vec<String> {
        let props: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
        let rules = CelRules::compile(&props, &FieldPath::new("schema")).unwrap();
        rules
            .validate(&value, None, &FieldPath::new("v"), shown)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn failures(schema: &str, value: serde_json::Value) -> Vec<String> {
        shown_failures(schema, value, Shown::Json)
    }

    #[test]
    fn escaped_property_names_evaluate() {
        for (name, access) in [
            ("foo-bar", "foo__dash__bar"),
            ("a.b", "a__dot__b"),
            ("__x", "__underscores__x"),
            ("my_field", "my_field"),
            ("namespace", "__namespace__"),
            ("x/y", "x__slash__y"),
        ] {
            let schema = format!(
                "{{type: object, properties: {{'{name}': {{type: integer}}}}, \
                 x-kubernetes-validations: [{{rule: 'self.{access} == 1'}}]}}"
            );
            assert!(
                failures(&schema, json!({ name: 1 })).is_empty(),
                "{name} as {access}"
            );
            assert_eq!(
                failures(&schema, json!({ name: 2 })).len(),
                1,
                "{name} as {access}"
            );
        }
    }

    #[test]
    fn an_escaped_name_is_reached_only_through_its_escape() {
        let unescaped: JSONSchemaProps = serde_yaml_ng::from_str(
            "{type: object, properties: {a__b: {type: integer}}, \
             x-kubernetes-validations: [{rule: 'self.a__b == 1'}]}",
        )
        .unwrap();
        let refused = CelRules::compile(&unescaped, &FieldPath::new("schema")).unwrap_err();
        assert!(
            refused
                .iter()
                .any(|e| e.to_string().contains("undefined field 'a__b'")),
            "{refused:?}"
        );
        let schema = "{type: object, properties: {a__b: {type: integer}}, \
                      x-kubernetes-validations: [{rule: 'self.a__underscores__b == 1'}]}";
        assert!(failures(schema, json!({"a__b": 1})).is_empty());
        assert_eq!(
            failures(schema, json!({"a__b": 2})),
            [r#"v: Invalid value: "{\"a__b\":2}": failed rule: self.a__underscores__b == 1"#]
        );
    }

    #[test]
    fn map_keys_are_not_escaped_and_entries_report_as_keys() {
        let schema = "{type: object, additionalProperties: {type: integer, \
                      x-kubernetes-validations: [{rule: 'self > 0', message: positive}]}, \
                      x-kubernetes-validations: [{rule: \"self['foo-bar'] > 0\", message: has foo-bar}]}";
        assert!(failures(schema, json!({"foo-bar": 1})).is_empty());
        assert_eq!(
            failures(schema, json!({"foo-bar": -1})),
            [
                r#"v: Invalid value: "{\"foo-bar\":-1}": has foo-bar"#,
                r#"v[foo-bar]: Invalid value: "{\"foo-bar\":-1}": positive"#,
            ]
        );
        assert_eq!(
            shown_failures(schema, json!({"foo-bar": -1}), Shown::NodeType),
            [
                r#"v: Invalid value: "object": has foo-bar"#,
                r#"v[foo-bar]: Invalid value: "integer": positive"#,
            ]
        );
    }

    #[test]
    fn nested_rules_see_one_value_and_report_parents_first() {
        let schema = "{type: object, properties: {items: {type: array, items: {type: object, \
                      properties: {n: {type: integer}}, \
                      x-kubernetes-validations: [{rule: 'self.n < 3', message: small}]}}}, \
                      x-kubernetes-validations: [{rule: 'self.items.all(i, i.n < 3)', message: all small}]}";
        assert_eq!(
            failures(schema, json!({"items": [{"n": 1}, {"n": 5}]})),
            [
                r#"v: Invalid value: "{\"items\":[{\"n\":1},{\"n\":5}]}": all small"#,
                r#"v.items[1]: Invalid value: "{\"items\":[{\"n\":1},{\"n\":5}]}": small"#,
            ]
        );
    }

    #[test]
    fn rules_see_the_value_as_written_without_schema_defaults() {
        let schema = "{type: object, properties: {n: {type: integer, default: 5}, \
                      o: {type: object, default: {}, properties: {k: {type: string, default: x}}}}, \
                      x-kubernetes-validations: [{rule: '!has(self.n) && !has(self.o)', message: nothing added}, \
                      {rule: 'self.n == 5', message: five}]}";
        assert_eq!(
            failures(schema, json!({})),
            [r#"v: Invalid value: "{}": no such key: n evaluating rule: five"#]
        );
        let schema = "{type: object, properties: {o: {type: object, \
                      properties: {k: {type: string, default: x}}, \
                      x-kubernetes-validations: [{rule: 'self.k == \"x\"'}]}}}";
        assert_eq!(
            failures(schema, json!({"o": {}})),
            [r#"v.o: Invalid value: "{\"o\":{}}": no such key: k evaluating rule: self.k == "x""#]
        );
    }
}
