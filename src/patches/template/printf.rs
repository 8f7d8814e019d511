//! Go's `fmt.Sprintf` directive parsing (`printf`), on top of the value formatting in `format`.

use super::format::{sprint_value, write_verb, Buf, Spec};
use super::value::Value;

/// `fmt.Sprintf` for the supported verbs, with Go's `%!verb(...)` markers for mismatches.
pub(crate) fn sprintf(format: &str, args: &[Value], limit: usize) -> Result<String, String> {
    let mut buf = Buf::new(limit);
    let mut next_arg = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            let mut tmp = [0u8; 4];
            buf.push(c.encode_utf8(&mut tmp))?;
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&flag) = chars.peek() {
            match flag {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '#' => spec.sharp = true,
                ' ' => spec.space = true,
                '0' => spec.zero = !spec.minus,
                _ => break,
            }
            chars.next();
        }
        spec.width = read_number(&mut chars, args, &mut next_arg, &mut buf, "BADWIDTH")?;
        if chars.peek() == Some(&'.') {
            chars.next();
            let bad_before = buf.s.len();
            let prec = read_number(&mut chars, args, &mut next_arg, &mut buf, "BADPREC")?;
            // A bad precision is reported and then ignored.
            spec.prec = if buf.s.len() != bad_before {
                None
            } else {
                Some(prec.unwrap_or(0))
            };
        }
        let Some(verb) = chars.next() else {
            buf.push("%!(NOVERB)")?;
            break;
        };
        spec.verb = verb;
        if verb == '%' {
            buf.push("%")?;
            continue;
        }
        let Some(value) = args.get(next_arg) else {
            buf.push(&format!("%!{verb}(MISSING)"))?;
            continue;
        };
        next_arg += 1;
        write_verb(&mut buf, value, &spec, 0)?;
    }
    if next_arg < args.len() {
        buf.push("%!(EXTRA ")?;
        for (i, extra) in args.iter().skip(next_arg).enumerate() {
            if i > 0 {
                buf.push(", ")?;
            }
            let shown = sprint_value(extra, limit)?;
            buf.push(&format!("{}={shown}", extra.type_name()))?;
        }
        buf.push(")")?;
    }
    Ok(buf.s)
}

/// Reads a width or precision: digits or `*` (taken from the arguments).
fn read_number(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    args: &[Value],
    next_arg: &mut usize,
    buf: &mut Buf,
    bad: &str,
) -> Result<Option<usize>, String> {
    if chars.peek() == Some(&'*') {
        chars.next();
        let n = match args.get(*next_arg) {
            Some(Value::Int(n)) if n.unsigned_abs() <= 1_000_000 => Some(n.unsigned_abs() as usize),
            _ => {
                buf.push(&format!("%!({bad})"))?;
                None
            }
        };
        *next_arg += 1;
        return Ok(n);
    }
    let mut n: Option<usize> = None;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        chars.next();
        let v = n.unwrap_or(0).saturating_mul(10).saturating_add(d as usize);
        n = Some(v);
    }
    if n.is_some_and(|v| v > 1_000_000) {
        buf.push(&format!("%!({bad})"))?;
        return Ok(None);
    }
    Ok(n)
}
