//! Label and annotation values that kubectl's YAML reader does not read as strings. Our reader
//! reads YAML 1.2, where a plain `yes`, `on`, `y` or `1_000` is a string; kubectl's
//! (sigs.k8s.io/yaml over go-yaml v2) resolves plain scalars by YAML 1.1, where they are a bool or
//! a number, and a bool or a number cannot be decoded into the strings `metadata.labels` and
//! `metadata.annotations` hold: kubectl (or the API server) refuses the file. Found here in the
//! text, since a parsed value no longer says whether it was quoted.

use serde_json::Value;
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;

use crate::patches::template::parse_yaml_output;

/// The maps of `metadata` whose values must be strings.
const STRING_MAPS: [&str; 2] = ["labels", "annotations"];

/// A label or annotation value written so kubectl reads it as a bool or a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mistyped {
    /// Where: `metadata.labels.team`, `items[1].spec.template.metadata.labels.on-call`.
    pub path: String,
    /// The value as written.
    pub written: String,
    /// What kubectl reads it as: a JSON `boolean`, `integer` or `number`.
    pub json_type: &'static str,
}

impl Mistyped {
    /// The refusal of the file `source`, in the words of whoever refuses it: kubectl for an
    /// object's own metadata (it decodes that before sending), the API server's schema check
    /// for a nested one (`spec.template.metadata.labels`); then the value and how to write it.
    pub fn refusal(&self, source: &str) -> String {
        // In a List, each item is an object of its own.
        let path = match self.path.split_once("].") {
            Some((head, rest)) if head.starts_with("items[") => rest,
            _ => self.path.as_str(),
        };
        let map = path.rsplit_once('.').map_or(path, |(map, _)| map);
        let refusal = if map.starts_with("metadata.") {
            let go_type = if self.json_type == "boolean" {
                "bool"
            } else {
                "number"
            };
            format!(
                "unable to decode {source:?}: json: cannot unmarshal {go_type} into Go struct field \
                 ObjectMeta.{map} of type string"
            )
        } else {
            let json_type = self.json_type;
            format!(
                "{source}: {path}: Invalid value: {json_type:?}: {path} in body must be of type string: {json_type:?}"
            )
        };
        format!(
            "{refusal} ({} is written {}, which kubectl's YAML 1.1 reader reads as a {}: quote it, \"{}\")",
            self.path, self.written, self.json_type, self.written
        )
    }
}

/// The JSON type go-yaml v2 gives `value` written plain, when it is not a string but our reader
/// reads it as one.
fn typed_by_yaml11(value: &str) -> Option<&'static str> {
    match parse_yaml_output(value).ok()? {
        Value::Bool(_) => Some("boolean"),
        Value::Number(n) if n.is_f64() => Some("number"),
        Value::Number(_) => Some("integer"),
        _ => None,
    }
}

/// Whether any label or annotation of `objects` (as read) is a string kubectl's reader may type
/// otherwise: only then is the text searched.
fn any_suspect<'a>(objects: impl IntoIterator<Item = &'a Value>) -> bool {
    let mut pending: Vec<&Value> = objects.into_iter().collect();
    while let Some(node) = pending.pop() {
        match node {
            Value::Object(map) => {
                for (key, value) in map {
                    let string_map = key == "metadata"
                        && STRING_MAPS.iter().any(|name| {
                            value[*name].as_object().is_some_and(|m| {
                                m.values()
                                    .filter_map(Value::as_str)
                                    .any(|v| typed_by_yaml11(v).is_some())
                            })
                        });
                    if string_map {
                        return true;
                    }
                    pending.push(value);
                }
            }
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    false
}

/// One open collection while walking the events.
enum Frame {
    /// A mapping: the key whose value comes next, `None` while a key is awaited.
    Map(Option<String>),
    /// A sequence and the index of its next item.
    Seq(usize),
}

/// The first label or annotation value in `text` (whose documents read as `objects`) written as
/// a plain scalar that YAML 1.1 types as a bool or a number.
pub fn first_mistyped<'a>(text: &str, objects: impl IntoIterator<Item = &'a Value>) -> Option<Mistyped> {
    if !any_suspect(objects) {
        return None;
    }
    let mut parser = Parser::new_from_str(text);
    let mut frames: Vec<Frame> = Vec::new();
    loop {
        let (event, _) = parser.next_token().ok()?;
        match event {
            Event::StreamEnd | Event::Nothing => return None,
            Event::DocumentStart => frames.clear(),
            Event::MappingStart(..) => frames.push(Frame::Map(None)),
            Event::SequenceStart(..) => frames.push(Frame::Seq(0)),
            Event::MappingEnd | Event::SequenceEnd => {
                frames.pop();
                value_done(&mut frames);
            }
            Event::Scalar(value, style, ..) => {
                if let Some(Frame::Map(key @ None)) = frames.last_mut() {
                    *key = Some(value);
                    continue;
                }
                if style == TScalarStyle::Plain && in_string_map(&frames) {
                    if let Some(json_type) = typed_by_yaml11(&value) {
                        return Some(Mistyped {
                            path: path_of(&frames),
                            written: value,
                            json_type,
                        });
                    }
                }
                value_done(&mut frames);
            }
            Event::Alias(_) => value_done(&mut frames),
            _ => {}
        }
    }
}

/// After a value: its mapping awaits the next key, its sequence the next item.
fn value_done(frames: &mut [Frame]) {
    match frames.last_mut() {
        Some(Frame::Map(key)) => *key = None,
        Some(Frame::Seq(index)) => *index += 1,
        None => {}
    }
}

/// Whether the value being read is one of `metadata.labels` or `metadata.annotations`.
fn in_string_map(frames: &[Frame]) -> bool {
    let [.., Frame::Map(Some(metadata)), Frame::Map(Some(map)), Frame::Map(Some(_))] = frames else {
        return false;
    };
    metadata == "metadata" && STRING_MAPS.contains(&map.as_str())
}

/// The dotted path of the value being read: `items[0].metadata.labels.team`.
fn path_of(frames: &[Frame]) -> String {
    let mut path = String::new();
    for frame in frames {
        match frame {
            Frame::Map(Some(key)) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Map(None) => {}
            Frame::Seq(index) => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mistyped(text: &str) -> Option<Mistyped> {
        let objects: Vec<Value> = crate::store::parse_manifests(text).unwrap_or_default();
        first_mistyped(text, &objects)
    }

    #[test]
    fn plain_yaml11_bools_and_numbers_in_labels_are_found() {
        let text =
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    a: 'yes'\n    team: yes\n";
        let found = mistyped(text);
        assert_eq!(
            found,
            Some(Mistyped {
                path: "metadata.labels.team".into(),
                written: "yes".into(),
                json_type: "boolean"
            })
        );
        // kubectl 1.34's words (`kubectl annotate --local -f f.yaml -o json probe=1`).
        assert_eq!(
            found.map(|m| m.refusal("f.yaml")).unwrap_or_default(),
            "unable to decode \"f.yaml\": json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels \
             of type string (metadata.labels.team is written yes, which kubectl's YAML 1.1 reader reads as a \
             boolean: quote it, \"yes\")"
        );
        let list = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: b}\n  \
                    spec:\n    template:\n      metadata:\n        annotations: {n: 1_000, o: on}\n";
        let found = mistyped(list).unwrap_or_else(|| panic!("a List item's template"));
        assert_eq!(found.path, "items[1].spec.template.metadata.annotations.n");
        assert_eq!(found.json_type, "integer");
        assert!(found.refusal("l.yaml").starts_with(
            "l.yaml: spec.template.metadata.annotations.n: Invalid value: \"integer\": \
             spec.template.metadata.annotations.n in body must be of type string: \"integer\""
        ));
        let item = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    labels: {x: 'on', y: on}\n";
        let found = mistyped(item).map(|m| m.refusal("i.yaml")).unwrap_or_default();
        assert!(
            found.starts_with(
                "unable to decode \"i.yaml\": json: cannot unmarshal bool into Go struct field \
             ObjectMeta.metadata.labels of type string (items[0].metadata.labels.y is written on"
            ),
            "{found}"
        );
    }

    #[test]
    fn quoted_values_and_other_fields_pass() {
        for text in [
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    a: \"on\"\n    b: 'NO'\n    c: |-\n      yes\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: yes\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {yes: 'y', b: v1.2}\n",
        ] {
            assert_eq!(mistyped(text), None, "{text}");
        }
    }
}
