//! A variable's `openAPIV3Schema` compiled once (regexes built, nesting bounded) and then used to
//! validate values, reporting errors in the words the API server uses for custom resources.

use std::collections::BTreeMap;
use std::fmt::Write;

use regex::Regex;
use serde_json::Value;

use super::limits::MAX_DEPTH;
use crate::api::JSONSchemaProps;

/// Largest compiled size of a `pattern` regex, in bytes.
const MAX_REGEX_BYTES: usize = 1 << 20;

/// A compiled schema node.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The node as written.
    pub props: JSONSchemaProps,
    pub(super) pattern: Option<Regex>,
    /// Compiled `properties`.
    pub properties: BTreeMap<String, Schema>,
    /// Compiled `additionalProperties`.
    pub additional: Option<Box<Schema>>,
    /// Compiled `items`.
    pub items: Option<Box<Schema>>,
    pub(super) all_of: Vec<Schema>,
    pub(super) any_of: Vec<Schema>,
    pub(super) one_of: Vec<Schema>,
    pub(super) not: Option<Box<Schema>>,
}

/// Why a schema could not be compiled; the path is relative to the schema root.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileError {
    /// Keyword path from the schema root, e.g. `properties[a].pattern`.
    pub path: Vec<String>,
    /// What is wrong.
    pub message: String,
}

impl Schema {
    /// Compiles `props`; fails on a pattern that is not a valid (RE2) regex or nesting deeper
    /// than [`MAX_DEPTH`].
    pub fn compile(props: &JSONSchemaProps) -> Result<Schema, CompileError> {
        compile_node(props, 0, &mut Vec::new())
    }

    /// Adds to `out` the dotted paths of object fields the schema does not declare (and does
    /// not preserve), as the API server's pruning would drop them.
    pub fn unknown_fields(&self, value: &Value, prefix: &str, out: &mut Vec<String>) {
        self.collect_unknown(value, &mut prefix.to_owned(), out, false, 0);
    }

    /// `path` is the dotted path of `value`: extended for each child and restored after it, so
    /// only the reported paths are allocated. `keep`: unknown fields of this value are kept, as
    /// at a node with `x-kubernetes-preserve-unknown-fields` and in the items of a list that has
    /// it; declared properties and map values below are pruned again unless they preserve too.
    fn collect_unknown(
        &self,
        value: &Value,
        path: &mut String,
        out: &mut Vec<String>,
        keep: bool,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let keep = keep || self.props.preserves_unknown_fields();
        let length = path.len();
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                    if let Some(schema) = self.properties.get(key) {
                        schema.collect_unknown(child, path, out, false, depth + 1);
                    } else if let Some(schema) = &self.additional {
                        schema.collect_unknown(child, path, out, false, depth + 1);
                    } else if !keep && (self.props.is_int_or_string() || !self.props.type_.is_empty()) {
                        out.push(path.clone());
                    }
                    path.truncate(length);
                }
            }
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    for (i, item) in items.iter().enumerate() {
                        // Writing to a String cannot fail.
                        let _ = write!(path, "[{i}]");
                        schema.collect_unknown(item, path, out, keep, depth + 1);
                        path.truncate(length);
                    }
                }
            }
            _ => {}
        }
    }
}

fn compile_node(
    props: &JSONSchemaProps,
    depth: usize,
    path: &mut Vec<String>,
) -> Result<Schema, CompileError> {
    if depth > MAX_DEPTH {
        return Err(CompileError {
            path: path.clone(),
            message: format!("nested deeper than {MAX_DEPTH} levels"),
        });
    }
    let pattern = if props.pattern.is_empty() {
        None
    } else {
        let regex = super::patterns::compiled(&props.pattern, MAX_REGEX_BYTES).map_err(|err| {
            let mut at = path.clone();
            at.push("pattern".into());
            CompileError {
                path: at,
                message: format!("invalid regular expression: {err}"),
            }
        })?;
        Some(regex)
    };
    let mut child = |keyword: String, props: &JSONSchemaProps| {
        path.push(keyword);
        let compiled = compile_node(props, depth + 1, path);
        path.pop();
        compiled
    };
    let mut properties = BTreeMap::new();
    for (name, property) in &props.properties {
        properties.insert(name.clone(), child(format!("properties[{name}]"), property)?);
    }
    let additional = match &props.additional_properties {
        Some(schema) => Some(Box::new(child("additionalProperties".into(), schema)?)),
        None => None,
    };
    let items = match &props.items {
        Some(schema) => Some(Box::new(child("items".into(), schema)?)),
        None => None,
    };
    let mut list = |keyword: &str, schemas: &[JSONSchemaProps]| -> Result<Vec<Schema>, CompileError> {
        schemas
            .iter()
            .enumerate()
            .map(|(i, s)| child(format!("{keyword}[{i}]"), s))
            .collect()
    };
    let all_of = list("allOf", &props.all_of)?;
    let any_of = list("anyOf", &props.any_of)?;
    let one_of = list("oneOf", &props.one_of)?;
    let not = match &props.not {
        Some(schema) => Some(Box::new(child("not".into(), schema)?)),
        None => None,
    };
    Ok(Schema {
        props: props.clone(),
        pattern,
        properties,
        additional,
        items,
        all_of,
        any_of,
        one_of,
        not,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compiled(schema: &str) -> Schema {
        Schema::compile(&serde_yaml_ng::from_str(schema).unwrap()).unwrap()
    }

    #[test]
    fn unknown_fields_are_listed_unless_declared_or_preserved() {
        let schema = compiled(
            "{type: object, properties: {a: {type: object, properties: {b: {type: string}}}, \
             p: {type: object, x-kubernetes-preserve-unknown-fields: true}, \
             l: {type: array, items: {type: object, properties: {n: {type: string}}}}}}",
        );
        let mut unknown = Vec::new();
        schema.unknown_fields(
            &json!({"a": {"b": "x", "c": 1}, "p": {"any": 1}, "l": [{"n": "1"}, {"m": 2}], "d": 2}),
            "",
            &mut unknown,
        );
        assert_eq!(unknown, ["a.c", "l[1].m", "d"]);
    }

    #[test]
    fn preserving_keeps_unknown_fields_at_its_level_and_in_its_list_items_only() {
        let schema = compiled(
            "{type: object, x-kubernetes-preserve-unknown-fields: true, properties: \
             {a: {type: object, properties: {b: {type: string}}}, \
             l: {type: array, x-kubernetes-preserve-unknown-fields: true, items: {type: object, \
             properties: {n: {type: object, properties: {m: {type: string}}}}}}}}",
        );
        let mut unknown = Vec::new();
        schema.unknown_fields(
            &json!({"free": 1, "a": {"b": "x", "c": 1}, "l": [{"kept": 1, "n": {"m": "x", "o": 2}}]}),
            "",
            &mut unknown,
        );
        assert_eq!(unknown, ["a.c", "l[0].n.o"]);
    }

    #[test]
    fn bad_patterns_and_deep_nesting_do_not_compile() {
        let props: JSONSchemaProps = serde_yaml_ng::from_str("{type: string, pattern: '(a'}").unwrap();
        assert_eq!(Schema::compile(&props).unwrap_err().path, ["pattern"]);
        let mut deep = JSONSchemaProps {
            type_: "string".into(),
            ..Default::default()
        };
        for _ in 0..100 {
            deep = JSONSchemaProps {
                type_: "array".into(),
                items: Some(Box::new(deep)),
                ..Default::default()
            };
        }
        assert_eq!(
            Schema::compile(&deep).unwrap_err().message,
            format!("nested deeper than {MAX_DEPTH} levels")
        );
    }
}
