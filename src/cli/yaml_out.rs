//! YAML written for kubectl: block-style YAML of a JSON value that kubectl's reader
//! (sigs.k8s.io/yaml over go-yaml v2, YAML 1.1 resolution of plain scalars) and our own reader
//! (YAML 1.2) both read back as the same value. A string is written plain only when both would
//! read that plain scalar as the same string: `on`, `y`, `NO`, `1_000`, `017`, `0x1F`, `1:20`,
//! `.inf`, `~`, `2001-12-14` and their kind are quoted. The layout is libyaml's, as
//! `serde_yaml_ng::to_string` writes it (sequences in a mapping not indented, multi-line strings as
//! literal blocks, keys longer than 128 characters explicit).

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::patches::template::parse_yaml_output;

/// Indentation of a nested block.
const INDENT: usize = 2;
/// Longest key written as an implicit `key: value` (libyaml's limit; YAML's is 1024).
const MAX_SIMPLE_KEY: usize = 128;

/// YAML 1.1 timestamps (yaml.org/type/timestamp), which a YAML 1.1 reader may type as dates.
static TIMESTAMP: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)?$",
    )
    .ok()
});
/// YAML 1.1 base-60 integers and floats (`1:20`, `-1:30:00.5`), which PyYAML types as numbers.
static SEXAGESIMAL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$").ok());

/// `value` as a YAML document (no `---`), ending in a newline.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_mapping(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => write_sequence(&mut out, items, 0),
        scalar => {
            write_inline(&mut out, scalar, 0);
            out.push('\n');
        }
    }
    out
}

/// `value` serialised to JSON and written as [`to_yaml`].
pub fn to_yaml_of<T: serde::Serialize>(value: &T) -> serde_json::Result<String> {
    Ok(to_yaml(&serde_json::to_value(value)?))
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A mapping's entries, each starting a line at `indent`.
fn write_mapping(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    for (index, (key, value)) in map.iter().enumerate() {
        if index > 0 {
            pad(out, indent);
        }
        if key.chars().count() > MAX_SIMPLE_KEY || key.contains('\n') {
            out.push_str("? ");
            write_string(out, key, indent + INDENT, true);
            out.push('\n');
            pad(out, indent);
            out.push(':');
        } else {
            write_string(out, key, indent, true);
            out.push(':');
        }
        write_value_after(out, value, indent, false);
    }
}

/// A sequence's items, each starting a line at `indent`.
fn write_sequence(out: &mut String, items: &[Value], indent: usize) {
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            pad(out, indent);
        }
        out.push('-');
        write_value_after(out, item, indent, true);
    }
}

/// A value after `key:` or `-` written at `indent`: a non-empty collection on the following lines
/// (a mapping in a sequence item on the same line), anything else on the same line.
fn write_value_after(out: &mut String, value: &Value, indent: usize, in_sequence: bool) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            if in_sequence {
                out.push(' ');
            } else {
                out.push('\n');
                pad(out, indent + INDENT);
            }
            write_mapping(out, map, indent + INDENT);
        }
        Value::Array(items) if !items.is_empty() => {
            // libyaml's layout: a sequence in a mapping starts at the key's column.
            let nested = if in_sequence { indent + INDENT } else { indent };
            if in_sequence {
                out.push(' ');
            } else {
                out.push('\n');
                pad(out, nested);
            }
            write_sequence(out, items, nested);
        }
        scalar => {
            out.push(' ');
            write_inline(out, scalar, indent);
            out.push('\n');
        }
    }
}

/// A scalar or an empty collection, on the current line (a literal block continues below it).
fn write_inline(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_string(out, s, indent, false),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A string: plain when that reads back as itself, a literal block for multi-line text that
/// allows one, else single- or double-quoted.
fn write_string(out: &mut String, s: &str, indent: usize, key: bool) {
    if plain_reads_back(s) {
        out.push_str(s);
    } else if !key && literal_allowed(s) {
        write_literal(out, s, indent);
    } else if s.chars().all(|c| printable(c) && c != '\n') {
        out.push('\'');
        out.push_str(&s.replace('\'', "''"));
        out.push('\'');
    } else {
        write_double_quoted(out, s);
    }
}

/// Whether libyaml writes `c` as itself (YAML's printable set, without tab and the Unicode
/// line breaks, which a reader folds).
fn printable(c: char) -> bool {
    matches!(c, '\n' | ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
        && !matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}')
}

/// Whether `s` written as a plain scalar reads back as the string `s`, in YAML 1.1 (go-yaml v2,
/// PyYAML) and in YAML 1.2 alike.
pub fn plain_reads_back(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let followed_by_space = |prefix: char| {
        s.strip_prefix(prefix)
            .is_none_or(|rest| rest.is_empty() || rest.starts_with(' '))
    };
    let indicator = match first {
        '-' | '?' | ':' => followed_by_space(first),
        ',' | '[' | ']' | '{' | '}' | '#' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%' | '@' | '`' => {
            true
        }
        _ => false,
    };
    let shape_ok = !indicator
        && s.chars().all(|c| printable(c) && c != '\n')
        && !s.starts_with(' ')
        && !s.ends_with([' ', ':'])
        && !s.contains(": ")
        && !s.contains(" #")
        && !matches!(s, "=" | "<<" | "---" | "...")
        && !s.starts_with("--- ")
        && !s.starts_with("... ");
    if !shape_ok {
        return false;
    }
    if [&TIMESTAMP, &SEXAGESIMAL]
        .iter()
        .any(|re| re.as_ref().is_none_or(|re| re.is_match(s)))
    {
        return false;
    }
    let as_string = Value::String(s.to_owned());
    // go-yaml v2's resolution (sigs.k8s.io/yaml), then our own YAML 1.2 reader's.
    parse_yaml_output(s).is_ok_and(|v| v == as_string)
        && serde_yaml_ng::from_str::<Value>(s).is_ok_and(|v| v == as_string)
}

/// Whether `s` (with a line break) can be a literal block: only printable characters, no space
/// before a line break or at the end.
fn literal_allowed(s: &str) -> bool {
    s.contains('\n')
        && s.chars().all(printable)
        && !s.contains(" \n")
        && !s.ends_with(' ')
        && !s.starts_with('\n')
}

/// `s` as a literal block scalar (`|`, `|-`, `|+`, with an indentation indicator when the first
/// line starts with a space), its lines at `indent` + 2.
fn write_literal(out: &mut String, s: &str, indent: usize) {
    out.push('|');
    if s.starts_with(' ') {
        let _ = write!(out, "{INDENT}");
    }
    let body = s.trim_end_matches('\n');
    match s.len() - body.len() {
        0 => out.push('-'),
        1 => {}
        _ => out.push('+'),
    }
    for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
        out.push('\n');
        if !line.is_empty() {
            pad(out, indent + INDENT);
            out.push_str(line);
        }
    }
}

/// `s` double-quoted, every character outside YAML's printable set escaped.
fn write_double_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if printable(c) => out.push(c),
            c if u32::from(c) <= 0xff => {
                let _ = write!(out, "\\x{:02X}", u32::from(c));
            }
            c if u32::from(c) <= 0xffff => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08X}", u32::from(c));
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
#[path = "yaml_out_tests.rs"]
mod tests;
