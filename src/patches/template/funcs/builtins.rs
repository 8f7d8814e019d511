//! text/template's predefined functions.

use super::super::value::Value;
use super::super::{format, printf};
use super::{arg, compare, fixed, variadic, Ctx, Func, Param};

use Param::{Any, Reflect, Str};

/// Finds a builtin.
pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        // and/or are evaluated lazily by the executor; the handler only serves arity.
        "and" | "or" => variadic(&[Reflect], Reflect, |_, args| {
            Ok(args.last().cloned().unwrap_or(Value::Missing))
        }),
        "not" => fixed(&[Reflect], |_, args| {
            Ok(Value::Bool(!args.first().is_some_and(Value::is_true)))
        }),
        "len" => fixed(&[Reflect], len),
        "index" => variadic(&[Reflect], Reflect, index),
        "slice" => variadic(&[Reflect], Reflect, slice),
        "print" => variadic(&[], Any, |ctx, args| {
            format::sprint(&args, ctx.max_bytes).map(Value::Str)
        }),
        "println" => variadic(&[], Any, |ctx, args| {
            format::sprintln(&args, ctx.max_bytes).map(Value::Str)
        }),
        "printf" => variadic(&[Str], Any, |ctx, args| {
            let fmt = super::str_arg(&args, 0).to_string();
            printf::sprintf(&fmt, args.get(1..).unwrap_or_default(), ctx.max_bytes).map(Value::Str)
        }),
        "eq" => variadic(&[Reflect], Reflect, |_, args| compare::eq(&args).map(Value::Bool)),
        "ne" => fixed(&[Reflect, Reflect], |_, args| compare::ne(&args).map(Value::Bool)),
        "lt" => fixed(&[Reflect, Reflect], |_, a| {
            compare::lt(&arg(&a, 0), &arg(&a, 1)).map(Value::Bool)
        }),
        "le" => fixed(&[Reflect, Reflect], |_, a| {
            compare::le(&arg(&a, 0), &arg(&a, 1)).map(Value::Bool)
        }),
        "gt" => fixed(&[Reflect, Reflect], |_, a| {
            compare::le(&arg(&a, 0), &arg(&a, 1)).map(|v| Value::Bool(!v))
        }),
        "ge" => fixed(&[Reflect, Reflect], |_, a| {
            compare::lt(&arg(&a, 0), &arg(&a, 1)).map(|v| Value::Bool(!v))
        }),
        "html" => variadic(&[], Any, |ctx, args| {
            Ok(Value::Str(html_escape(&eval_args(ctx, &args)?)))
        }),
        "js" => variadic(&[], Any, |ctx, args| {
            Ok(Value::Str(js_escape(&eval_args(ctx, &args)?)))
        }),
        "urlquery" => variadic(&[], Any, |ctx, args| {
            Ok(Value::Str(query_escape(&eval_args(ctx, &args)?)))
        }),
        "call" => variadic(&[Reflect], Reflect, |_, _| {
            Err("call of a non-function: templates here have no function values".into())
        }),
        _ => return None,
    })
}

/// Joins arguments the way html/js/urlquery do (a missing value reads `<no value>`).
fn eval_args(ctx: &Ctx<'_>, args: &[Value]) -> Result<String, String> {
    if let [Value::Str(s)] = args {
        return Ok(s.clone());
    }
    let shown: Vec<Value> = args
        .iter()
        .map(|a| match a {
            Value::Nil | Value::Missing => Value::Str("<no value>".into()),
            other => other.clone(),
        })
        .collect();
    format::sprint(&shown, ctx.max_bytes)
}

fn len(_: &mut Ctx<'_>, args: Vec<Value>) -> Result<Value, String> {
    match args.first() {
        Some(Value::Str(s)) => Ok(Value::Int(s.len() as i64)),
        Some(Value::List(l)) => Ok(Value::Int(l.len() as i64)),
        Some(Value::Map(m)) => Ok(Value::Int(m.borrow().len() as i64)),
        Some(Value::Version(_)) => Err("len of type *semver.Version".into()),
        Some(Value::Nil) => Err("len of nil pointer".into()),
        Some(Value::Missing) | None => Err("reflect: call of reflect.Value.Type on zero Value".into()),
        Some(other) => Err(format!("len of type {}", other.type_name())),
    }
}

fn int_index(v: &Value) -> Result<i64, String> {
    match v {
        Value::Int(i) | Value::Int64(i) => Ok(*i),
        Value::Uint(u) => i64::try_from(*u).map_err(|_| format!("index out of range: {u}")),
        Value::Missing | Value::Nil => Err("cannot index slice/array with nil".into()),
        other => Err(format!(
            "cannot index slice/array with type {}",
            other.type_name()
        )),
    }
}

fn checked(i: i64, len: usize) -> Result<usize, String> {
    if i < 0 || i as u64 >= len as u64 {
        return Err(format!("index out of range: {i}"));
    }
    Ok(i as usize)
}

fn index(_: &mut Ctx<'_>, args: Vec<Value>) -> Result<Value, String> {
    let mut item = args.first().cloned().unwrap_or(Value::Missing);
    for idx in args.iter().skip(1) {
        item = match &item {
            Value::List(l) => l
                .get(checked(int_index(idx)?, l.len())?)
                .cloned()
                .unwrap_or(Value::Nil),
            Value::Str(s) => {
                let at = checked(int_index(idx)?, s.len())?;
                Value::Uint(u64::from(s.as_bytes().get(at).copied().unwrap_or(0)))
            }
            Value::Map(m) => match idx {
                Value::Str(k) => m.borrow().get(k).cloned().unwrap_or(Value::Nil),
                Value::Missing | Value::Nil => Value::Nil,
                other => return Err(format!("value has type {}; should be string", other.type_name())),
            },
            Value::Missing => return Err("index of untyped nil".into()),
            Value::Nil => return Err("index of nil pointer".into()),
            other => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

fn slice(_: &mut Ctx<'_>, args: Vec<Value>) -> Result<Value, String> {
    let item = args.first().cloned().unwrap_or(Value::Missing);
    let bounds = args
        .iter()
        .skip(1)
        .map(int_index)
        .collect::<Result<Vec<_>, _>>()?;
    if bounds.len() > 3 {
        return Err(format!("too many slice indexes: {}", bounds.len()));
    }
    let len = match &item {
        Value::Str(s) => {
            if bounds.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            s.len()
        }
        Value::List(l) => l.len(),
        Value::Missing | Value::Nil => return Err("slice of untyped nil".into()),
        other => return Err(format!("can't slice item of type {}", other.type_name())),
    };
    let mut idx = [0usize, len, len];
    for (i, b) in bounds.iter().enumerate() {
        if *b < 0 || *b as u64 > len as u64 {
            return Err(format!("index out of range: {b}"));
        }
        idx[i] = *b as usize;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if bounds.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    Ok(match item {
        Value::Str(s) => {
            let bytes = s.as_bytes().get(idx[0]..idx[1]).unwrap_or_default();
            Value::Str(String::from_utf8_lossy(bytes).into_owned())
        }
        Value::List(l) => Value::new_list(l.get(idx[0]..idx[1]).unwrap_or_default().to_vec()),
        _ => Value::Missing,
    })
}

/// Go's `template.HTMLEscapeString`.
fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\0' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Go's `url.QueryEscape`.
fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
