//! The static cost of a CEL expression, estimated as the API server estimates it (cel-go's
//! `checker.Cost` with the Kubernetes function costs and schema sizes): the worst case over every
//! value the schema admits. Each expression has a cost, a type, where it was read from in the
//! schema (its path: `self`, then fields, `@items`, `@values`, `@keys`), and, when known, a size.
//! Loops cost their condition and step once per element of their range; functions that walk a
//! string or list cost a tenth of a unit per character or element (see [`super::cost_functions`]).

use std::collections::HashMap;

use cel::common::ast::{
    ComprehensionExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, LiteralValue, SelectExpr,
};

use super::cost_functions::{call_cost, result_type, Call, Operand};
use super::cost_size::{max_elements, Size};
use super::cost_types::{Entries, Node, Path, Step, Ty};
use crate::api::JSONSchemaProps;

pub use super::cost_size::{max_cardinality, min_serialized_size};

/// What creating a list, map or message costs (cel-go's `common.*CreateBaseCost`).
const LIST_CREATE: u64 = 10;
const MAP_CREATE: u64 = 30;
const STRUCT_CREATE: u64 = 40;
/// The name the parser gives a macro's accumulator.
const ACCUMULATOR: &str = "@result";

/// A name in scope.
#[derive(Debug, Clone)]
struct Local<'a> {
    ty: Ty<'a>,
    path: Option<Path>,
    size: Option<Size>,
    entries: Option<Entries>,
}

/// The estimated worst-case cost of `expression` with `self` (and `oldSelf`) bound to `schema`.
pub fn estimate(expression: &IdedExpr, schema: &JSONSchemaProps) -> u64 {
    let mut estimator = Estimator {
        root: schema,
        scope: HashMap::new(),
    };
    for name in ["self", "oldSelf"] {
        estimator.push(
            name,
            Local {
                ty: Ty::of(schema),
                path: Some((name.to_owned(), Vec::new())),
                size: None,
                entries: None,
            },
        );
    }
    estimator.cost(&expression.expr).cost
}

struct Estimator<'a> {
    root: &'a JSONSchemaProps,
    scope: HashMap<String, Vec<Local<'a>>>,
}

impl<'a> Estimator<'a> {
    fn push(&mut self, name: &str, local: Local<'a>) {
        self.scope.entry(name.to_owned()).or_default().push(local);
    }

    fn pop(&mut self, name: &str) {
        if let Some(stack) = self.scope.get_mut(name) {
            stack.pop();
        }
    }

    fn local(&self, name: &str) -> Option<&Local<'a>> {
        self.scope.get(name).and_then(|stack| stack.last())
    }

    /// The size the schema gives the value at `path` (the API server's size estimator).
    fn schema_size(&self, path: &Option<Path>) -> Option<Size> {
        let (_, steps) = path.as_ref()?;
        let mut node = self.root;
        for (i, step) in steps.iter().enumerate() {
            node = match step {
                // Items and values both lead to the element, of a list or of a map.
                Step::Items | Step::Values => {
                    node.items.as_deref().or(node.additional_properties.as_deref())?
                }
                // A map's keys are strings the API server declares without a size.
                Step::Keys if i + 1 == steps.len() && node.additional_properties.is_some() => {
                    return Some(Size::fixed(0))
                }
                Step::Field(name) if node.additional_properties.is_none() => node
                    .properties
                    .iter()
                    .find(|(property, _)| super::escaping::escape(property).as_deref() == Some(name))
                    .map(|(_, schema)| schema)?,
                _ => return None,
            };
        }
        Some(Size {
            min: 0,
            max: max_elements(node),
        })
    }

    /// A node's size when nothing computed one: from the schema, else 1 for a scalar, else the
    /// local variable's (cel-go's `computeSize`).
    fn derived_size(&self, ty: &Ty<'a>, path: &Option<Path>, local: Option<Size>) -> Option<Size> {
        self.schema_size(path)
            .or_else(|| ty.is_scalar().then(|| Size::fixed(1)))
            .or(local)
    }

    fn cost(&mut self, expr: &'a Expr) -> Node<'a> {
        match expr {
            Expr::Unspecified => plain(0, Ty::Dyn),
            Expr::Literal(literal) => literal_node(literal),
            Expr::Ident(name) => self.ident(name),
            Expr::Select(select) => self.select(select),
            Expr::List(list) => self.list(&list.elements),
            Expr::Map(map) => self.map(&map.entries),
            Expr::Struct(object) => {
                let cost = object
                    .entries
                    .iter()
                    .fold(STRUCT_CREATE, |sum, entry| match &entry.expr {
                        EntryExpr::StructField(field) => {
                            sum.saturating_add(self.cost(&field.value.expr).cost)
                        }
                        EntryExpr::MapEntry(_) => sum,
                    });
                plain(cost, Ty::Dyn)
            }
            Expr::Call(call) => {
                let target = call.target.as_ref().map(|target| self.cost(&target.expr));
                let args: Vec<Node<'a>> = call.args.iter().map(|arg| self.cost(&arg.expr)).collect();
                self.call(&call.func_name, target, args)
            }
            Expr::Comprehension(loop_) => self.comprehension(loop_),
        }
    }

    /// A name: a local's type, path and size, else a variable read from the schema's root.
    fn ident(&self, name: &str) -> Node<'a> {
        let local = self.local(name).cloned();
        let (ty, path, size, entries) = match local {
            Some(local) => (local.ty, local.path, local.size, local.entries),
            None => (Ty::Dyn, Some((name.to_owned(), Vec::new())), None, None),
        };
        let size = self.derived_size(&ty, &path, size);
        Node {
            cost: 1,
            ty,
            path,
            size,
            entries,
            literal: None,
        }
    }

    /// A field of a map or object (one unit when selected), or a `has()` test.
    fn select(&mut self, select: &'a SelectExpr) -> Node<'a> {
        let operand = self.cost(&select.operand.expr);
        if select.test {
            return plain(operand.cost, Ty::Bool);
        }
        let selects = matches!(operand.ty, Ty::Map(_) | Ty::Object(_));
        let ty = match &operand.ty {
            Ty::Object(schema) => schema
                .properties
                .iter()
                .find(|(name, _)| super::escaping::escape(name).as_deref() == Some(select.field.as_str()))
                .map_or(Ty::Dyn, |(_, property)| Ty::of(property)),
            other => other.element(),
        };
        let path = Some(extend(operand.path, Step::Field(select.field.clone())));
        let size = self.derived_size(&ty, &path, None);
        Node {
            cost: operand.cost.saturating_add(u64::from(selects)),
            ty,
            path,
            size,
            entries: None,
            literal: None,
        }
    }

    /// A list literal: each element's cost, its size the union of the elements'.
    fn list(&mut self, elements: &'a [IdedExpr]) -> Node<'a> {
        let mut cost = LIST_CREATE;
        let mut items: Option<Size> = None;
        let mut ty = Ty::Dyn;
        for element in elements {
            let node = self.cost(&element.expr);
            cost = cost.saturating_add(node.cost);
            let size = node.size.unwrap_or_else(Size::unknown);
            items = Some(items.map_or(size, |items| items.union(size)));
            ty = node.ty;
        }
        Node {
            cost,
            ty: Ty::List(Box::new(ty)),
            path: None,
            size: Some(Size::fixed(elements.len() as u64)),
            entries: Some(Entries {
                list: true,
                key: Size::fixed(1),
                value: items.unwrap_or(Size::fixed(0)),
            }),
            literal: None,
        }
    }

    fn map(&mut self, entries: &'a [IdedEntryExpr]) -> Node<'a> {
        let mut cost = MAP_CREATE;
        let (mut keys, mut values): (Option<Size>, Option<Size>) = (None, None);
        let mut ty = Ty::Dyn;
        for entry in entries {
            if let EntryExpr::MapEntry(entry) = &entry.expr {
                let key = self.cost(&entry.key.expr);
                let value = self.cost(&entry.value.expr);
                cost = cost.saturating_add(key.cost).saturating_add(value.cost);
                let (k, v) = (
                    key.size.unwrap_or_else(Size::unknown),
                    value.size.unwrap_or_else(Size::unknown),
                );
                keys = Some(keys.map_or(k, |keys| keys.union(k)));
                values = Some(values.map_or(v, |values| values.union(v)));
                ty = value.ty;
            }
        }
        Node {
            cost,
            ty: Ty::Map(Box::new(ty)),
            path: None,
            size: Some(Size::fixed(entries.len() as u64)),
            entries: Some(Entries {
                list: false,
                key: keys.unwrap_or(Size::fixed(0)),
                value: values.unwrap_or(Size::fixed(0)),
            }),
            literal: None,
        }
    }

    fn call(&mut self, function: &str, target: Option<Node<'a>>, args: Vec<Node<'a>>) -> Node<'a> {
        if function == "dyn" && target.is_none() && args.len() == 1 {
            let mut node = args.into_iter().next().expect("one argument");
            node.cost = node.cost.saturating_add(1);
            node.ty = Ty::Dyn;
            return node;
        }
        let ty = result_type(function, target.as_ref(), &args);
        let operand = |node: &Node<'a>| Operand {
            ty: node.ty.clone(),
            size: node.size,
            path: node.path.clone().filter(|(root, _)| root != ACCUMULATOR),
            entries: node.entries,
            literal: node.literal,
        };
        let call = Call {
            function,
            target: target.as_ref().map(operand),
            args: args.iter().map(operand).collect(),
            arg_costs: args.iter().map(|arg| arg.cost).collect(),
            estimator: &|path| self.schema_size(path),
        };
        let estimate = call_cost(&call);
        let index = function == "_[_]" && target.is_none() && args.len() == 2;
        let path = index.then(|| {
            let step = if matches!(args[0].ty, Ty::Map(_)) {
                Step::Values
            } else {
                Step::Items
            };
            extend(args[0].path.clone(), step)
        });
        let size = match (index, estimate.size) {
            (true, _) => args[0]
                .entries
                .map(|entries| entries.value)
                .or_else(|| self.derived_size(&ty, &path, None)),
            (false, Some(size)) => Some(size),
            (false, None) => self.derived_size(&ty, &path, None),
        };
        let target_cost = target.as_ref().map_or(0, |target| target.cost);
        Node {
            cost: target_cost.saturating_add(estimate.cost),
            ty,
            path,
            size,
            entries: estimate.entries,
            literal: None,
        }
    }

    fn comprehension(&mut self, loop_: &'a ComprehensionExpr) -> Node<'a> {
        let range = self.cost(&loop_.iter_range.expr);
        let init = self.cost(&loop_.accu_init.expr);
        let bind = matches!(&loop_.iter_range.expr, Expr::List(list) if list.elements.is_empty())
            && matches!(&loop_.loop_cond.expr, Expr::Literal(LiteralValue::Boolean(b)) if !**b)
            && loop_.accu_var != ACCUMULATOR;
        self.push(
            &loop_.accu_var,
            Local {
                ty: init.ty.clone(),
                path: init.path.clone(),
                size: init.size,
                entries: init.entries,
            },
        );
        if bind {
            let result = self.cost(&loop_.result.expr);
            self.pop(&loop_.accu_var);
            let cost = range.cost.saturating_add(init.cost).saturating_add(result.cost);
            return Node { cost, ..result };
        }
        self.push_iteration_variables(loop_, &range);
        let condition = self.cost(&loop_.loop_cond.expr);
        let step_node = self.cost(&loop_.loop_step.expr);
        self.pop(&loop_.iter_var);
        if let Some(second) = &loop_.iter_var2 {
            self.pop(second);
        }
        let result = self.cost(&loop_.result.expr);
        self.pop(&loop_.accu_var);
        let count = range.size.unwrap_or_else(Size::unknown);
        let per_element = step_node.cost.saturating_add(condition.cost);
        let cost = range
            .cost
            .saturating_add(init.cost)
            .saturating_add(result.cost)
            .saturating_add(count.max.saturating_mul(per_element));
        let (size, entries) = match &loop_.accu_init.expr {
            Expr::Literal(_) => (init.size, None),
            Expr::List(_) | Expr::Map(_) => (Some(count), step_node.entries),
            _ => (None, None),
        };
        // A built list has the type of the step that appends to it.
        let ty = match (&loop_.accu_init.expr, &step_node.ty) {
            (Expr::List(_), Ty::List(_)) => step_node.ty,
            _ => result.ty,
        };
        Node {
            cost,
            ty,
            path: None,
            size,
            entries,
            literal: None,
        }
    }

    /// Brings a loop's variables into scope: the index or key, and the element or value, of
    /// `range`, read from its path.
    fn push_iteration_variables(&mut self, loop_: &'a ComprehensionExpr, range: &Node<'a>) {
        let list = range
            .entries
            .map_or(matches!(range.ty, Ty::List(_)), |entries| entries.list);
        let step = |list: bool, key: bool| match (list, key) {
            (true, true) => Step::Indices,
            (true, false) => Step::Items,
            (false, true) => Step::Keys,
            (false, false) => Step::Values,
        };
        let var = |key: bool, ty: Ty<'a>, size: Option<Size>| Local {
            ty,
            path: Some(extend(range.path.clone(), step(list, key))),
            size,
            entries: None,
        };
        let key_ty = if list { Ty::Int } else { Ty::String };
        let entries = range.entries;
        match &loop_.iter_var2 {
            Some(second) => {
                self.push(&loop_.iter_var, var(true, key_ty, entries.map(|e| e.key)));
                self.push(second, var(false, range.ty.element(), entries.map(|e| e.value)));
            }
            None if list => self.push(
                &loop_.iter_var,
                var(false, range.ty.element(), entries.map(|e| e.value)),
            ),
            None => self.push(&loop_.iter_var, var(true, key_ty, entries.map(|e| e.key))),
        }
    }
}

/// `path` plus one step. A value not read from a variable gets a path of the step alone, which
/// the schema resolves to the rule's own node, as cel-go's estimator does.
fn extend(path: Option<Path>, step: Step) -> Path {
    match path {
        Some((root, mut steps)) => {
            steps.push(step);
            (root, steps)
        }
        None => (format!("{step:?}"), Vec::new()),
    }
}

/// A node with only a cost and a type.
fn plain<'a>(cost: u64, ty: Ty<'a>) -> Node<'a> {
    Node {
        cost,
        ty,
        path: None,
        size: None,
        entries: None,
        literal: None,
    }
}

/// A literal: free, its size its length (1 for scalars).
fn literal_node(literal: &LiteralValue) -> Node<'_> {
    let (ty, size) = match literal {
        LiteralValue::String(text) => (Ty::String, text.chars().count() as u64),
        LiteralValue::Bytes(bytes) => (Ty::Bytes, bytes.len() as u64),
        LiteralValue::Boolean(_) => (Ty::Bool, 1),
        LiteralValue::Int(_) => (Ty::Int, 1),
        LiteralValue::UInt(_) => (Ty::Uint, 1),
        LiteralValue::Double(_) => (Ty::Double, 1),
        LiteralValue::Null => (Ty::Null, 1),
    };
    Node {
        cost: 0,
        ty,
        path: None,
        size: Some(Size::fixed(size)),
        entries: None,
        literal: Some(literal),
    }
}
