//! Function table: text/template builtins and sprig's hermetic functions, with their Go
//! parameter types so arguments are checked the way Go's reflection-based calls check them.

mod builtins;
mod casing;
mod compare;
mod convert;
mod lists;
mod regex;
pub(crate) mod semver;
mod strings;

use super::value::Value;

/// Go parameter type of a function argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    /// `interface{}`: a missing value arrives as nil.
    Any,
    /// `reflect.Value`: a missing value arrives as missing.
    Reflect,
    /// `string`.
    Str,
    /// `int`.
    Int,
    /// `bool`.
    Bool,
    /// `map[string]interface{}`.
    Map,
}

impl Param {
    /// The Go type name.
    pub(crate) fn go_name(self) -> &'static str {
        match self {
            Param::Any => "interface {}",
            Param::Reflect => "reflect.Value",
            Param::Str => "string",
            Param::Int => "int",
            Param::Bool => "bool",
            Param::Map => "map[string]interface {}",
        }
    }

    /// Converts an evaluated argument to this parameter type (Go's `validateType`).
    pub(crate) fn accept(self, value: Value) -> Result<Value, String> {
        let ok = match (self, &value) {
            (Param::Any, Value::Missing) => return Ok(Value::Nil),
            (Param::Any | Param::Reflect, _) => true,
            (Param::Map, Value::Missing) => return Ok(Value::new_map(Default::default())),
            (_, Value::Missing) => return Err(format!("invalid value; expected {}", self.go_name())),
            (Param::Str, Value::Str(_)) | (Param::Int, Value::Int(_)) | (Param::Bool, Value::Bool(_)) => true,
            (Param::Map, Value::Map(_)) => true,
            _ => false,
        };
        if ok {
            Ok(value)
        } else {
            let got = if matches!(value, Value::Nil) {
                "interface {}"
            } else {
                value.type_name()
            };
            Err(format!(
                "wrong type for value; expected {}; got {got}",
                self.go_name()
            ))
        }
    }
}

/// Execution context handed to functions: the limits they must respect.
pub(crate) struct Ctx<'a> {
    /// Largest string a function may build.
    pub max_bytes: usize,
    /// Steps used so far.
    pub steps: &'a mut u64,
    /// Step budget.
    pub max_steps: u64,
}

impl Ctx<'_> {
    /// Charges `n` steps of work.
    pub(crate) fn charge(&mut self, n: usize) -> Result<(), String> {
        *self.steps = self.steps.saturating_add(n as u64);
        if *self.steps > self.max_steps {
            return Err(format!(
                "exceeded the limit of {} evaluation steps",
                self.max_steps
            ));
        }
        Ok(())
    }

    /// Fails when a string of `len` bytes would exceed the size limit.
    pub(crate) fn check_len(&self, len: usize) -> Result<(), String> {
        if len > self.max_bytes {
            return Err(format!("result exceeds the limit of {} bytes", self.max_bytes));
        }
        Ok(())
    }
}

/// A function implementation.
pub(crate) type Handler = fn(&mut Ctx<'_>, Vec<Value>) -> Result<Value, String>;

/// A function: fixed parameters, optional variadic tail, implementation.
#[derive(Clone, Copy)]
pub(crate) struct Func {
    pub params: &'static [Param],
    pub variadic: Option<Param>,
    pub call: Handler,
}

/// A function with fixed parameters.
pub(crate) const fn fixed(params: &'static [Param], call: Handler) -> Func {
    Func {
        params,
        variadic: None,
        call,
    }
}

/// A variadic function.
pub(crate) const fn variadic(params: &'static [Param], rest: Param, call: Handler) -> Func {
    Func {
        params,
        variadic: Some(rest),
        call,
    }
}

/// Finds a function; sprig functions only when `sprig` is set.
pub(crate) fn lookup(name: &str, sprig: bool) -> Option<Func> {
    // Functions added to a template override builtins of the same name (sprig's `slice`).
    let added = || {
        strings::lookup(name)
            .or_else(|| lists::lookup(name))
            .or_else(|| convert::lookup(name))
            .or_else(|| regex::lookup(name))
            .or_else(|| semver::lookup(name))
    };
    sprig.then(added).flatten().or_else(|| builtins::lookup(name))
}

/// Takes the string argument at `i` (already type-checked by the caller).
pub(crate) fn str_arg(args: &[Value], i: usize) -> &str {
    match args.get(i) {
        Some(Value::Str(s)) => s,
        _ => "",
    }
}

/// Takes the int argument at `i` (already type-checked by the caller).
pub(crate) fn int_arg(args: &[Value], i: usize) -> i64 {
    match args.get(i) {
        Some(Value::Int(n)) => *n,
        _ => 0,
    }
}

/// Takes the argument at `i`, or nil.
pub(crate) fn arg(args: &[Value], i: usize) -> Value {
    args.get(i).cloned().unwrap_or(Value::Nil)
}
