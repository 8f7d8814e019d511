//! Executes a parsed template: control flow, variables, printing and limits.

use super::ast::{Arg, Branch, BranchKind, Command, List, Node, Pipeline, Term};
use super::format;
use super::value::{Value, MAX_VALUE_DEPTH};
use super::{line_col, ExecOptions, Inner, TemplateError};

/// Deepest `{{template}}` call nesting (a template calling itself must stop).
const MAX_TEMPLATE_DEPTH: usize = 64;
/// Deepest nesting of control structures, template calls and parentheses during execution.
const MAX_EXEC_NESTING: usize = 256;

/// Why evaluation stopped early.
pub(crate) enum Flow {
    Break,
    Continue,
    Fail(Box<TemplateError>),
}

/// Result of evaluation steps.
pub(crate) type Eval<T> = Result<T, Flow>;

/// The node being evaluated; errors are reported there, as Go does.
#[derive(Clone, Copy)]
pub(crate) enum At<'a> {
    Start,
    Pipe(&'a Pipeline),
    Cmd(&'a Command),
    Arg(&'a Arg),
    Template {
        pos: usize,
        name: &'a str,
        pipe: Option<&'a Pipeline>,
    },
}

impl At<'_> {
    fn locate(&self) -> (usize, String) {
        match self {
            At::Start => (0, String::new()),
            At::Pipe(p) => (p.pos, p.to_string()),
            At::Cmd(c) => (c.pos, c.to_string()),
            At::Arg(a) => (a.pos, a.to_string()),
            At::Template {
                pos,
                name,
                pipe: Some(p),
            } => (*pos, format!("{{{{template {name:?} {p}}}}}")),
            At::Template {
                pos,
                name,
                pipe: None,
            } => (*pos, format!("{{{{template {name:?}}}}}")),
        }
    }
}

/// Execution state.
pub(crate) struct State<'a> {
    pub tmpl: &'a Inner,
    pub opts: &'a ExecOptions,
    pub out: String,
    /// Variables in scope, innermost last; names borrow the template (no allocation per run).
    pub vars: Vec<(&'a str, Value)>,
    pub steps: u64,
    pub at: At<'a>,
    /// Dot is a range element (Go's static type `interface {}`), which error messages name.
    pub dot_is_element: bool,
    depth: usize,
    nesting: usize,
    executing: &'a str,
}

/// Executes the main template with `data` (converted; `None` when nested too deep) as dot.
pub(crate) fn execute(
    tmpl: &Inner,
    data: Option<Value>,
    opts: &ExecOptions,
) -> Result<String, TemplateError> {
    let mut state = State {
        tmpl,
        opts,
        // Room for about the source's length, so short outputs are not regrown piece by piece.
        out: String::with_capacity(tmpl.source.len().min(opts.max_output_bytes).min(4096)),
        vars: Vec::new(),
        steps: 0,
        at: At::Start,
        dot_is_element: false,
        depth: 0,
        nesting: 0,
        executing: &tmpl.name,
    };
    let dot = match data {
        Some(Value::Nil) => Value::Missing,
        Some(v) => v,
        None => return Err(state.error(format!("data nested deeper than {MAX_VALUE_DEPTH}"))),
    };
    state.vars.push(("$", dot.clone()));
    match state.walk_list(&dot, &tmpl.main) {
        Ok(()) | Err(Flow::Break | Flow::Continue) => Ok(state.out),
        Err(Flow::Fail(e)) => Err(*e),
    }
}

impl<'a> State<'a> {
    fn error(&self, message: String) -> TemplateError {
        let (pos, context) = self.at.locate();
        let (line, column) = line_col(&self.tmpl.source, pos);
        TemplateError::Exec {
            name: self.tmpl.name.clone(),
            line,
            column,
            executing: self.executing.to_string(),
            context,
            message,
        }
    }

    /// A failure at the current node.
    pub(crate) fn fail(&self, message: impl Into<String>) -> Flow {
        Flow::Fail(Box::new(self.error(message.into())))
    }

    /// Counts one evaluation step.
    pub(crate) fn step(&mut self) -> Eval<()> {
        self.charge(1)
    }

    /// Counts `n` evaluation steps.
    pub(crate) fn charge(&mut self, n: u64) -> Eval<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.opts.max_steps {
            return Err(self.fail(format!(
                "exceeded the limit of {} evaluation steps",
                self.opts.max_steps
            )));
        }
        Ok(())
    }

    /// Enters a nested construct; fails beyond the nesting limit.
    pub(crate) fn enter(&mut self) -> Eval<()> {
        if self.nesting >= MAX_EXEC_NESTING {
            return Err(self.fail(format!("exceeded maximum nesting depth ({MAX_EXEC_NESTING})")));
        }
        self.nesting += 1;
        Ok(())
    }

    /// Leaves a nested construct.
    pub(crate) fn leave(&mut self) {
        self.nesting = self.nesting.saturating_sub(1);
    }

    fn write(&mut self, text: &str) -> Eval<()> {
        if self.out.len() + text.len() > self.opts.max_output_bytes {
            return Err(self.fail(format!(
                "output exceeds the limit of {} bytes",
                self.opts.max_output_bytes
            )));
        }
        self.out.push_str(text);
        Ok(())
    }

    fn walk_list(&mut self, dot: &Value, list: &'a List) -> Eval<()> {
        list.iter().try_for_each(|node| self.walk(dot, node))
    }

    fn walk(&mut self, dot: &Value, node: &'a Node) -> Eval<()> {
        self.step()?;
        match node {
            Node::Text(text) => self.write(text),
            Node::Action(pipe) => {
                if let Some(written) = self.write_string_field(dot, pipe) {
                    return written;
                }
                let value = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    self.at = At::Pipe(pipe);
                    if let Value::Str(text) = &value {
                        // A string prints as itself: written straight out, with the same limit.
                        return self.write(text);
                    }
                    let text =
                        format::print_value(&value, self.opts.max_output_bytes).map_err(|m| self.fail(m))?;
                    self.write(&text)?;
                }
                Ok(())
            }
            Node::Branch(branch) => self.walk_branch(dot, branch),
            Node::Template { pos, name, pipe } => self.walk_template(dot, *pos, name, pipe.as_ref()),
            Node::Break => Err(Flow::Break),
            Node::Continue => Err(Flow::Continue),
        }
    }

    /// `{{.a.b.c}}` reaching a string through maps: written from where it sits, without the
    /// copy the general evaluation makes (`None`: anything else, left to it, nothing done yet).
    /// Counts the step and leaves the position as the general path does.
    fn write_string_field(&mut self, dot: &Value, pipe: &'a Pipeline) -> Option<Eval<()>> {
        let [command] = pipe.cmds.as_slice() else {
            return None;
        };
        let (
            [],
            [Arg {
                term: Term::Field(fields),
                ..
            }],
        ) = (pipe.decl.as_slice(), command.args.as_slice())
        else {
            return None;
        };
        with_string_at(dot, fields, |text| {
            self.at = At::Pipe(pipe);
            self.step().and_then(|()| self.write(text))
        })
    }

    fn walk_template(
        &mut self,
        dot: &Value,
        pos: usize,
        name: &'a str,
        pipe: Option<&'a Pipeline>,
    ) -> Eval<()> {
        self.at = At::Template { pos, name, pipe };
        let Some((def_name, body)) = self.tmpl.defines.get_key_value(name) else {
            return Err(self.fail(format!("template {name:?} not defined")));
        };
        if self.depth >= MAX_TEMPLATE_DEPTH {
            return Err(self.fail(format!("exceeded maximum template depth ({MAX_TEMPLATE_DEPTH})")));
        }
        let new_dot = match pipe {
            Some(p) => self.eval_pipeline(dot, p)?,
            None => Value::Missing,
        };
        self.enter()?;
        let vars = std::mem::replace(&mut self.vars, vec![("$", new_dot.clone())]);
        let executing = std::mem::replace(&mut self.executing, def_name);
        let outer = std::mem::replace(&mut self.dot_is_element, false);
        self.depth += 1;
        let result = self.walk_list(&new_dot, body);
        self.depth -= 1;
        self.dot_is_element = outer;
        self.executing = executing;
        self.vars = vars;
        self.leave();
        match result {
            Err(Flow::Break | Flow::Continue) => Ok(()),
            other => other,
        }
    }

    fn walk_branch(&mut self, dot: &Value, branch: &'a Branch) -> Eval<()> {
        self.enter()?;
        let mark = self.vars.len();
        let result = match branch.kind {
            BranchKind::If | BranchKind::With => self.walk_if_with(dot, branch),
            BranchKind::Range => self.walk_range(dot, branch),
        };
        self.vars.truncate(mark);
        self.leave();
        result
    }

    fn walk_if_with(&mut self, dot: &Value, branch: &'a Branch) -> Eval<()> {
        let value = self.eval_pipeline(dot, &branch.pipe)?;
        if value.is_true() {
            if branch.kind == BranchKind::If {
                return self.walk_list(dot, &branch.list);
            }
            let outer = std::mem::replace(&mut self.dot_is_element, false);
            let result = self.walk_list(&value, &branch.list);
            self.dot_is_element = outer;
            result
        } else if let Some(else_list) = &branch.else_list {
            self.walk_list(dot, else_list)
        } else {
            Ok(())
        }
    }

    fn walk_range(&mut self, dot: &Value, branch: &'a Branch) -> Eval<()> {
        let pipe = &branch.pipe;
        let value = self.eval_commands(dot, pipe)?;
        let items: Vec<(Value, Value)> = match &value {
            Value::List(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::Int(i as i64), v.clone()))
                .collect(),
            Value::Map(map) => map
                .borrow()
                .iter()
                .map(|(k, v)| (Value::Str(k.clone()), v.clone()))
                .collect(),
            Value::Int(n) | Value::Int64(n) => {
                if pipe.decl.len() > 1 {
                    return Err(self.fail(format!("can't use {n} to iterate over more than one variable")));
                }
                if u64::try_from(*n).unwrap_or(0) > self.opts.max_steps.saturating_sub(self.steps) {
                    return Err(self.fail(format!(
                        "exceeded the limit of {} evaluation steps",
                        self.opts.max_steps
                    )));
                }
                (0..*n).map(|i| (Value::Int(i), Value::Int(i))).collect()
            }
            Value::Missing | Value::Nil => Vec::new(),
            other => {
                let shown = format::sprint_value(other, 256).unwrap_or_default();
                return Err(self.fail(format!("range can't iterate over {shown}")));
            }
        };
        if items.is_empty() {
            return match &branch.else_list {
                Some(list) => self.walk_list(dot, list),
                None => Ok(()),
            };
        }
        if !pipe.is_assign {
            for name in &pipe.decl {
                self.vars.push((name.as_str(), Value::Missing));
            }
        }
        for (index, elem) in items {
            self.step()?;
            match pipe.decl.as_slice() {
                [] => {}
                [one] => self.set_var(one, elem.clone()),
                [first, second, ..] => {
                    self.set_var(first, index);
                    self.set_var(second, elem.clone());
                }
            }
            let inner = self.vars.len();
            let element = !matches!(value, Value::Int(_) | Value::Int64(_));
            let outer = std::mem::replace(&mut self.dot_is_element, element);
            let result = self.walk_list(&elem, &branch.list);
            self.dot_is_element = outer;
            self.vars.truncate(inner);
            match result {
                Ok(()) | Err(Flow::Continue) => {}
                Err(Flow::Break) => break,
                Err(fail) => return Err(fail),
            }
        }
        Ok(())
    }

    /// Assigns the innermost variable of that name.
    pub(crate) fn set_var(&mut self, name: &str, value: Value) {
        if let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| *n == name) {
            slot.1 = value;
        }
    }

    /// Reads the innermost variable of that name.
    pub(crate) fn var(&self, name: &str) -> Option<Value> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    }
}

/// Calls `f` with the string that `fields` reach from `value` through maps, if they do.
fn with_string_at<R>(value: &Value, fields: &[String], f: impl FnOnce(&str) -> R) -> Option<R> {
    match (value, fields.split_first()) {
        (Value::Str(text), None) => Some(f(text)),
        (Value::Map(map), Some((first, rest))) => with_string_at(map.borrow().get(first.as_str())?, rest, f),
        _ => None,
    }
}
