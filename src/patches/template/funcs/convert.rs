//! sprig math, type conversion, encoding and reflection functions.

use base64::Engine as _;
use sha2::Digest as _;

use super::super::value::Value;
use super::{arg, fixed, str_arg, variadic, Ctx, Func, Param};

use Param::{Any, Str};

/// Finds a sprig math/conversion/encoding function.
pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "add" => variadic(&[], Any, |_, a| {
            Ok(Value::Int64(a.iter().map(to_int64).fold(0i64, i64::wrapping_add)))
        }),
        "add1" => fixed(&[Any], |_, a| {
            Ok(Value::Int64(to_int64(&arg(&a, 0)).wrapping_add(1)))
        }),
        "sub" => fixed(&[Any, Any], |_, a| {
            Ok(Value::Int64(
                to_int64(&arg(&a, 0)).wrapping_sub(to_int64(&arg(&a, 1))),
            ))
        }),
        "mul" => variadic(&[Any], Any, |_, a| {
            Ok(Value::Int64(a.iter().map(to_int64).fold(1i64, i64::wrapping_mul)))
        }),
        "div" => fixed(&[Any, Any], |_, a| divide(&a, i64::wrapping_div)),
        "mod" => fixed(&[Any, Any], |_, a| divide(&a, i64::wrapping_rem)),
        "max" | "biggest" => variadic(&[Any], Any, |_, a| {
            Ok(Value::Int64(a.iter().map(to_int64).max().unwrap_or(0)))
        }),
        "min" => variadic(&[Any], Any, |_, a| {
            Ok(Value::Int64(a.iter().map(to_int64).min().unwrap_or(0)))
        }),
        "int" => fixed(&[Any], |_, a| Ok(Value::Int(to_int64(&arg(&a, 0))))),
        "int64" => fixed(&[Any], |_, a| Ok(Value::Int64(to_int64(&arg(&a, 0))))),
        "float64" => fixed(&[Any], |_, a| Ok(Value::Float(to_float64(&arg(&a, 0))))),
        "atoi" => fixed(&[Str], |_, a| Ok(Value::Int(atoi(str_arg(&a, 0))))),
        "toJson" => fixed(&[Any], |ctx, a| {
            Ok(Value::Str(
                to_json(ctx, &arg(&a, 0), false, true).unwrap_or_default(),
            ))
        }),
        "mustToJson" => fixed(&[Any], |ctx, a| {
            to_json(ctx, &arg(&a, 0), false, true).map(Value::Str)
        }),
        "toRawJson" => fixed(&[Any], |ctx, a| {
            Ok(Value::Str(
                to_json(ctx, &arg(&a, 0), false, false).unwrap_or_default(),
            ))
        }),
        "mustToRawJson" => fixed(&[Any], |ctx, a| {
            to_json(ctx, &arg(&a, 0), false, false).map(Value::Str)
        }),
        "toPrettyJson" => fixed(&[Any], |ctx, a| {
            Ok(Value::Str(
                to_json(ctx, &arg(&a, 0), true, true).unwrap_or_default(),
            ))
        }),
        "mustToPrettyJson" => fixed(&[Any], |ctx, a| {
            to_json(ctx, &arg(&a, 0), true, true).map(Value::Str)
        }),
        "fromJson" => fixed(&[Str], |_, a| Ok(from_json(str_arg(&a, 0)).unwrap_or(Value::Nil))),
        "mustFromJson" => fixed(&[Str], |_, a| from_json(str_arg(&a, 0))),
        "b64enc" => fixed(&[Str], |_, a| {
            Ok(Value::Str(
                base64::engine::general_purpose::STANDARD.encode(str_arg(&a, 0)),
            ))
        }),
        "b64dec" => fixed(&[Str], |_, a| Ok(Value::Str(b64dec(str_arg(&a, 0))))),
        "sha256sum" => fixed(&[Str], |_, a| {
            let digest = sha2::Sha256::digest(str_arg(&a, 0).as_bytes());
            Ok(Value::Str(digest.iter().map(|b| format!("{b:02x}")).collect()))
        }),
        "typeOf" => fixed(&[Any], |_, a| Ok(Value::Str(arg(&a, 0).type_name().to_string()))),
        "typeIs" => fixed(&[Str, Any], |_, a| {
            Ok(Value::Bool(arg(&a, 1).type_name() == str_arg(&a, 0)))
        }),
        "kindOf" => fixed(&[Any], |_, a| Ok(Value::Str(arg(&a, 0).kind_name().to_string()))),
        "kindIs" => fixed(&[Str, Any], |_, a| {
            Ok(Value::Bool(arg(&a, 1).kind_name() == str_arg(&a, 0)))
        }),
        "fail" => fixed(&[Str], |_, a| Err(str_arg(&a, 0).to_string())),
        _ => return None,
    })
}

fn divide(a: &[Value], op: fn(i64, i64) -> i64) -> Result<Value, String> {
    let (x, y) = (to_int64(&arg(a, 0)), to_int64(&arg(a, 1)));
    if y == 0 {
        return Err("runtime error: integer divide by zero".into());
    }
    Ok(Value::Int64(op(x, y)))
}

/// `cast.ToInt64`: numbers truncated, numeric strings parsed, anything else 0.
pub(super) fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint(u) => *u as i64,
        Value::Float(f) => *f as i64,
        Value::Bool(b) => i64::from(*b),
        Value::Str(s) => parse_go_int(trim_zero_decimal(s)).unwrap_or(0),
        _ => 0,
    }
}

/// `cast.ToFloat64`.
fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Uint(u) => *u as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Str(s) => s.parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn trim_zero_decimal(s: &str) -> &str {
    match s.split_once('.') {
        Some((int, frac)) if !int.is_empty() && frac.bytes().all(|b| b == b'0') => int,
        _ => s,
    }
}

/// `strconv.ParseInt(s, 0, 64)`: sign, base prefixes, underscores between digits.
fn parse_go_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (digits, radix) = if let Some(d) = lower.strip_prefix("0x") {
        (d.to_string(), 16)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (d.to_string(), 8)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (d.to_string(), 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (lower[1..].to_string(), 8)
    } else {
        (lower.clone(), 10)
    };
    let digits = if radix != 10 || body.contains('_') {
        digits.replace('_', "")
    } else {
        digits
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let magnitude = i128::from_str_radix(&digits, radix).ok()?;
    i64::try_from(if neg { -magnitude } else { magnitude }).ok()
}

/// `strconv.Atoi`, 0 on error.
fn atoi(s: &str) -> i64 {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    s.parse().unwrap_or(0)
}

fn to_json(ctx: &Ctx<'_>, v: &Value, pretty: bool, escape_html: bool) -> Result<String, String> {
    let mut budget = ctx.max_bytes / 2 + 16;
    let json = v.to_json(&mut budget)?;
    let text = if pretty {
        serde_json::to_string_pretty(&json)
    } else {
        serde_json::to_string(&json)
    }
    .map_err(|e| e.to_string())?;
    ctx.check_len(text.len())?;
    if !escape_html {
        return Ok(text);
    }
    Ok(text
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029"))
}

fn from_json(text: &str) -> Result<Value, String> {
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Value::from_json(&json).ok_or_else(|| "json: value nested too deeply".to_string())
}

fn b64dec(text: &str) -> String {
    match base64::engine::general_purpose::STANDARD.decode(text) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _)) => {
            format!("illegal base64 data at input byte {at}")
        }
        Err(_) => format!("illegal base64 data at input byte {}", text.len() / 4 * 4),
    }
}
