//! The values the CEL cost estimate passes around: the type of an expression, the path it was
//! read from in the schema, the sizes of built lists and maps, and the costed node. Shared by the
//! estimator (`cost.rs`) and the function costs (`cost_functions.rs`).

use cel::common::ast::LiteralValue;

use super::cost_size::Size;
use crate::api::JSONSchemaProps;

/// The type of a value, as far as the estimate needs it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty<'a> {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    Null,
    List(Box<Ty<'a>>),
    Map(Box<Ty<'a>>),
    /// An object of the schema (a message to CEL).
    Object(&'a JSONSchemaProps),
    /// A Kubernetes library type (IP, CIDR, quantity, URL, ...).
    Opaque,
    Dyn,
}

impl<'a> Ty<'a> {
    /// The type CEL declares for a value of `schema`.
    pub fn of(schema: &'a JSONSchemaProps) -> Ty<'a> {
        if schema.is_int_or_string() {
            return Ty::Dyn;
        }
        match (schema.type_.as_str(), schema.format.as_str()) {
            ("boolean", _) => Ty::Bool,
            ("integer", _) => Ty::Int,
            ("number", _) => Ty::Double,
            ("string", "byte") => Ty::Bytes,
            ("string", "duration") => Ty::Duration,
            ("string", "date" | "date-time") => Ty::Timestamp,
            ("string", _) => Ty::String,
            ("array", _) => Ty::List(Box::new(schema.items.as_deref().map_or(Ty::Dyn, Ty::of))),
            ("object", _) => match schema.additional_properties.as_deref() {
                Some(values) => Ty::Map(Box::new(Ty::of(values))),
                None => Ty::Object(schema),
            },
            _ => Ty::Dyn,
        }
    }

    /// True for types of a fixed size (cel-go's `isScalar`).
    pub fn is_scalar(&self) -> bool {
        matches!(
            self,
            Ty::Bool | Ty::Int | Ty::Uint | Ty::Double | Ty::Duration | Ty::Timestamp
        )
    }

    /// The type of a list's items or a map's values.
    pub fn element(&self) -> Ty<'a> {
        match self {
            Ty::List(item) | Ty::Map(item) => (**item).clone(),
            _ => Ty::Dyn,
        }
    }
}

/// One step of a path from the rule's node: a field, or a list's items, a map's values or keys.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Field(String),
    Items,
    Values,
    Keys,
    Indices,
}

/// The sizes of the entries of a list or map built in the expression.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entries {
    pub list: bool,
    pub key: Size,
    pub value: Size,
}

impl Entries {
    /// The entries of either, when both are known.
    pub fn union(a: Option<Entries>, b: Option<Entries>) -> Option<Entries> {
        let (a, b) = (a?, b?);
        Some(Entries {
            list: a.list,
            key: a.key.union(b.key),
            value: a.value.union(b.value),
        })
    }
}

/// What the estimate knows of an expression once costed.
#[derive(Debug, Clone)]
pub struct Node<'a> {
    pub cost: u64,
    pub ty: Ty<'a>,
    /// Where the value was read from: a variable's name, then steps (`None`: built, not read).
    pub path: Option<Path>,
    pub size: Option<Size>,
    pub entries: Option<Entries>,
    /// The expression is a literal (its value, for the functions that read one).
    pub literal: Option<&'a LiteralValue>,
}

/// A path read from a variable.
pub type Path = (String, Vec<Step>);
