//! A variable's `openAPIV3Schema` compiled once (regexes built, nesting bounded) and then used to
//! validate values, reporting errors in the words the API server uses for custom resources.

use std::collections::BTreeMap;

use regex::{Regex, RegexBuilder};
use serde_json::Value;

use super::formats;
use crate::api::JSONSchemaProps;
use crate::field::{ErrorType, FieldError, FieldErrors, FieldPath};

/// Deepest schema (and value) nesting accepted.
pub const MAX_DEPTH: usize = 64;
/// Largest compiled size of a `pattern` regex, in bytes.
const MAX_REGEX_BYTES: usize = 1 << 20;

/// A compiled schema node.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The node as written.
    pub props: JSONSchemaProps,
    pattern: Option<Regex>,
    /// Compiled `properties`.
    pub properties: BTreeMap<String, Schema>,
    /// Compiled `additionalProperties`.
    pub additional: Option<Box<Schema>>,
    /// Compiled `items`.
    pub items: Option<Box<Schema>>,
    all_of: Vec<Schema>,
    any_of: Vec<Schema>,
    one_of: Vec<Schema>,
    not: Option<Box<Schema>>,
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

    /// Validates `value`, adding errors at `path` (`spec.topology.variables[x].value...`);
    /// `shown` is the value whose JSON the errors show as the offending value (the whole
    /// variable value, as Cluster API shows it); it is only rendered when an error is reported.
    pub fn validate(&self, value: &Value, path: &FieldPath, shown: &Value, errors: &mut FieldErrors) {
        let mut walker = Walker { shown, errors };
        walker.node(self, value, path, "", 0);
    }

    /// True when `value` passes every keyword (used for allOf/anyOf/oneOf/not).
    pub fn accepts(&self, value: &Value) -> bool {
        let mut errors = FieldErrors::new();
        self.validate(value, &FieldPath::root(), value, &mut errors);
        errors.is_empty()
    }

    /// Adds to `out` the dotted paths of object fields the schema does not declare (and does
    /// not preserve), as the API server would prune them.
    pub fn unknown_fields(&self, value: &Value, prefix: &str, out: &mut Vec<String>) {
        self.collect_unknown(value, prefix, out, 0);
    }

    fn collect_unknown(&self, value: &Value, prefix: &str, out: &mut Vec<String>, depth: usize) {
        if depth > MAX_DEPTH || self.props.x_preserve_unknown_fields {
            return;
        }
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let child_path = if prefix.is_empty() {
                        key.clone()
                    } else {
                        format!("{prefix}.{key}")
                    };
                    if let Some(schema) = self.properties.get(key) {
                        schema.collect_unknown(child, &child_path, out, depth + 1);
                    } else if let Some(schema) = &self.additional {
                        schema.collect_unknown(child, &child_path, out, depth + 1);
                    } else if self.props.x_int_or_string || !self.props.type_.is_empty() {
                        out.push(child_path);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    for (i, item) in items.iter().enumerate() {
                        schema.collect_unknown(item, &format!("{prefix}[{i}]"), out, depth + 1);
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
        let regex = RegexBuilder::new(&props.pattern)
            .size_limit(MAX_REGEX_BYTES)
            .build()
            .map_err(|err| {
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

/// Walks a value against a schema, collecting errors.
struct Walker<'a> {
    shown: &'a Value,
    errors: &'a mut FieldErrors,
}

impl Walker<'_> {
    /// The offending value as errors show it: the JSON text of the whole value.
    fn bad_value(&self) -> Value {
        Value::from(serde_json::to_string(self.shown).unwrap_or_default())
    }

    /// Reports like the API server: the error sits at the field, and its detail names the field
    /// relative to the variable value ("foo in body should be ...", or just "should be ..." at the root).
    fn report(&mut self, kind: ErrorType, path: &FieldPath, name: &str, message: String) {
        let detail = if name.is_empty() {
            message
        } else {
            format!("{name} in body {message}")
        };
        self.errors
            .push(FieldError::new(kind, path, Some(self.bad_value()), detail));
    }

    fn node(&mut self, schema: &Schema, value: &Value, path: &FieldPath, name: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.report(
                ErrorType::Invalid,
                path,
                name,
                format!("is nested deeper than {MAX_DEPTH} levels"),
            );
            return;
        }
        let props = &schema.props;
        if value.is_null() {
            // Structural schemas have no nullable: null is only valid where the type is unset.
            if !props.type_.is_empty() {
                self.report(
                    ErrorType::TypeInvalid,
                    path,
                    name,
                    format!("must be of type {}: \"null\"", props.type_),
                );
            }
            return;
        }
        if !self.type_matches(schema, value, path, name) {
            return;
        }
        match value {
            Value::String(text) => self.string(schema, text, path, name),
            Value::Number(number) => self.number(props, number.as_f64().unwrap_or_default(), path, name),
            Value::Array(items) => self.array(schema, items, path, name, depth),
            Value::Object(map) => self.object(schema, map, path, name, depth),
            _ => {}
        }
        if !props.r#enum.is_empty() && !props.r#enum.contains(value) {
            let supported: Vec<String> = props
                .r#enum
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
            let mut error = FieldError::not_supported(path, self.bad_value(), &supported);
            error.kind = ErrorType::NotSupported;
            self.errors.push(error);
        }
        self.combinators(schema, value, path, name);
    }

    fn type_matches(&mut self, schema: &Schema, value: &Value, path: &FieldPath, name: &str) -> bool {
        let props = &schema.props;
        let actual = match value {
            Value::String(_) => "string",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Null => "null",
        };
        if props.x_int_or_string && matches!(actual, "string" | "integer") {
            return true;
        }
        let ok = match props.type_.as_str() {
            "" => true,
            "number" => matches!(actual, "number" | "integer"),
            expected => expected == actual,
        };
        if !ok {
            let expected = if props.x_int_or_string {
                "integer,string"
            } else {
                props.type_.as_str()
            };
            self.report(
                ErrorType::TypeInvalid,
                path,
                name,
                format!("must be of type {expected}: {actual:?}"),
            );
        }
        ok
    }

    fn string(&mut self, schema: &Schema, text: &str, path: &FieldPath, name: &str) {
        let props = &schema.props;
        let length = text.chars().count() as i64;
        if let Some(max) = props.max_length.filter(|max| length > *max) {
            let error = FieldError::new(
                ErrorType::TooLong,
                path,
                None,
                format!("may not be longer than {max}"),
            );
            self.errors.push(error);
        }
        if let Some(min) = props.min_length.filter(|min| length < *min) {
            self.report(
                ErrorType::Invalid,
                path,
                name,
                format!("should be at least {min} chars long"),
            );
        }
        if let Some(pattern) = schema.pattern.as_ref().filter(|p| !p.is_match(text)) {
            self.report(
                ErrorType::Invalid,
                path,
                name,
                format!("should match '{}'", pattern.as_str()),
            );
        }
        if !props.format.is_empty() && !formats::is_valid(&props.format, text) {
            let message = format!("must be of type {}: {text:?}", props.format);
            self.report(ErrorType::TypeInvalid, path, name, message);
        }
    }

    fn number(&mut self, props: &JSONSchemaProps, number: f64, path: &FieldPath, name: &str) {
        if let Some(max) = props.maximum {
            let (fails, phrase) = if props.exclusive_maximum {
                (number >= max as f64, "less than")
            } else {
                (number > max as f64, "less than or equal to")
            };
            if fails {
                self.report(
                    ErrorType::Invalid,
                    path,
                    name,
                    format!("should be {phrase} {max}"),
                );
            }
        }
        if let Some(min) = props.minimum {
            let (fails, phrase) = if props.exclusive_minimum {
                (number <= min as f64, "greater than")
            } else {
                (number < min as f64, "greater than or equal to")
            };
            if fails {
                self.report(
                    ErrorType::Invalid,
                    path,
                    name,
                    format!("should be {phrase} {min}"),
                );
            }
        }
    }

    fn array(&mut self, schema: &Schema, items: &[Value], path: &FieldPath, name: &str, depth: usize) {
        let props = &schema.props;
        let count = items.len() as i64;
        if let Some(max) = props.max_items.filter(|max| count > *max) {
            let detail = format!("must have at most {max} items");
            self.errors.push(FieldError::new(
                ErrorType::TooMany,
                path,
                Some(Value::from(count)),
                detail,
            ));
        }
        if let Some(min) = props.min_items.filter(|min| count < *min) {
            self.report(
                ErrorType::Invalid,
                path,
                name,
                format!("should have at least {min} items"),
            );
        }
        if props.unique_items
            && items
                .iter()
                .enumerate()
                .any(|(i, item)| items[..i].contains(item))
        {
            self.report(
                ErrorType::Duplicate,
                path,
                name,
                "shouldn't contain duplicates".into(),
            );
        }
        if let Some(item_schema) = &schema.items {
            for (i, item) in items.iter().enumerate() {
                let item_name = format!("{name}[{i}]");
                self.node(item_schema, item, &path.index(i), &item_name, depth + 1);
            }
        }
    }

    fn object(
        &mut self,
        schema: &Schema,
        map: &serde_json::Map<String, Value>,
        path: &FieldPath,
        name: &str,
        depth: usize,
    ) {
        let props = &schema.props;
        let count = map.len() as i64;
        if let Some(max) = props.max_properties.filter(|max| count > *max) {
            let detail = format!("must have at most {max} items");
            self.errors.push(FieldError::new(
                ErrorType::TooMany,
                path,
                Some(Value::from(count)),
                detail,
            ));
        }
        if let Some(min) = props.min_properties.filter(|min| count < *min) {
            self.report(
                ErrorType::Invalid,
                path,
                name,
                format!("should have at least {min} properties"),
            );
        }
        for required in &props.required {
            if !map.contains_key(required) {
                self.errors.push(FieldError::required(&path.child(required), ""));
            }
        }
        for (key, child) in map {
            let child_name = if name.is_empty() {
                key.clone()
            } else {
                format!("{name}.{key}")
            };
            let child_schema = schema.properties.get(key).or(schema.additional.as_deref());
            if let Some(child_schema) = child_schema {
                self.node(child_schema, child, &path.child(key), &child_name, depth + 1);
            }
        }
    }

    fn combinators(&mut self, schema: &Schema, value: &Value, path: &FieldPath, name: &str) {
        if !schema.all_of.iter().all(|s| s.accepts(value)) {
            self.report(
                ErrorType::Invalid,
                path,
                name,
                "must validate all the schemas (allOf)".into(),
            );
        }
        if !schema.any_of.is_empty() && !schema.any_of.iter().any(|s| s.accepts(value)) {
            self.report(
                ErrorType::Invalid,
                path,
                name,
                "must validate at least one schema (anyOf)".into(),
            );
        }
        if !schema.one_of.is_empty() && schema.one_of.iter().filter(|s| s.accepts(value)).count() != 1 {
            self.report(
                ErrorType::Invalid,
                path,
                name,
                "must validate one and only one schema (oneOf)".into(),
            );
        }
        if schema.not.as_ref().is_some_and(|s| s.accepts(value)) {
            self.report(
                ErrorType::Invalid,
                path,
                name,
                "must not validate the schema (not)".into(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: &str, value: Value) -> Vec<String> {
        let props: JSONSchemaProps = serde_yaml_ng::from_str(schema).unwrap();
        let compiled = Schema::compile(&props).unwrap();
        let mut errors = FieldErrors::new();
        let path = FieldPath::new("spec")
            .children(&["topology", "variables"])
            .key("v")
            .child("value");
        compiled.validate(&value, &path, &value, &mut errors);
        errors.iter().map(ToString::to_string).collect()
    }

    const P: &str = "spec.topology.variables[v].value";

    #[test]
    fn types_and_bounds_read_like_the_api_server() {
        assert_eq!(
            errors("{type: integer, maximum: 10}", json!(42)),
            [format!(
                r#"{P}: Invalid value: "42": should be less than or equal to 10"#
            )]
        );
        assert_eq!(
            errors("{type: integer}", json!("x")),
            [format!(
                r#"{P}: Invalid value: "\"x\"": must be of type integer: "string""#
            )]
        );
        assert_eq!(
            errors("{type: number, minimum: 1, exclusiveMinimum: true}", json!(1)),
            [format!(r#"{P}: Invalid value: "1": should be greater than 1"#)]
        );
        assert!(
            errors("{type: number}", json!(3)).is_empty(),
            "integers are numbers"
        );
        assert!(errors("{x-kubernetes-int-or-string: true}", json!("10%")).is_empty());
    }

    #[test]
    fn strings_enums_and_formats() {
        assert_eq!(
            errors("{type: string, maxLength: 2}", json!("abc")),
            [format!("{P}: Too long: may not be longer than 2")]
        );
        assert_eq!(
            errors("{type: string, minLength: 2}", json!("a")),
            [format!(
                r#"{P}: Invalid value: "\"a\"": should be at least 2 chars long"#
            )]
        );
        assert_eq!(
            errors("{type: string, pattern: '^a+$'}", json!("b")),
            [format!(r#"{P}: Invalid value: "\"b\"": should match '^a+$'"#)]
        );
        assert_eq!(
            errors("{type: string, enum: [a, b]}", json!("c")),
            [format!(
                r#"{P}: Unsupported value: "\"c\"": supported values: "a", "b""#
            )]
        );
        assert_eq!(
            errors("{type: string, format: ipv4}", json!("1.2.3")),
            [format!(
                r#"{P}: Invalid value: "\"1.2.3\"": must be of type ipv4: "1.2.3""#
            )]
        );
    }

    #[test]
    fn nested_errors_sit_at_the_field_and_name_it() {
        let schema = "{type: object, required: [name], properties: {name: {type: string}, ports: {type: array, maxItems: 1, items: {type: integer, maximum: 5}}}}";
        let value = json!({"ports": [1, 9]});
        assert_eq!(
            errors(schema, value),
            [
                format!("{P}.name: Required value"),
                format!(r#"{P}.ports: Too many: 2: must have at most 1 items"#),
                format!(
                    r#"{P}.ports[1]: Invalid value: "{{\"ports\":[1,9]}}": ports[1] in body should be less than or equal to 5"#
                ),
            ]
        );
    }

    #[test]
    fn combinators_and_unknown_fields() {
        assert_eq!(
            errors("{type: string, not: {enum: [x]}}", json!("x")),
            [format!(
                r#"{P}: Invalid value: "\"x\"": must not validate the schema (not)"#
            )]
        );
        let props: JSONSchemaProps = serde_yaml_ng::from_str(
            "{type: object, properties: {a: {type: object, properties: {b: {type: string}}}}}",
        )
        .unwrap();
        let mut unknown = Vec::new();
        Schema::compile(&props).unwrap().unknown_fields(
            &json!({"a": {"b": "x", "c": 1}, "d": 2}),
            "",
            &mut unknown,
        );
        assert_eq!(unknown, ["a.c", "d"]);
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
        assert!(Schema::compile(&deep).is_err());
    }
}
