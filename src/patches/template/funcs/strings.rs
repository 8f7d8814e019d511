//! sprig string functions.

use super::super::format;
use super::super::value::Value;
use super::{arg, casing, fixed, int_arg, str_arg, variadic, Ctx, Func, Param};

use Param::{Any, Int, Str};

/// Finds a sprig string function.
pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "upper" => fixed(&[Str], |_, a| Ok(s(str_arg(&a, 0).to_uppercase()))),
        "lower" => fixed(&[Str], |_, a| Ok(s(str_arg(&a, 0).to_lowercase()))),
        "title" => fixed(&[Str], |_, a| Ok(s(title(str_arg(&a, 0))))),
        "untitle" => fixed(&[Str], |_, a| Ok(s(untitle(str_arg(&a, 0))))),
        "trim" => fixed(&[Str], |_, a| Ok(s(str_arg(&a, 0).trim().to_string()))),
        "trimAll" | "trimall" => fixed(&[Str, Str], |_, a| {
            let cut: Vec<char> = str_arg(&a, 0).chars().collect();
            Ok(s(str_arg(&a, 1).trim_matches(cut.as_slice()).to_string()))
        }),
        "trimPrefix" => fixed(&[Str, Str], |_, a| {
            let (p, v) = (str_arg(&a, 0), str_arg(&a, 1));
            Ok(s(v.strip_prefix(p).unwrap_or(v).to_string()))
        }),
        "trimSuffix" => fixed(&[Str, Str], |_, a| {
            let (p, v) = (str_arg(&a, 0), str_arg(&a, 1));
            Ok(s(v.strip_suffix(p).unwrap_or(v).to_string()))
        }),
        "trunc" => fixed(&[Int, Str], |_, a| Ok(s(trunc(int_arg(&a, 0), str_arg(&a, 1))))),
        "replace" => fixed(&[Str, Str, Str], replace),
        "contains" => fixed(&[Str, Str], |_, a| {
            Ok(Value::Bool(str_arg(&a, 1).contains(str_arg(&a, 0))))
        }),
        "hasPrefix" => fixed(&[Str, Str], |_, a| {
            Ok(Value::Bool(str_arg(&a, 1).starts_with(str_arg(&a, 0))))
        }),
        "hasSuffix" => fixed(&[Str, Str], |_, a| {
            Ok(Value::Bool(str_arg(&a, 1).ends_with(str_arg(&a, 0))))
        }),
        "repeat" => fixed(&[Int, Str], repeat),
        "nospace" => fixed(&[Str], |_, a| {
            Ok(s(str_arg(&a, 0).chars().filter(|c| !c.is_whitespace()).collect()))
        }),
        "quote" => variadic(&[], Any, quote),
        "squote" => variadic(&[], Any, squote),
        "cat" => variadic(&[], Any, cat),
        "indent" => fixed(&[Int, Str], |ctx, a| {
            indent(ctx, int_arg(&a, 0), str_arg(&a, 1), false)
        }),
        "nindent" => fixed(&[Int, Str], |ctx, a| {
            indent(ctx, int_arg(&a, 0), str_arg(&a, 1), true)
        }),
        "substr" => fixed(&[Int, Int, Str], substr),
        "split" => fixed(&[Str, Str], |ctx, a| {
            let map = split(ctx, str_arg(&a, 0), str_arg(&a, 1))?
                .into_iter()
                .enumerate()
                .map(|(i, part)| (format!("_{i}"), Value::Str(part)))
                .collect();
            Ok(Value::new_map(map))
        }),
        "splitList" => fixed(&[Str, Str], |ctx, a| {
            Ok(Value::str_list(split(ctx, str_arg(&a, 0), str_arg(&a, 1))?))
        }),
        "join" => fixed(&[Str, Any], |ctx, a| {
            let parts = strslice(ctx, &arg(&a, 1))?;
            let sep = str_arg(&a, 0);
            let total = parts.iter().map(String::len).sum::<usize>() + sep.len() * parts.len();
            ctx.check_len(total)?;
            Ok(s(parts.join(sep)))
        }),
        "toString" => fixed(&[Any], |ctx, a| strval(ctx, &arg(&a, 0)).map(s)),
        "toStrings" => fixed(&[Any], |ctx, a| strslice(ctx, &arg(&a, 0)).map(Value::str_list)),
        "snakecase" => fixed(&[Str], |_, a| Ok(s(casing::delimited(str_arg(&a, 0), '_')))),
        "kebabcase" => fixed(&[Str], |_, a| Ok(s(casing::delimited(str_arg(&a, 0), '-')))),
        "camelcase" => fixed(&[Str], |_, a| Ok(s(casing::pascal(str_arg(&a, 0))))),
        _ => return None,
    })
}

fn s(text: String) -> Value {
    Value::Str(text)
}

/// sprig's `strval`: strings as they are, everything else as `%v`.
pub(super) fn strval(ctx: &Ctx<'_>, v: &Value) -> Result<String, String> {
    match v {
        Value::Str(text) => Ok(text.clone()),
        other => format::sprint_value(other, ctx.max_bytes),
    }
}

/// sprig's `strslice`: a list's non-nil items as strings; a scalar as a one-item list.
pub(super) fn strslice(ctx: &Ctx<'_>, v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::List(items) => items
            .iter()
            .filter(|i| !matches!(i, Value::Nil | Value::Missing))
            .map(|i| strval(ctx, i))
            .collect(),
        Value::Nil | Value::Missing => Ok(Vec::new()),
        other => Ok(vec![strval(ctx, other)?]),
    }
}

/// Go's `strings.Split` (an empty separator splits into characters); charges one step a part.
fn split(ctx: &mut Ctx<'_>, sep: &str, text: &str) -> Result<Vec<String>, String> {
    let parts = if sep.is_empty() {
        text.chars().count()
    } else {
        text.matches(sep).count() + 1
    };
    ctx.charge(parts)?;
    Ok(split_parts(sep, text))
}

fn split_parts(sep: &str, text: &str) -> Vec<String> {
    if sep.is_empty() {
        return text.chars().map(String::from).collect();
    }
    text.split(sep).map(String::from).collect()
}

fn is_separator(c: char) -> bool {
    if c.is_ascii() {
        return !(c.is_ascii_alphanumeric() || c == '_');
    }
    if c.is_alphanumeric() {
        return false;
    }
    c.is_whitespace()
}

/// Go's `strings.Title`.
fn title(text: &str) -> String {
    let mut prev = ' ';
    text.chars()
        .map(|c| {
            let out = if is_separator(prev) {
                c.to_uppercase().next().unwrap_or(c)
            } else {
                c
            };
            prev = c;
            out
        })
        .collect()
}

/// sprig's `untitle`: lower-cases the first letter of each word.
fn untitle(text: &str) -> String {
    let mut prev = ' ';
    text.chars()
        .map(|c| {
            let out = if prev.is_whitespace() {
                c.to_lowercase().next().unwrap_or(c)
            } else {
                c
            };
            prev = c;
            out
        })
        .collect()
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn trunc(c: i64, text: &str) -> String {
    let len = text.len() as i64;
    if c < 0 && len + c > 0 {
        return lossy(&text.as_bytes()[(len + c) as usize..]);
    }
    if c >= 0 && len > c {
        return lossy(&text.as_bytes()[..c as usize]);
    }
    text.to_string()
}

fn substr(_: &mut Ctx<'_>, a: Vec<Value>) -> Result<Value, String> {
    let (start, end, text) = (int_arg(&a, 0), int_arg(&a, 1), str_arg(&a, 2));
    let len = text.len() as i64;
    let bytes = text.as_bytes();
    let range = if start < 0 {
        0..end
    } else if end < 0 || end > len {
        start..len
    } else {
        start..end
    };
    if range.start < 0 || range.end > len || range.start > range.end {
        return Err(format!(
            "runtime error: slice bounds out of range [{}:{}]",
            range.start, range.end
        ));
    }
    Ok(s(lossy(&bytes[range.start as usize..range.end as usize])))
}

fn replace(ctx: &mut Ctx<'_>, a: Vec<Value>) -> Result<Value, String> {
    let (old, new, src) = (str_arg(&a, 0), str_arg(&a, 1), str_arg(&a, 2));
    let count = if old.is_empty() {
        src.chars().count() + 1
    } else {
        src.matches(old).count()
    };
    ctx.check_len(src.len().saturating_add(count.saturating_mul(new.len())))?;
    if old.is_empty() {
        let mut out = String::from(new);
        for c in src.chars() {
            out.push(c);
            out.push_str(new);
        }
        return Ok(s(out));
    }
    Ok(s(src.replace(old, new)))
}

fn repeat(ctx: &mut Ctx<'_>, a: Vec<Value>) -> Result<Value, String> {
    let (count, text) = (int_arg(&a, 0), str_arg(&a, 1));
    if count < 0 {
        return Err("strings: negative Repeat count".into());
    }
    ctx.check_len((count as usize).saturating_mul(text.len()))?;
    Ok(s(text.repeat(count as usize)))
}

fn indent(ctx: &mut Ctx<'_>, spaces: i64, text: &str, newline: bool) -> Result<Value, String> {
    if spaces < 0 {
        return Err("strings: negative Repeat count".into());
    }
    let pad = " ".repeat((spaces as usize).min(ctx.max_bytes + 1));
    let lines = text.matches('\n').count() + 1;
    ctx.check_len(text.len().saturating_add(lines.saturating_mul(pad.len())) + usize::from(newline))?;
    let body = format!("{pad}{}", text.replace('\n', &format!("\n{pad}")));
    Ok(s(if newline { format!("\n{body}") } else { body }))
}

fn quote(ctx: &mut Ctx<'_>, a: Vec<Value>) -> Result<Value, String> {
    let parts = a
        .iter()
        .filter(|v| !matches!(v, Value::Nil | Value::Missing))
        .map(|v| strval(ctx, v).map(|t| format::quote(&t)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(s(parts.join(" ")))
}

fn squote(ctx: &mut Ctx<'_>, a: Vec<Value>) -> Result<Value, String> {
    let parts = a
        .iter()
        .filter(|v| !matches!(v, Value::Nil | Value::Missing))
        .map(|v| strval(ctx, v).map(|t| format!("'{t}'")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(s(parts.join(" ")))
}

fn cat(ctx: &mut Ctx<'_>, a: Vec<Value>) -> Result<Value, String> {
    let parts = a
        .iter()
        .filter(|v| !matches!(v, Value::Nil | Value::Missing))
        .map(|v| format::sprint_value(v, ctx.max_bytes))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(s(parts.join(" ")))
}
