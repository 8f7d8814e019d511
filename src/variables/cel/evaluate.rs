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
#[path = "evaluate_tests.rs"]
mod tests;
