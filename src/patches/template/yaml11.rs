//! Types rendered template output the way Cluster API does: sigs.k8s.io/yaml (go-yaml v2, YAML 1.1
//! resolution of plain scalars) converted to JSON.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::TScalarStyle;

use super::float::format_float_v;
use super::value::json_number;
use super::TemplateError;

/// Most nodes (after alias expansion) one output may produce.
const MAX_NODES: usize = 100_000;
/// Deepest nesting of collections.
const MAX_DEPTH: usize = 200;

static YAML_FLOAT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$").ok());

/// A resolved YAML node.
#[derive(Debug, Clone)]
enum Node {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

/// Parses rendered template output as YAML 1.1 (first document) into JSON.
///
/// Plain scalars resolve like go-yaml v2: `yes`/`on`/`y` are booleans, `0x1F`, `017`, `1_000` are
/// integers, `~` and empty are null; quoted and block scalars stay strings. Infinite or NaN
/// floats have no JSON form and fail, as they do in Cluster API.
pub fn parse_yaml_output(rendered: &str) -> Result<serde_json::Value, TemplateError> {
    if is_lone_plain_scalar(rendered) {
        return parse_yaml_output_owned(rendered.to_owned());
    }
    parse_document(rendered)
}

/// [`parse_yaml_output`] of text the caller gives up (a template's output): a lone scalar
/// becomes the JSON string without being copied.
pub fn parse_yaml_output_owned(rendered: String) -> Result<serde_json::Value, TemplateError> {
    if is_lone_plain_scalar(&rendered) {
        // Most patch templates render one word or number: resolve it without the parser.
        return into_json(resolve(rendered, TScalarStyle::Plain));
    }
    parse_document(&rendered)
}

/// [`parse_yaml_output`] through the YAML parser, whatever the text.
fn parse_document(rendered: &str) -> Result<serde_json::Value, TemplateError> {
    let mut builder = Builder {
        parser: Parser::new_from_str(rendered),
        anchors: HashMap::new(),
        nodes: 0,
    };
    let node = builder.document()?;
    into_json(node)
}

/// Whether `text` is one single-line plain scalar the parser would return unchanged: printable
/// ASCII, not empty, no surrounding whitespace, no leading indicator, no `: ` or ` #`, no document
/// marker.
fn is_lone_plain_scalar(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    text.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
        && !"-?:,[]{}#&*!|>'\"%@`. ".contains(first)
        && !text.ends_with([' ', ':'])
        && !text.contains(": ")
        && !text.contains(" #")
}

fn yaml_error(message: impl std::fmt::Display) -> TemplateError {
    TemplateError::Yaml(format!("yaml: {message}"))
}

struct Builder<'a> {
    parser: Parser<std::str::Chars<'a>>,
    anchors: HashMap<usize, Node>,
    nodes: usize,
}

impl Builder<'_> {
    fn next(&mut self) -> Result<Event, TemplateError> {
        self.parser.next_token().map(|(ev, _)| ev).map_err(yaml_error)
    }

    fn document(&mut self) -> Result<Node, TemplateError> {
        loop {
            match self.next()? {
                Event::StreamStart | Event::Nothing => {}
                Event::DocumentStart => {
                    let first = self.next()?;
                    if matches!(first, Event::DocumentEnd) {
                        return Ok(Node::Null);
                    }
                    return self.node(first, 0);
                }
                _ => return Ok(Node::Null),
            }
        }
    }

    fn count(&mut self, n: usize) -> Result<(), TemplateError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(yaml_error(format!(
                "document expands to more than {MAX_NODES} nodes"
            )));
        }
        Ok(())
    }

    fn node(&mut self, event: Event, depth: usize) -> Result<Node, TemplateError> {
        if depth > MAX_DEPTH {
            return Err(yaml_error(format!("document nested deeper than {MAX_DEPTH}")));
        }
        self.count(1)?;
        let (node, anchor) = match event {
            Event::Scalar(value, style, anchor, tag) => (resolve_tagged(value, style, tag.as_ref())?, anchor),
            Event::Alias(id) => {
                let node = self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| yaml_error("unknown anchor referenced"))?;
                self.count(size(&node))?;
                return Ok(node);
            }
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                loop {
                    match self.next()? {
                        Event::SequenceEnd => break,
                        ev => items.push(self.node(ev, depth + 1)?),
                    }
                }
                (Node::Seq(items), anchor)
            }
            Event::MappingStart(anchor, _) => {
                let mut entries: Vec<(Node, Node)> = Vec::new();
                loop {
                    let key_event = self.next()?;
                    if matches!(key_event, Event::MappingEnd) {
                        break;
                    }
                    let is_merge =
                        matches!(&key_event, Event::Scalar(v, TScalarStyle::Plain, _, _) if v == "<<");
                    let key = self.node(key_event, depth + 1)?;
                    let value_event = self.next()?;
                    let value = self.node(value_event, depth + 1)?;
                    if is_merge {
                        merge(&mut entries, value)?;
                    } else {
                        insert(&mut entries, key, value);
                    }
                }
                (Node::Map(entries), anchor)
            }
            other => return Err(yaml_error(format!("unexpected event {other:?}"))),
        };
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        Ok(node)
    }
}

fn size(node: &Node) -> usize {
    match node {
        Node::Seq(items) => 1 + items.iter().map(size).sum::<usize>(),
        Node::Map(entries) => 1 + entries.iter().map(|(k, v)| size(k) + size(v)).sum::<usize>(),
        _ => 1,
    }
}

fn same_key(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Str(x), Node::Str(y)) => x == y,
        (Node::Int(x), Node::Int(y)) => x == y,
        (Node::Bool(x), Node::Bool(y)) => x == y,
        (Node::Float(x), Node::Float(y)) => x == y,
        (Node::Null, Node::Null) => true,
        _ => false,
    }
}

/// Sets a key; a repeated key replaces the earlier value (go-yaml v2 into a map).
fn insert(entries: &mut Vec<(Node, Node)>, key: Node, value: Node) {
    match entries.iter_mut().find(|(k, _)| same_key(k, &key)) {
        Some(slot) => slot.1 = value,
        None => entries.push((key, value)),
    }
}

/// Applies a `<<` merge key: a mapping or a list of mappings.
fn merge(entries: &mut Vec<(Node, Node)>, value: Node) -> Result<(), TemplateError> {
    match value {
        Node::Map(merged) => {
            for (k, v) in merged {
                insert(entries, k, v);
            }
            Ok(())
        }
        Node::Seq(items) => {
            for item in items.into_iter().rev() {
                merge(entries, item)?;
            }
            Ok(())
        }
        _ => Err(yaml_error(
            "map merge requires map or sequence of maps as the value",
        )),
    }
}

/// Resolves a scalar, honouring explicit core tags (`!!str`, `!!binary`, `!!int`, ...).
fn resolve_tagged(value: String, style: TScalarStyle, tag: Option<&Tag>) -> Result<Node, TemplateError> {
    let Some(tag) = tag.filter(|t| t.handle == "!!" || t.handle == "tag:yaml.org,2002:") else {
        return Ok(resolve(value, style));
    };
    let wanted = tag.suffix.as_str();
    match wanted {
        "str" => return Ok(Node::Str(value)),
        "binary" => {
            use base64::Engine as _;
            let compact: String = value.chars().filter(|c| !c.is_whitespace()).collect();
            return base64::engine::general_purpose::STANDARD
                .decode(compact)
                .map(|bytes| Node::Str(String::from_utf8_lossy(&bytes).into_owned()))
                .map_err(|e| yaml_error(format!("!!binary value contains invalid base64 data: {e}")));
        }
        _ => {}
    }
    let node = resolve(value.clone(), TScalarStyle::Plain);
    let fits = matches!(
        (wanted, &node),
        ("int", Node::Int(_))
            | ("float", Node::Float(_) | Node::Int(_))
            | ("bool", Node::Bool(_))
            | ("null", Node::Null)
            | ("map" | "seq" | "merge" | "timestamp", _)
    );
    match node {
        Node::Int(i) if wanted == "float" => Ok(Node::Float(i as f64)),
        node if fits => Ok(node),
        // The empty string is null for a `!!null` tag whatever its style.
        _ if wanted == "null" && value.is_empty() => Ok(Node::Null),
        _ => Err(yaml_error(format!(
            "cannot decode !!str `{value}` as a !!{wanted}"
        ))),
    }
}

/// Resolves an untagged scalar with go-yaml v2's YAML 1.1 rules.
fn resolve(value: String, style: TScalarStyle) -> Node {
    if style != TScalarStyle::Plain {
        return Node::Str(value);
    }
    match value.as_str() {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Node::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Node::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => return Node::Null,
        ".nan" | ".NaN" | ".NAN" => return Node::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Node::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Node::Float(f64::NEG_INFINITY),
        _ => {}
    }
    match value.as_bytes().first() {
        Some(b'.') => {
            let digits_ok = value.len() > 1
                && value[1..]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || matches!(b, b'e' | b'E' | b'+' | b'-'));
            if digits_ok {
                if let Some(f) = value.parse::<f64>().ok().filter(|f| f.is_finite()) {
                    return Node::Float(f);
                }
            }
        }
        Some(b'0'..=b'9' | b'+' | b'-') => {
            let plain = value.replace('_', "");
            if let Some(i) = parse_int_base0(&plain) {
                return Node::Int(i);
            }
            if YAML_FLOAT.as_ref().is_some_and(|re| re.is_match(&plain)) {
                // Out-of-range floats fail to parse in Go and stay strings.
                if let Some(f) = plain.parse::<f64>().ok().filter(|f| f.is_finite()) {
                    return Node::Float(f);
                }
            }
        }
        _ => {}
    }
    Node::Str(value)
}

/// Go's `strconv.ParseInt(s, 0, 64)` / `ParseUint`: sign, `0x`, `0o`, `0b`, leading-zero octal.
fn parse_int_base0(s: &str) -> Option<i128> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (digits, radix) = if let Some(d) = lower.strip_prefix("0x") {
        (d, 16)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (d, 8)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (d, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    let value = if neg {
        -i128::from(magnitude)
    } else {
        i128::from(magnitude)
    };
    // Negative values must fit int64; positive ones may use the full uint64 range.
    (value >= i128::from(i64::MIN)).then_some(value)
}

fn key_string(key: &Node) -> Result<String, TemplateError> {
    match key {
        Node::Str(s) => Ok(s.clone()),
        Node::Int(i) => Ok(i.to_string()),
        Node::Bool(b) => Ok(b.to_string()),
        Node::Float(f) if f.is_nan() => Ok(".nan".into()),
        Node::Float(f) if f.is_infinite() => Ok(if *f > 0.0 { ".inf".into() } else { "-.inf".into() }),
        Node::Float(f) => Ok(format_float_v(*f)),
        Node::Null => Err(yaml_error("invalid map key: <nil>")),
        _ => Err(yaml_error("invalid map key: a collection")),
    }
}

fn into_json(node: Node) -> Result<serde_json::Value, TemplateError> {
    Ok(match node {
        Node::Null => serde_json::Value::Null,
        Node::Bool(b) => serde_json::Value::Bool(b),
        Node::Int(i) => match (i64::try_from(i), u64::try_from(i)) {
            (Ok(v), _) => serde_json::Value::from(v),
            (_, Ok(v)) => serde_json::Value::from(v),
            _ => serde_json::Value::Null,
        },
        Node::Float(f) if !f.is_finite() => {
            return Err(TemplateError::Yaml(format!(
                "json: unsupported value: {}",
                format_float_v(f)
            )))
        }
        Node::Float(f) => json_number(f),
        Node::Str(s) => serde_json::Value::String(s),
        Node::Seq(items) => {
            serde_json::Value::Array(items.into_iter().map(into_json).collect::<Result<_, _>>()?)
        }
        Node::Map(entries) => {
            // Go's JSON encoder writes map keys sorted.
            let mut sorted = std::collections::BTreeMap::new();
            for (k, v) in entries {
                sorted.insert(key_string(&k)?, into_json(v)?);
            }
            serde_json::Value::Object(sorted.into_iter().collect())
        }
    })
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;

    #[test]
    fn lone_scalars_type_as_the_parser_types_them() {
        let samples = [
            "v1.31.2",
            "kindest/node:v1.31.2",
            "yes",
            "No",
            "on",
            "OFF",
            "y",
            "true",
            "null",
            "~",
            "0x1F",
            "017",
            "0o17",
            "0b101",
            "1_000",
            "1.5",
            "1e3",
            "+12",
            "3.",
            "1:30",
            "a#b",
            "a, b",
            "[x]",
            "x]",
            "x{",
            "registry.k8s.io/pause",
            "http://example.com/a?b=c",
            "100%",
            "a b c",
            "8080",
            "9223372036854775808",
            "18446744073709551616",
            "1.7976931348623157e309",
            ".inf",
            "Yes please",
            "NaN",
            "0.1.2",
            "1-2",
            "_x",
            "@x",
            "x@y",
            "a'b",
            "a\"b",
            "x|y",
            "x>y",
            "a!b",
            "a&b",
            "a*b",
        ];
        for sample in samples {
            assert!(
                is_lone_plain_scalar(sample) || sample.starts_with(['[', '@', '.']),
                "{sample}"
            );
            assert_eq!(
                parse_yaml_output(sample).map_err(|e| e.to_string()),
                parse_document(sample).map_err(|e| e.to_string()),
                "{sample}"
            );
        }
        for not_lone in [
            "", " x", "x ", "a: b", "a #c", "- x", "---", "...", "x:", "a\nb", "a\tb", "é", "'q'",
        ] {
            assert!(!is_lone_plain_scalar(not_lone), "{not_lone:?}");
        }
    }
}
