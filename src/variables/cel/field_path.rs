//! A rule's `fieldPath` checked against the schema the rule sits on, the way the API server's
//! `ValidFieldPath` checks it: a chain of `.name` and `['name']` selections of declared
//! properties or map keys; list indexes are not paths.

use crate::api::JSONSchemaProps;

/// Why a `fieldPath` is not a path into the schema, worded as the API server words it.
pub fn check_field_path(schema: &JSONSchemaProps, path: &str) -> Result<(), String> {
    let mut tokens = Tokens { rest: path };
    let mut node = schema;
    while let Some(token) = tokens.next() {
        let name = match token {
            "[" => {
                let quoted = tokens.next().ok_or("unexpected end of JSON path")?;
                let name = quoted
                    .strip_prefix('\'')
                    .and_then(|q| q.strip_suffix('\''))
                    .filter(|_| quoted.len() >= 2)
                    .ok_or_else(|| format!("expected single quoted string but got {quoted}"))?;
                let name = unescape(name).map_err(|e| format!("invalid string literal: {e}"))?;
                match tokens.next() {
                    Some("]") => name,
                    Some(other) => return Err(format!("expected ] but got {other}")),
                    None => return Err("unexpected end of JSON path".to_owned()),
                }
            }
            "." => tokens.next().ok_or("unexpected end of JSON path")?.to_owned(),
            other => return Err(format!("expected [ or . but got: {other}")),
        };
        node = select(node, &name).ok_or("does not refer to a valid field")?;
    }
    Ok(())
}

/// The child schema a name selects: a declared property, else any key of a map.
fn select<'a>(node: &'a JSONSchemaProps, name: &str) -> Option<&'a JSONSchemaProps> {
    if !node.properties.is_empty() {
        node.properties.get(name)
    } else {
        node.additional_properties.as_deref()
    }
}

/// The path's tokens: the delimiters `.`, `[` and `]` alone, a single-quoted string (to its
/// closing quote, delimiters included), or the text between delimiters.
struct Tokens<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.rest.as_bytes();
        let first = *bytes.first()?;
        let end = if first == b'\'' {
            (1..bytes.len())
                .find(|&i| bytes[i] == b'\'' && bytes[i - 1] != b'\\')
                .map_or(bytes.len(), |i| i + 1)
        } else if matches!(first, b'.' | b'[' | b']') {
            1
        } else {
            bytes
                .iter()
                .position(|b| matches!(b, b'.' | b'[' | b']'))
                .unwrap_or(bytes.len())
        };
        let (token, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(token)
    }
}

/// A single-quoted string's content with its backslash escapes resolved.
fn unescape(quoted: &str) -> Result<String, String> {
    let mut out = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escaped) = chars.next() else {
            // A trailing backslash escapes nothing and stays.
            out.push('\\');
            break;
        };
        out.push(match escaped {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            other => return Err(format!("invalid escape char \\{other}")),
        });
    }
    Ok(out)
}
