//! Evaluates pipelines, commands, operands, field chains and function calls.

use super::ast::{Arg, Command, Pipeline, Term};
use super::exec::{At, Eval, State};
use super::funcs::{self, Ctx, Param};
use super::value::Value;

impl<'a> State<'a> {
    /// Evaluates a pipeline and binds its declared variables.
    pub(crate) fn eval_pipeline(&mut self, dot: &Value, pipe: &'a Pipeline) -> Eval<Value> {
        let value = self.eval_commands(dot, pipe)?;
        for name in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, value.clone());
            } else {
                self.vars.push((name.as_str(), value.clone()));
            }
        }
        Ok(value)
    }

    /// Evaluates the commands of a pipeline, each result feeding the next command.
    pub(crate) fn eval_commands(&mut self, dot: &Value, pipe: &'a Pipeline) -> Eval<Value> {
        self.at = At::Pipe(pipe);
        let mut value: Option<Value> = None;
        for cmd in &pipe.cmds {
            let result = self.eval_command(dot, cmd, value.take())?;
            // Go unwraps interface values: a nil interface becomes "no value".
            value = Some(match result {
                Value::Nil => Value::Missing,
                v => v,
            });
        }
        Ok(value.unwrap_or(Value::Missing))
    }

    fn not_a_function(&self, cmd: &Command, final_value: &Option<Value>) -> Eval<()> {
        if cmd.args.len() > 1 || final_value.is_some() {
            let first = cmd.args.first().map(ToString::to_string).unwrap_or_default();
            return Err(self.fail(format!("can't give argument to non-function {first}")));
        }
        Ok(())
    }

    fn eval_command(&mut self, dot: &Value, cmd: &'a Command, final_value: Option<Value>) -> Eval<Value> {
        self.step()?;
        let Some(first) = cmd.args.first() else {
            self.at = At::Cmd(cmd);
            return Err(self.fail("empty command"));
        };
        let has_args = cmd.args.len() > 1 || final_value.is_some();
        match &first.term {
            Term::Field(fields) => {
                self.at = At::Arg(first);
                self.eval_dot_fields(dot, fields, has_args)
            }
            Term::Variable(name, fields) => {
                self.at = At::Arg(first);
                if fields.is_empty() {
                    self.not_a_function(cmd, &final_value)?;
                }
                let value = self.variable(name)?;
                self.eval_fields(value, fields, has_args)
            }
            Term::Pipe(pipe, fields) => {
                if fields.is_empty() {
                    self.not_a_function(cmd, &final_value)?;
                }
                let value = self.eval_nested(dot, pipe)?;
                if !fields.is_empty() {
                    self.at = At::Arg(first);
                }
                self.eval_fields(value, fields, has_args)
            }
            Term::Func(name) => {
                self.at = At::Arg(first);
                let rest = cmd.args.get(1..).unwrap_or_default();
                self.eval_call(dot, name, rest, final_value, At::Cmd(cmd))
            }
            term => {
                self.at = At::Arg(first);
                self.not_a_function(cmd, &final_value)?;
                match term {
                    Term::Nil => Err(self.fail("nil is not a command")),
                    Term::Dot => Ok(dot.clone()),
                    other => Ok(literal(other)),
                }
            }
        }
    }

    fn variable(&self, name: &str) -> Eval<Value> {
        self.var(name)
            .ok_or_else(|| self.fail(format!("undefined variable: {name}")))
    }

    /// Walks `.a.b.c` from `receiver`; `has_args` marks arguments given to the last field.
    fn eval_fields(&mut self, receiver: Value, fields: &[String], has_args: bool) -> Eval<Value> {
        self.eval_chain(receiver, fields, has_args, false)
    }

    /// Walks fields from dot, which may be a range element.
    fn eval_dot_fields(&mut self, dot: &Value, fields: &[String], has_args: bool) -> Eval<Value> {
        self.eval_chain(dot.clone(), fields, has_args, self.dot_is_element)
    }

    fn eval_chain(
        &mut self,
        mut receiver: Value,
        fields: &[String],
        has_args: bool,
        element: bool,
    ) -> Eval<Value> {
        for (i, field) in fields.iter().enumerate() {
            let last = i + 1 == fields.len();
            receiver = self.eval_field(receiver, field, has_args && last, i > 0 || element)?;
        }
        Ok(receiver)
    }

    /// One field step; `from_map` marks a receiver read out of a map (Go's static type
    /// `interface {}`, named in errors instead of the concrete type).
    fn eval_field(&mut self, receiver: Value, field: &str, has_args: bool, from_map: bool) -> Eval<Value> {
        match receiver {
            Value::Missing if self.opts.missing_key_error => {
                Err(self.fail(format!("nil data; no entry for key {field:?}")))
            }
            Value::Missing => Ok(Value::Missing),
            Value::Nil => Err(self.fail(format!("nil pointer evaluating interface {{}}.{field}"))),
            Value::Map(map) => {
                if has_args {
                    return Err(self.fail(format!("{field} is not a method but has arguments")));
                }
                let found = map.borrow().get(field).cloned();
                match found {
                    Some(v) => Ok(v),
                    None if self.opts.missing_key_error => {
                        Err(self.fail(format!("map has no entry for key {field:?}")))
                    }
                    None => Ok(Value::Missing),
                }
            }
            Value::Version(v) => {
                let Some(value) = v.method(field) else {
                    return Err(self.fail(format!("can't evaluate field {field} in type *semver.Version")));
                };
                if has_args {
                    return Err(self.fail(format!("wrong number of args for {field}: want 0 got 1")));
                }
                Ok(value)
            }
            other => {
                let type_name = if from_map {
                    "interface {}"
                } else {
                    other.type_name()
                };
                Err(self.fail(format!("can't evaluate field {field} in type {type_name}")))
            }
        }
    }

    /// Evaluates a parenthesized pipeline within the nesting limit.
    fn eval_nested(&mut self, dot: &Value, pipe: &'a Pipeline) -> Eval<Value> {
        self.enter()?;
        let result = self.eval_pipeline(dot, pipe);
        self.leave();
        result
    }

    /// Evaluates an argument operand and converts it to the parameter type.
    fn eval_arg(&mut self, dot: &Value, arg: &'a Arg, param: Param) -> Eval<Value> {
        self.at = At::Arg(arg);
        let value = match &arg.term {
            Term::Dot => dot.clone(),
            Term::Nil => match param {
                Param::Any | Param::Reflect | Param::Map => Value::Nil,
                typed => return Err(self.fail(format!("cannot assign nil to {}", typed.go_name()))),
            },
            Term::Field(fields) => self.eval_dot_fields(dot, fields, false)?,
            Term::Variable(name, fields) => {
                let value = self.variable(name)?;
                self.eval_fields(value, fields, false)?
            }
            Term::Pipe(pipe, fields) => {
                let value = self.eval_nested(dot, pipe)?;
                self.eval_fields(value, fields, false)?
            }
            Term::Func(name) => self.eval_call(dot, name, &[], None, At::Arg(arg))?,
            term => return self.typed_literal(term, param),
        };
        param.accept(value).map_err(|message| self.fail(message))
    }

    /// A literal argument for a typed parameter, with Go's messages for mismatches.
    fn typed_literal(&self, term: &Term, param: Param) -> Eval<Value> {
        let value = literal(term);
        let ok = match (param, &value) {
            (Param::Any | Param::Reflect, _) => true,
            (Param::Str, Value::Str(_)) | (Param::Bool, Value::Bool(_)) | (Param::Int, Value::Int(_)) => true,
            (Param::Int, Value::Float(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => {
                return Ok(Value::Int(*f as i64));
            }
            _ => false,
        };
        if ok {
            return Ok(value);
        }
        Err(self.fail(match param {
            Param::Str => format!("expected string; found {term}"),
            Param::Int => format!("expected integer; found {term}"),
            Param::Bool => format!("expected bool; found {term}"),
            other => format!("can't handle {term} for arg of type {}", other.go_name()),
        }))
    }

    fn eval_call(
        &mut self,
        dot: &Value,
        name: &str,
        args: &'a [Arg],
        final_value: Option<Value>,
        call_at: At<'a>,
    ) -> Eval<Value> {
        let Some(func) = funcs::lookup(name, self.tmpl.sprig) else {
            return Err(self.fail(format!("{name:?} is not a defined function")));
        };
        let num_in = args.len() + usize::from(final_value.is_some());
        let wanted = func.params.len();
        if func.variadic.is_some() && num_in < wanted {
            return Err(self.fail(format!(
                "wrong number of args for {name}: want at least {wanted} got {}",
                args.len()
            )));
        }
        if func.variadic.is_none() && num_in != wanted {
            return Err(self.fail(format!(
                "wrong number of args for {name}: want {wanted} got {num_in}"
            )));
        }
        let param_at = |i: usize| {
            func.params
                .get(i)
                .copied()
                .or(func.variadic)
                .unwrap_or(Param::Any)
        };
        if name == "and" || name == "or" {
            let want = name == "or";
            let mut last = Value::Missing;
            for arg in args {
                last = self.eval_arg(dot, arg, Param::Reflect)?;
                if last.is_true() == want {
                    return Ok(last);
                }
            }
            return Ok(final_value.unwrap_or(last));
        }
        let mut argv = Vec::with_capacity(num_in);
        for (i, arg) in args.iter().enumerate() {
            argv.push(self.eval_arg(dot, arg, param_at(i))?);
        }
        if let Some(value) = final_value {
            argv.push(param_at(num_in - 1).accept(value).map_err(|m| self.fail(m))?);
        }
        let mut steps = self.steps;
        let mut ctx = Ctx {
            max_bytes: self.opts.max_output_bytes,
            steps: &mut steps,
            max_steps: self.opts.max_steps,
        };
        let result = (func.call)(&mut ctx, argv);
        self.steps = steps;
        // Call errors are reported at the whole command; on success Go stays at the last node.
        let last = std::mem::replace(&mut self.at, call_at);
        let value = result.map_err(|message| self.fail(format!("error calling {name}: {message}")))?;
        // What a call produces costs steps too, so memory stays bounded by the step budget.
        let (cost, len) = match &value {
            Value::Str(s) => (s.len() / 256, s.len()),
            Value::List(items) => (items.len(), 0),
            _ => (0, 0),
        };
        if len > self.opts.max_output_bytes {
            return Err(self.fail(format!(
                "error calling {name}: result exceeds the limit of {} bytes",
                self.opts.max_output_bytes
            )));
        }
        self.at = last;
        self.charge(cost as u64 + 1)?;
        Ok(value)
    }
}

fn literal(term: &Term) -> Value {
    match term {
        Term::Bool(b) => Value::Bool(*b),
        Term::Int(i, _) => Value::Int(*i),
        Term::Float(f, _) => Value::Float(*f),
        Term::Str(s, _) => Value::Str(s.clone()),
        _ => Value::Missing,
    }
}
