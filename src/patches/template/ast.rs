//! Parsed template tree (nodes of Go's `text/template/parse`), with Go-like rendering for errors.

use std::fmt;

/// A list of nodes.
pub(crate) type List = Vec<Node>;

/// A statement-level node.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// Literal text.
    Text(String),
    /// `{{pipeline}}`: prints unless it declares variables.
    Action(Pipeline),
    /// `{{if}}`, `{{range}}`, `{{with}}`.
    Branch(Box<Branch>),
    /// `{{template "name" pipeline}}`.
    Template {
        pos: usize,
        name: String,
        pipe: Option<Pipeline>,
    },
    /// `{{break}}`.
    Break,
    /// `{{continue}}`.
    Continue,
}

/// Which branching action.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum BranchKind {
    If,
    Range,
    With,
}

/// A branching action with its body and optional else body.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    pub kind: BranchKind,
    pub pipe: Pipeline,
    pub list: List,
    pub else_list: Option<List>,
}

/// `[decl :=] cmd | cmd ...`
#[derive(Debug, Clone)]
pub(crate) struct Pipeline {
    pub pos: usize,
    /// Declared or assigned variables (with `$`).
    pub decl: Vec<String>,
    /// `=` rather than `:=`.
    pub is_assign: bool,
    pub cmds: Vec<Command>,
}

/// One command: operands separated by spaces.
#[derive(Debug, Clone)]
pub(crate) struct Command {
    pub pos: usize,
    pub args: Vec<Arg>,
}

/// An operand.
#[derive(Debug, Clone)]
pub(crate) struct Arg {
    pub pos: usize,
    pub term: Term,
}

/// Operand kinds.
#[derive(Debug, Clone)]
pub(crate) enum Term {
    Dot,
    Nil,
    Bool(bool),
    /// An integer (or character) literal and its source text.
    Int(i64, String),
    /// A float literal and its source text.
    Float(f64, String),
    /// A string literal (decoded) and its source text.
    Str(String, String),
    /// `.a.b`
    Field(Vec<String>),
    /// `$x.a.b`
    Variable(String, Vec<String>),
    /// A function name.
    Func(String),
    /// `(pipeline).a.b`
    Pipe(Box<Pipeline>, Vec<String>),
}

fn write_fields(f: &mut fmt::Formatter<'_>, fields: &[String]) -> fmt::Result {
    fields.iter().try_for_each(|field| write!(f, ".{field}"))
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Dot => f.write_str("."),
            Term::Nil => f.write_str("nil"),
            Term::Bool(b) => write!(f, "{b}"),
            Term::Int(_, text) | Term::Float(_, text) | Term::Str(_, text) => f.write_str(text),
            Term::Field(fields) => write_fields(f, fields),
            Term::Variable(name, fields) => {
                f.write_str(name)?;
                write_fields(f, fields)
            }
            Term::Func(name) => f.write_str(name),
            Term::Pipe(pipe, fields) => {
                write!(f, "({pipe})")?;
                write_fields(f, fields)
            }
        }
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.term.fmt(f)
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, arg) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            arg.fmt(f)?;
        }
        Ok(())
    }
}

impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            f.write_str(&self.decl.join(", "))?;
            f.write_str(if self.is_assign { " = " } else { " := " })?;
        }
        for (i, cmd) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            cmd.fmt(f)?;
        }
        Ok(())
    }
}
