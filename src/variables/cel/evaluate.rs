//! Evaluating a compiled schema tree's rules against a value. The walk converts each value to
//! CEL once, bottom-up: a node's CEL value is assembled from its children's, and every rule on a
//! node shares it, so nested rules cost one conversion in all, not one per level. Values are
//! read as the rules' schema says (escaped property names, formats, embedded resources), with
//! the schema's `default`s of missing properties filled in first, as the rules saw them before.
//! Failures come out node by node from the root down, each node's before its children's.

use std::collections::HashMap;

use kube_cel::cel::{Context, ExecutionError, Value as Cel};
use kube_cel::{CompilationError, CompilationResult, CompiledSchema, KubeCelExt};
use serde_json::Value;

use super::value::{self, TooDeep, MAX_VALUE_DEPTH};
use crate::field::FieldPath;

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
    /// It evaluated to false; the message is its messageExpression's, else its message, else
    /// `failed rule: <rule>`.
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
    /// Where the failure is reported.
    pub path: FieldPath,
    /// The rule, when there is one (`None` for a value too deep to convert).
    pub rule: Option<&'a CompilationResult>,
    /// What happened.
    pub outcome: Outcome,
}

/// Evaluates every rule of `schema` against `value` (`old` binds `oldSelf` on transition rules,
/// which are skipped without it unless `optionalOldSelf`), reporting failures under `path`.
pub(super) fn evaluate<'a>(
    schema: &'a CompiledSchema,
    value: &Value,
    old: Option<&Value>,
    path: &FieldPath,
) -> Vec<Failure<'a>> {
    FUNCTIONS.with(|functions| {
        let mut walk = Walk {
            functions,
            evaluating: true,
            failures: Vec::new(),
        };
        let node = Node {
            schema,
            value,
            old,
            defaulting: true,
        };
        walk.node(&node, &Path::Base(path), false, 0);
        walk.failures
    })
}

/// Where a node sits, built only when a failure is reported: the happy path allocates no path.
#[derive(Clone, Copy)]
enum Path<'p> {
    /// The value's own path.
    Base(&'p FieldPath),
    /// A declared property of the parent.
    Child(&'p Path<'p>, &'p str),
    /// A map entry of the parent.
    Key(&'p Path<'p>, &'p str),
    /// A list item of the parent.
    Index(&'p Path<'p>, usize),
}

impl Path<'_> {
    fn render(&self) -> FieldPath {
        let mut steps = Vec::new();
        let mut at = self;
        let base = loop {
            match at {
                Path::Base(base) => break *base,
                Path::Child(parent, _) | Path::Key(parent, _) | Path::Index(parent, _) => {
                    steps.push(at);
                    at = parent;
                }
            }
        };
        steps.iter().rev().fold(base.clone(), |path, step| match step {
            Path::Child(_, name) => path.child(name),
            Path::Key(_, key) => path.key(key),
            Path::Index(_, index) => path.index(*index),
            Path::Base(_) => path,
        })
    }
}

/// A schema node and the value (and old value) at it.
struct Node<'a, 'v> {
    schema: &'a CompiledSchema,
    value: &'v Value,
    old: Option<&'v Value>,
    /// Whether missing properties take their schema `default` (not inside a filled-in default,
    /// as before: defaults were filled in once, not into themselves).
    defaulting: bool,
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
    fn node(&mut self, node: &Node<'a, '_>, path: &Path<'_>, needed: bool, depth: usize) -> Option<Cel> {
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
                defaulting: false,
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
        node: &Node<'a, '_>,
        fields: &serde_json::Map<String, Value>,
        path: &Path<'_>,
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
                        defaulting: node.defaulting,
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
        if node.defaulting {
            self.defaults(node, fields, &mut map, path, needed, depth);
        }
        let mut map = map?;
        if schema.embedded_resource {
            value::embedded_resource_fields(&mut map);
        }
        Some(value::object(map))
    }

    /// Walks the `default` of every declared property the object leaves out, in name order, as
    /// if the object had it.
    fn defaults(
        &mut self,
        node: &Node<'a, '_>,
        fields: &serde_json::Map<String, Value>,
        map: &mut Option<HashMap<kube_cel::cel::objects::Key, Cel>>,
        path: &Path<'_>,
        needed: bool,
        depth: usize,
    ) {
        let mut missing: Vec<(&String, &'a CompiledSchema, &'a Value)> = node
            .schema
            .properties
            .iter()
            .filter(|(name, _)| !fields.contains_key(name.as_str()))
            .filter_map(|(name, child)| child.default.as_ref().map(|default| (name, child, default)))
            .collect();
        missing.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (name, child_schema, default) in missing {
            let child = Node {
                schema: child_schema,
                value: default,
                old: node.old.and_then(|old| old.get(name)),
                defaulting: false,
            };
            let converted = self.node(&child, &Path::Child(path, name), needed, depth + 1);
            if let (Some(map), Some(converted)) = (map.as_mut(), converted) {
                if let Some(key) = value::key(name, node.schema.is_map) {
                    map.insert(key, converted);
                }
            }
        }
    }

    fn list(
        &mut self,
        node: &Node<'a, '_>,
        items: &[Value],
        path: &Path<'_>,
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
                defaulting: node.defaulting,
            };
            if let Some(converted) = self.node(&child, &Path::Index(path, index), needed, depth + 1) {
                list.push(converted);
            }
        }
        needed.then(|| Cel::List(list.into()))
    }

    fn untyped(&mut self, value: &Value, path: &Path<'_>, depth: usize) -> Option<Cel> {
        match value::untyped(value, depth + 1) {
            Ok(converted) => Some(converted),
            Err(TooDeep) => {
                self.too_deep(path);
                None
            }
        }
    }

    fn too_deep(&mut self, path: &Path<'_>) {
        self.failures.push(Failure {
            path: path.render(),
            rule: None,
            outcome: Outcome::TooDeep,
        });
    }

    /// Evaluates the node's own rules with `self` bound to its value.
    fn rules(&self, node: &Node<'a, '_>, converted: &Cel, path: &Path<'_>, depth: usize) -> Vec<Failure<'a>> {
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
                        path: path.render(),
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
                        path: path.render(),
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
                    path: rule_path(&path.render(), rule.rule.field_path.as_deref()),
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
fn convert_alone(schema: &CompiledSchema, value: &Value, depth: usize) -> Result<Cel, TooDeep> {
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
            defaulting: true,
        };
        let root = FieldPath::root();
        let converted = walk.node(&node, &Path::Base(&root), true, depth);
        match converted {
            Some(converted) if walk.failures.is_empty() => Ok(converted),
            _ => Err(TooDeep),
        }
    })
}

fn outcome(rule: &CompilationResult, scope: &Context<'_>) -> Option<Outcome> {
    match rule.program.execute(scope) {
        Ok(Cel::Bool(true)) => None,
        Ok(Cel::Bool(false)) => Some(Outcome::False(message(rule, scope))),
        Ok(_) => Some(Outcome::NotBoolean),
        Err(error) => Some(Outcome::Error(error)),
    }
}

fn message(rule: &CompilationResult, scope: &Context<'_>) -> String {
    if let Some(Ok(Cel::String(message))) = rule.message_program.as_ref().map(|p| p.execute(scope)) {
        return message.to_string();
    }
    rule.rule
        .message
        .clone()
        .unwrap_or_else(|| format!("failed rule: {}", rule.rule.rule))
}

fn compilation_error(error: &CompilationError) -> String {
    match error {
        CompilationError::Parse { rule, source } => format!("failed to compile rule {rule:?}: {source}"),
        other => format!("{other:?}"),
    }
}

/// The node's path followed by the rule's `fieldPath` (`.spec.x` or `spec.x`), one field per
/// dot-separated segment.
fn rule_path(path: &FieldPath, field_path: Option<&str>) -> FieldPath {
    field_path
        .into_iter()
        .flat_map(|fp| fp.split('.'))
        .filter(|segment| !segment.is_empty())
        .fold(path.clone(), |path, segment| path.child(segment))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::api::JSONSchemaProps;
    use crate::field::FieldPath;
    use crate::variables::cel::CelRules;

    fn failures(schema: &str, value: serde_json::Value) -> Vec<String> {
        let props: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
        let rules = CelRules::compile(&props, &FieldPath::new("schema")).unwrap();
        rules
            .validate(&value, None, &FieldPath::new("v"))
            .iter()
            .map(ToString::to_string)
            .collect()
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
    fn unescaped_access_to_an_escaped_name_finds_no_such_key() {
        let schema = "{type: object, properties: {a__b: {type: integer}}, \
                      x-kubernetes-validations: [{rule: 'self.a__b == 1'}]}";
        assert_eq!(
            failures(schema, json!({"a__b": 1})),
            [r#"v: Invalid value: "{\"a__b\":1}": no such key: a__b evaluating rule: self.a__b == 1"#]
        );
        let schema = "{type: object, properties: {a__b: {type: integer}}, \
                      x-kubernetes-validations: [{rule: 'self.a__underscores__b == 1'}]}";
        assert!(failures(schema, json!({"a__b": 1})).is_empty());
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
    }

    #[test]
    fn nested_rules_see_one_value_and_report_parents_first() {
        let schema = "{type: object, properties: {items: {type: array, items: {type: object, \
                      properties: {n: {type: integer, default: 5}}, \
                      x-kubernetes-validations: [{rule: 'self.n < 3', message: small}]}}}, \
                      x-kubernetes-validations: [{rule: 'self.items.all(i, i.n < 3)', message: all small}]}";
        assert_eq!(
            failures(schema, json!({"items": [{"n": 1}, {}]})),
            [
                r#"v: Invalid value: "{\"items\":[{\"n\":1},{}]}": all small"#,
                r#"v.items[1]: Invalid value: "{\"items\":[{\"n\":1},{}]}": small"#,
            ]
        );
    }
}
