//! The subset of Go's `fmt` that templates reach: `%v` printing, `print`/`println`, `printf` verbs.

use super::float::{fixed, format_e, format_g};
use super::value::{Value, MAX_VALUE_DEPTH};
pub(super) use crate::go_format::quote;

/// A bounded output buffer.
pub(super) struct Buf {
    pub(super) s: String,
    limit: usize,
}

impl Buf {
    pub(super) fn new(limit: usize) -> Self {
        Buf {
            s: String::new(),
            limit,
        }
    }

    pub(super) fn push(&mut self, text: &str) -> Result<(), String> {
        if self.s.len() + text.len() > self.limit {
            return Err(format!("output exceeds the limit of {} bytes", self.limit));
        }
        self.s.push_str(text);
        Ok(())
    }
}

/// Prints a value as a template action does (`<no value>` for a missing value).
pub(crate) fn print_value(value: &Value, limit: usize) -> Result<String, String> {
    if matches!(value, Value::Missing) {
        let mut buf = Buf::new(limit);
        buf.push("<no value>")?;
        return Ok(buf.s);
    }
    let mut buf = Buf::new(limit);
    write_verb(&mut buf, value, &Spec::plain('v'), 0)?;
    Ok(buf.s)
}

/// `%v` of a value (`fmt.Sprint` of one operand).
pub(crate) fn sprint_value(value: &Value, limit: usize) -> Result<String, String> {
    let mut buf = Buf::new(limit);
    write_verb(&mut buf, value, &Spec::plain('v'), 0)?;
    Ok(buf.s)
}

/// `fmt.Sprint`: spaces between operands when neither side is a string.
pub(crate) fn sprint(args: &[Value], limit: usize) -> Result<String, String> {
    let mut buf = Buf::new(limit);
    for (i, arg) in args.iter().enumerate() {
        let after_string = i > 0 && matches!(args.get(i - 1), Some(Value::Str(_)));
        if i > 0 && !matches!(arg, Value::Str(_)) && !after_string {
            buf.push(" ")?;
        }
        write_verb(&mut buf, arg, &Spec::plain('v'), 0)?;
    }
    Ok(buf.s)
}

/// `fmt.Sprintln`: spaces between all operands and a final newline.
pub(crate) fn sprintln(args: &[Value], limit: usize) -> Result<String, String> {
    let mut buf = Buf::new(limit);
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            buf.push(" ")?;
        }
        write_verb(&mut buf, arg, &Spec::plain('v'), 0)?;
    }
    buf.push("\n")?;
    Ok(buf.s)
}

/// A parsed `%` directive.
#[derive(Debug, Clone, Default)]
pub(super) struct Spec {
    pub(super) verb: char,
    pub(super) minus: bool,
    pub(super) plus: bool,
    pub(super) sharp: bool,
    pub(super) space: bool,
    pub(super) zero: bool,
    pub(super) width: Option<usize>,
    pub(super) prec: Option<usize>,
}

impl Spec {
    fn plain(verb: char) -> Self {
        Spec {
            verb,
            ..Spec::default()
        }
    }
}

/// Go's `%!verb(type=value)` for a verb that does not fit the value; the value is printed
/// with `%v` and the directive's flags, width and precision.
fn bad_verb(value: &Value, spec: &Spec) -> String {
    let verb = spec.verb;
    match value {
        Value::Missing | Value::Nil => format!("%!{verb}(<nil>)"),
        other => {
            let mut buf = Buf::new(4096);
            let as_v = Spec {
                verb: 'v',
                ..spec.clone()
            };
            let _ = write_verb(&mut buf, other, &as_v, 0);
            format!("%!{verb}({}={})", other.type_name(), buf.s)
        }
    }
}

/// Pads to the width; `numeric` bodies keep their sign before zero padding and only they may
/// refuse zero padding (integers with a precision).
fn pad(buf: &mut Buf, body: &str, spec: &Spec, numeric: bool) -> Result<(), String> {
    pad_with(buf, body, spec, true, numeric)
}

fn pad_with(buf: &mut Buf, body: &str, spec: &Spec, zero_ok: bool, numeric: bool) -> Result<(), String> {
    let len = body.chars().count();
    let width = spec.width.unwrap_or(0);
    if len >= width {
        return buf.push(body);
    }
    let fill = width - len;
    if spec.minus {
        buf.push(body)?;
        buf.push(&" ".repeat(fill))
    } else if spec.zero && zero_ok {
        let (sign, digits) = match body.chars().next() {
            Some(c @ ('-' | '+' | ' ')) if numeric => (c.to_string(), &body[1..]),
            _ => (String::new(), body),
        };
        buf.push(&sign)?;
        buf.push(&"0".repeat(fill))?;
        buf.push(digits)
    } else {
        buf.push(&" ".repeat(fill))?;
        buf.push(body)
    }
}

fn signed(body: String, spec: &Spec) -> String {
    // `%+v` asks for field names in Go, not for a sign.
    if body.starts_with('-') || spec.verb == 'v' {
        body
    } else if spec.plus {
        format!("+{body}")
    } else if spec.space {
        format!(" {body}")
    } else {
        body
    }
}

fn write_int(buf: &mut Buf, n: i128, spec: &Spec, value: &Value) -> Result<(), String> {
    let abs = n.unsigned_abs();
    let digits = match spec.verb {
        'd' | 'v' => abs.to_string(),
        'x' => format!("{}{abs:x}", if spec.sharp { "0x" } else { "" }),
        'X' => format!("{}{abs:X}", if spec.sharp { "0X" } else { "" }),
        'o' => format!("{}{abs:o}", if spec.sharp { "0" } else { "" }),
        'O' => format!("0o{abs:o}"),
        'b' => format!("{abs:b}"),
        'c' => {
            return pad(
                buf,
                &u32::try_from(n)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}')
                    .to_string(),
                spec,
                false,
            )
        }
        'q' => {
            let c = u32::try_from(n)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{fffd}');
            let q = quote(&c.to_string());
            let inner = &q[1..q.len() - 1];
            let inner = if inner == "\\\"" {
                "\""
            } else if inner == "'" {
                "\\'"
            } else {
                inner
            };
            return pad(buf, &format!("'{inner}'"), spec, false);
        }
        'U' => return pad(buf, &format!("U+{abs:04X}"), spec, false),
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 's' | 't' => return buf.push(&bad_verb(value, spec)),
        _ => return buf.push(&bad_verb(value, spec)),
    };
    let digits = match spec.prec {
        Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
        _ => digits,
    };
    let body = if n < 0 { format!("-{digits}") } else { digits };
    pad_with(buf, &signed(body, spec), spec, spec.prec.is_none(), true)
}

fn write_float(buf: &mut Buf, f: f64, spec: &Spec, value: &Value) -> Result<(), String> {
    let body = match spec.verb {
        'v' | 'g' => format_g(f, spec.prec),
        'G' => format_g(f, spec.prec).to_uppercase(),
        'f' | 'F' if f.is_finite() => fixed(f, spec.prec.unwrap_or(6)),
        'f' | 'F' => format_g(f, None),
        'e' | 'E' => format_e(f, spec.prec.unwrap_or(6), spec.verb == 'E'),
        _ => return buf.push(&bad_verb(value, spec)),
    };
    pad_with(buf, &signed(body, spec), spec, f.is_finite(), true)
}

fn write_str(buf: &mut Buf, s: &str, spec: &Spec) -> Result<(), String> {
    let s: String = match spec.prec {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_string(),
    };
    let body = match spec.verb {
        's' | 'v' => s,
        'q' => quote(&s),
        'x' => s.bytes().map(|b| format!("{b:02x}")).collect(),
        'X' => s.bytes().map(|b| format!("{b:02X}")).collect(),
        _ => return buf.push(&bad_verb(&Value::Str(s), spec)),
    };
    pad(buf, &body, spec, false)
}

pub(super) fn write_verb(buf: &mut Buf, value: &Value, spec: &Spec, depth: usize) -> Result<(), String> {
    if depth > MAX_VALUE_DEPTH {
        return Err("value nested too deeply to print".into());
    }
    match value {
        Value::Missing | Value::Nil => match spec.verb {
            'v' => pad(buf, "<nil>", spec, false),
            _ => buf.push(&bad_verb(value, spec)),
        },
        Value::Bool(b) => match spec.verb {
            'v' | 't' => pad(buf, &b.to_string(), spec, false),
            _ => buf.push(&bad_verb(value, spec)),
        },
        Value::Int(n) | Value::Int64(n) => write_int(buf, i128::from(*n), spec, value),
        Value::Uint(n) => write_int(buf, i128::from(*n), spec, value),
        Value::Float(f) => write_float(buf, *f, spec, value),
        Value::Str(s) => write_str(buf, s, spec),
        Value::Version(v) => write_str(buf, &v.to_string(), spec),
        Value::List(items) => {
            buf.push("[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    buf.push(" ")?;
                }
                write_elem(buf, item, spec, depth)?;
            }
            buf.push("]")
        }
        Value::Map(map) => {
            let entries: Vec<(String, Value)> =
                map.borrow().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            buf.push("map[")?;
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    buf.push(" ")?;
                }
                write_str(buf, k, spec)?;
                buf.push(":")?;
                write_elem(buf, v, spec, depth)?;
            }
            buf.push("]")
        }
    }
}

/// An element of a list or map: a nil element prints `<nil>` whatever the verb.
fn write_elem(buf: &mut Buf, value: &Value, spec: &Spec, depth: usize) -> Result<(), String> {
    if matches!(value, Value::Nil | Value::Missing) {
        return pad(buf, "<nil>", spec, false);
    }
    write_verb(buf, value, spec, depth + 1)
}
