//! The static cost of a CEL expression, estimated as the API server estimates it: the worst case
//! over every value the schema admits, where a list, map or string is as large as its
//! `maxItems`, `maxProperties` or `maxLength` allows, or, without a bound, as large as fits in
//! one request (3 MiB). Loops cost their body once per element; string functions cost a tenth
//! of a unit per character. The figures follow cel-go's estimator closely enough that a rule
//! it accepts is accepted here, and an unbounded one is refused with a like factor.

use std::collections::HashMap;

use cel::common::ast::{ComprehensionExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, LiteralValue};

use crate::api::JSONSchemaProps;

/// The largest request the API server accepts, which bounds every unbounded list, map and string.
const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;
/// What one character of a string costs in a traversal (cel-go's `common.StringTraversalCostFactor`).
const TRAVERSAL_FACTOR: f64 = 0.1;
/// What creating a list, map or message costs (cel-go's `common.*CreateBaseCost`).
const LIST_CREATE: u64 = 10;
const MAP_CREATE: u64 = 30;
const STRUCT_CREATE: u64 = 40;

/// The most elements a value of `schema` can hold (list items, map entries, string characters;
/// none for other scalars).
fn max_size(schema: &JSONSchemaProps) -> u64 {
    let bound = |max: Option<i64>| max.map(|m| u64::try_from(m).unwrap_or(0));
    let unbounded = || max_cardinality(element(schema).map_or(1, min_serialized_size));
    match schema.type_.as_str() {
        "array" => bound(schema.max_items).unwrap_or_else(unbounded),
        "object" if schema.additional_properties.is_some() => {
            bound(schema.max_properties).unwrap_or_else(unbounded)
        }
        "object" => schema.properties.len() as u64,
        "string" => bound(schema.max_length).unwrap_or(MAX_REQUEST_SIZE_BYTES - 2),
        _ => 0,
    }
}

/// How many values of serialized size `min_size` (plus a comma each) fit in one request.
pub fn max_cardinality(min_size: u64) -> u64 {
    MAX_REQUEST_SIZE_BYTES / (min_size + 1)
}

/// The fewest bytes a value of `schema` takes in JSON.
pub fn min_serialized_size(schema: &JSONSchemaProps) -> u64 {
    match schema.type_.as_str() {
        "boolean" => 4,
        "integer" | "number" => 1,
        _ if schema.is_int_or_string() => 1,
        _ => 2,
    }
}

/// The schema of a list's items or a map's values.
fn element(schema: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    schema
        .items
        .as_deref()
        .or(schema.additional_properties.as_deref())
}

/// The estimated worst-case cost of `expression` with `self` (and `oldSelf`) bound to `schema`.
pub fn estimate(expression: &IdedExpr, schema: &JSONSchemaProps) -> u64 {
    let mut scope = HashMap::from([
        ("self", Shape::Schema(schema)),
        ("oldSelf", Shape::Schema(schema)),
    ]);
    Estimator.cost(&expression.expr, &mut scope).0
}

/// What is known of a value: its schema, or, for a list a macro built, its size and items.
#[derive(Debug, Clone)]
enum Shape<'a> {
    Unknown,
    Schema(&'a JSONSchemaProps),
    List(u64, Box<Shape<'a>>),
}

impl<'a> Shape<'a> {
    /// The most elements the value can hold, when known.
    fn size(&self) -> Option<u64> {
        match self {
            Shape::Unknown => None,
            Shape::Schema(schema) => Some(max_size(schema)),
            Shape::List(size, _) => Some(*size),
        }
    }

    /// The shape of the value's items or map values.
    fn element(&self) -> Shape<'a> {
        match self {
            Shape::Schema(schema) => element(schema).map_or(Shape::Unknown, Shape::Schema),
            Shape::List(_, item) => (**item).clone(),
            Shape::Unknown => Shape::Unknown,
        }
    }

    /// The shape of the value's field `name`.
    fn field(&self, name: &str) -> Shape<'a> {
        match self {
            Shape::Schema(schema) => field_schema(schema, name).map_or(Shape::Unknown, Shape::Schema),
            _ => Shape::Unknown,
        }
    }
}

/// Names in scope and what each is bound to.
type Scope<'s, 'a> = HashMap<&'s str, Shape<'a>>;

struct Estimator;

impl Estimator {
    /// The cost of `expr`, and the shape of its value.
    fn cost<'s, 'a>(&self, expr: &'s Expr, scope: &mut Scope<'s, 'a>) -> (u64, Shape<'a>) {
        match expr {
            Expr::Unspecified | Expr::Literal(_) => (0, Shape::Unknown),
            Expr::Ident(name) => (1, scope.get(name.as_str()).cloned().unwrap_or(Shape::Unknown)),
            Expr::Select(select) => {
                let (cost, operand) = self.cost(&select.operand.expr, scope);
                (cost.saturating_add(1), operand.field(&select.field))
            }
            Expr::List(list) => {
                let elements = list.elements.iter().map(|e| self.cost(&e.expr, scope).0);
                (elements.fold(LIST_CREATE, u64::saturating_add), Shape::Unknown)
            }
            Expr::Map(map) => (self.entries(&map.entries, scope, MAP_CREATE), Shape::Unknown),
            Expr::Struct(object) => (
                self.entries(&object.entries, scope, STRUCT_CREATE),
                Shape::Unknown,
            ),
            Expr::Call(call) => {
                let operands: Vec<(&Expr, (u64, Shape<'a>))> = call
                    .target
                    .iter()
                    .map(|t| &t.expr)
                    .chain(call.args.iter().map(|a| &a.expr))
                    .map(|expr| (expr, self.cost(expr, scope)))
                    .collect();
                let cost = operands
                    .iter()
                    .fold(0, |sum, (_, (c, _))| u64::saturating_add(sum, *c));
                let sizes: Vec<Option<u64>> =
                    operands.iter().map(|(e, (_, shape))| size_of(e, shape)).collect();
                let result = match (call.func_name.as_str(), operands.first()) {
                    ("_[_]", Some((_, (_, container)))) => container.element(),
                    _ => Shape::Unknown,
                };
                (
                    cost.saturating_add(function_cost(&call.func_name, &sizes)),
                    result,
                )
            }
            Expr::Comprehension(loop_) => {
                let (range_cost, range) = self.cost(&loop_.iter_range.expr, scope);
                let init = self.cost(&loop_.accu_init.expr, scope).0;
                let iterations = range.size().unwrap_or_else(|| max_cardinality(1));
                let previous = scope.insert(&loop_.iter_var, range.element());
                let condition = self.cost(&loop_.loop_cond.expr, scope).0;
                let (step, _) = self.cost(&loop_.loop_step.expr, scope);
                let built = built_list(loop_).map(|item| self.cost(item, scope).1);
                match previous {
                    Some(previous) => scope.insert(&loop_.iter_var, previous),
                    None => scope.remove(loop_.iter_var.as_str()),
                };
                let result = self.cost(&loop_.result.expr, scope).0;
                let cost = range_cost
                    .saturating_add(init)
                    .saturating_add(iterations.saturating_mul(condition.saturating_add(step)))
                    .saturating_add(result);
                let shape = built.map_or(Shape::Unknown, |item| Shape::List(iterations, Box::new(item)));
                (cost, shape)
            }
        }
    }

    fn entries<'s>(&self, entries: &'s [IdedEntryExpr], scope: &mut Scope<'s, '_>, base: u64) -> u64 {
        entries.iter().fold(base, |sum, entry| {
            let cost = match &entry.expr {
                EntryExpr::MapEntry(e) => self
                    .cost(&e.key.expr, scope)
                    .0
                    .saturating_add(self.cost(&e.value.expr, scope).0),
                EntryExpr::StructField(f) => self.cost(&f.value.expr, scope).0,
            };
            sum.saturating_add(cost)
        })
    }
}

/// The item a `map` or `filter` macro appends each step (`accu + [item]`), if the loop builds a list.
fn built_list(loop_: &ComprehensionExpr) -> Option<&Expr> {
    fn appended(step: &Expr) -> Option<&Expr> {
        match step {
            Expr::Call(call) if call.func_name == "_+_" => match call.args.get(1).map(|a| &a.expr) {
                Some(Expr::List(list)) => list.elements.first().map(|e| &e.expr),
                _ => None,
            },
            _ => None,
        }
    }
    match &loop_.loop_step.expr {
        Expr::Call(call) if call.func_name == "_?_:_" => call.args.get(1).and_then(|a| appended(&a.expr)),
        step => appended(step),
    }
}

/// The schema a selection of `field` reaches: a declared property (by its CEL-escaped name), else
/// a map's values.
fn field_schema<'a>(schema: &'a JSONSchemaProps, field: &str) -> Option<&'a JSONSchemaProps> {
    schema
        .properties
        .iter()
        .find(|(name, _)| super::escaping::escape(name).as_deref() == Some(field))
        .map(|(_, property)| property)
        .or(schema.additional_properties.as_deref())
}

/// The size of an operand: a literal string's length, else the most its schema admits.
fn size_of(expr: &Expr, shape: &Shape<'_>) -> Option<u64> {
    match expr {
        Expr::Literal(LiteralValue::String(text)) => Some(text.len() as u64),
        _ => shape.size(),
    }
}

/// What calling `function` costs beyond evaluating its operands, given their sizes: functions
/// that walk a string or list cost a tenth per element of the largest operand (equality: of the
/// smallest, where it stops), everything else one unit.
fn function_cost(function: &str, sizes: &[Option<u64>]) -> u64 {
    let traversal = |size: u64| 1 + (size as f64 * TRAVERSAL_FACTOR).ceil() as u64;
    let known = sizes.iter().flatten().copied();
    match function {
        "_==_" | "_!=_" => traversal(known.min().unwrap_or(0)),
        // Only the prefix or suffix is walked.
        "startsWith" | "endsWith" => traversal(sizes.last().copied().flatten().unwrap_or(0)),
        "contains" | "matches" | "find" | "findAll" | "replace" | "split" | "indexOf" | "lastIndexOf"
        | "lowerAscii" | "upperAscii" | "trim" | "substring" | "join" | "_+_" | "@in" | "isSorted"
        | "sum" | "min" | "max" | "reverse" => traversal(known.max().unwrap_or(0)),
        _ => 1,
    }
}
