//! Validates a value against a compiled schema the way the API server validates a custom
//! resource (kube-openapi), with Cluster API's rewording: every error shows the whole variable
//! value, sits at the field it concerns, and names that field relative to the value.

use serde_json::{Map, Number, Value};

use super::formats;
use super::go_json::{same_json, to_go_json};
use super::limits::MAX_DEPTH;
use super::schema::Schema;
use crate::field::{ErrorType, FieldError, FieldErrors, FieldPath};

impl Schema {
    /// Validates `value`, adding errors at `path` (`spec.topology.variables[x].value...`);
    /// `shown` is the value whose JSON the errors show as the offending value (the whole
    /// variable value, as Cluster API shows it); it is only rendered when an error is reported.
    pub fn validate(&self, value: &Value, path: &FieldPath, shown: &Value, errors: &mut FieldErrors) {
        validate(self, value, path, shown, errors);
    }

    /// Validates a whole custom resource as the API server validates it against its CRD's
    /// schema: fields named from the object's root (`spec.topology.classRef.name`), each error
    /// showing the offending field's own value (a count for item and property counts).
    pub fn validate_resource(&self, object: &Value, errors: &mut FieldErrors) {
        let root = FieldPath::root();
        let mut walker = Walker {
            base: &root,
            shown: object,
            own_values: true,
            errors: Vec::new(),
        };
        walker.node(self, object, "", 0);
        errors.extend(walker.errors);
    }
}

/// Validates `value` against `schema`, adding errors under `base` (`...variables[x].value`);
/// `shown` is the value the errors show (rendered as Go renders JSON, only on error).
fn validate(schema: &Schema, value: &Value, base: &FieldPath, shown: &Value, errors: &mut FieldErrors) {
    let mut walker = Walker {
        base,
        shown,
        own_values: false,
        errors: Vec::new(),
    };
    walker.node(schema, value, "", 0);
    for error in walker.errors {
        errors.push(error);
    }
}

/// Walks a value against a schema. Field names follow kube-openapi: `a.b`, `list[1]`, `[1]` for
/// items of the value itself and `.key` for its additionalProperties.
struct Walker<'a> {
    base: &'a FieldPath,
    shown: &'a Value,
    /// Errors show the offending field's own value (a custom resource's schema check) instead
    /// of `shown` (Cluster API's variable errors).
    own_values: bool,
    errors: Vec<FieldError>,
}

impl Walker<'_> {
    /// The field an error named `name` sits at (the leading dot of a name is dropped).
    fn path(&self, name: &str) -> FieldPath {
        let field = name.strip_prefix('.').unwrap_or(name);
        if field.is_empty() {
            self.base.clone()
        } else {
            self.base.child(field)
        }
    }

    /// The value an error shows: `own` (the field's value, or a count) for a custom resource,
    /// else the whole variable value as Go renders its JSON.
    fn shown(&self, own: impl FnOnce() -> Value) -> Value {
        if self.own_values {
            own()
        } else {
            Value::from(to_go_json(self.shown))
        }
    }

    /// A keyword error: at the field, detail `"<name> in body <message>"` (just the message at
    /// the root), showing `own` for a custom resource.
    fn report(&mut self, kind: ErrorType, name: &str, own: impl FnOnce() -> Value, message: String) {
        let detail = if name.is_empty() {
            message
        } else {
            format!("{name} in body {message}")
        };
        let error = FieldError::new(kind, &self.path(name), Some(self.shown(own)), detail);
        self.errors.push(error);
    }

    /// A combinator error: at the value itself, naming the field in quotes.
    fn report_combinator(&mut self, name: &str, value: &Value, message: &str) {
        let error = FieldError::new(
            ErrorType::Invalid,
            self.base,
            Some(self.shown(|| value.clone())),
            format!("{name:?} {message}"),
        );
        self.errors.push(error);
    }

    /// Validates against `schema` on its own, returning the errors instead of keeping them.
    fn branch(&mut self, schema: &Schema, value: &Value, name: &str, depth: usize) -> Vec<FieldError> {
        let kept = std::mem::take(&mut self.errors);
        self.node(schema, value, name, depth);
        std::mem::replace(&mut self.errors, kept)
    }

    fn node(&mut self, schema: &Schema, value: &Value, name: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.report(
                ErrorType::Invalid,
                name,
                || value.clone(),
                format!("is nested deeper than {MAX_DEPTH} levels"),
            );
            return;
        }
        if value.is_null() {
            let expected = expected_type(schema);
            if !expected.is_empty() {
                self.report(
                    ErrorType::TypeInvalid,
                    name,
                    || Value::Null,
                    format!("must be of type {expected}: \"null\""),
                );
            }
            self.enumeration(schema, value, name);
            return;
        }
        self.type_check(schema, value, name);
        self.combinators(schema, value, name, depth);
        match value {
            Value::String(text) => self.string(schema, text, name),
            Value::Number(number) => self.number(schema, number, name),
            Value::Array(items) => self.array(schema, items, name, depth),
            _ => {}
        }
        self.enumeration(schema, value, name);
        if let Value::Object(map) = value {
            self.object(schema, map, name, depth);
        }
    }

    fn type_check(&mut self, schema: &Schema, value: &Value, name: &str) {
        let expected = expected_type(schema);
        let actual = type_of(value);
        let integral = matches!(value, Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0));
        let ok = expected.is_empty()
            || expected.split(',').any(|t| {
                t == actual || (t == "number" && actual == "integer") || (t == "integer" && integral)
            });
        if !ok {
            let message = format!("must be of type {expected}: {actual:?}");
            self.report(ErrorType::TypeInvalid, name, || value.clone(), message);
        }
    }

    fn combinators(&mut self, schema: &Schema, value: &Value, name: &str, depth: usize) {
        if !schema.any_of.is_empty() {
            let mut best: Option<Vec<FieldError>> = None;
            let mut passed = false;
            for branch in &schema.any_of {
                let found = self.branch(branch, value, name, depth + 1);
                if found.is_empty() {
                    passed = true;
                    break;
                }
                if best.as_ref().is_none_or(|b| found.len() < b.len()) {
                    best = Some(found);
                }
            }
            if !passed {
                self.report_combinator(name, value, "must validate at least one schema (anyOf)");
                self.errors.extend(best.unwrap_or_default());
            }
        }
        if !schema.one_of.is_empty() {
            let mut best: Option<Vec<FieldError>> = None;
            let mut valid = 0;
            for branch in &schema.one_of {
                let found = self.branch(branch, value, name, depth + 1);
                if found.is_empty() {
                    valid += 1;
                } else if valid == 0 && best.as_ref().is_none_or(|b| found.len() < b.len()) {
                    best = Some(found);
                }
            }
            if valid == 0 {
                self.report_combinator(
                    name,
                    value,
                    "must validate one and only one schema (oneOf). Found none valid",
                );
                self.errors.extend(best.unwrap_or_default());
            } else if valid > 1 {
                let message = format!(
                    "must validate one and only one schema (oneOf). Found {valid} valid alternatives"
                );
                self.report_combinator(name, value, &message);
            }
        }
        if !schema.all_of.is_empty() {
            let mut valid = 0;
            for branch in &schema.all_of {
                let found = self.branch(branch, value, name, depth + 1);
                if found.is_empty() {
                    valid += 1;
                }
                self.errors.extend(found);
            }
            if valid == 0 {
                self.report_combinator(
                    name,
                    value,
                    "must validate all the schemas (allOf). None validated",
                );
            } else if valid < schema.all_of.len() {
                self.report_combinator(name, value, "must validate all the schemas (allOf)");
            }
        }
        if let Some(not) = &schema.not {
            if self.branch(not, value, name, depth + 1).is_empty() {
                self.report_combinator(name, value, "must not validate the schema (not)");
            }
        }
    }

    fn string(&mut self, schema: &Schema, text: &str, name: &str) {
        let props = &schema.props;
        let length = i64::try_from(text.chars().count()).unwrap_or(i64::MAX);
        // kube-apiserver reports a custom resource's first failing string keyword only
        // (maxLength, minLength, pattern in that order: kube-openapi's string validator); the
        // format is a validator of its own.
        let mut stop = false;
        if let Some(max) = props.max_length.filter(|max| length > *max) {
            let detail = format!("may not be more than {max} bytes");
            self.errors.push(FieldError::new(
                ErrorType::TooLong,
                &self.path(name),
                None,
                detail,
            ));
            stop = self.own_values;
        }
        if let Some(min) = props.min_length.filter(|min| !stop && length < *min) {
            self.report(
                ErrorType::Invalid,
                name,
                || Value::from(text),
                format!("should be at least {min} chars long"),
            );
            stop = self.own_values;
        }
        if let Some(pattern) = schema.pattern.as_ref().filter(|p| !stop && !p.is_match(text)) {
            let message = format!("should match '{}'", pattern.as_str());
            self.report(ErrorType::Invalid, name, || Value::from(text), message);
        }
        if !props.format.is_empty() && !formats::is_valid(&props.format, text) {
            let message = format!("must be of type {}: {text:?}", props.format);
            self.report(ErrorType::TypeInvalid, name, || Value::from(text), message);
        }
    }

    fn number(&mut self, schema: &Schema, number: &Number, name: &str) {
        let props = &schema.props;
        let own = Value::Number(number.clone());
        let Some(number) = number.as_f64() else {
            return;
        };
        if let Some(min) = props.minimum {
            let (fails, phrase) = if props.exclusive_minimum == Some(true) {
                (number <= min as f64, "greater than")
            } else {
                (number < min as f64, "greater than or equal to")
            };
            if fails {
                self.report(
                    ErrorType::Invalid,
                    name,
                    || own.clone(),
                    format!("should be {phrase} {min}"),
                );
            }
        }
        if let Some(max) = props.maximum {
            let (fails, phrase) = if props.exclusive_maximum == Some(true) {
                (number >= max as f64, "less than")
            } else {
                (number > max as f64, "less than or equal to")
            };
            if fails {
                self.report(
                    ErrorType::Invalid,
                    name,
                    || own.clone(),
                    format!("should be {phrase} {max}"),
                );
            }
        }
    }

    fn array(&mut self, schema: &Schema, items: &[Value], name: &str, depth: usize) {
        if let Some(item_schema) = &schema.items {
            for (i, item) in items.iter().enumerate() {
                self.node(item_schema, item, &format!("{name}[{i}]"), depth + 1);
            }
        }
        let props = &schema.props;
        let count = i64::try_from(items.len()).unwrap_or(i64::MAX);
        if let Some(min) = props.min_items.filter(|min| count < *min) {
            self.report(
                ErrorType::Invalid,
                name,
                || Value::from(count),
                format!("should have at least {min} items"),
            );
        }
        if let Some(max) = props.max_items.filter(|max| count > *max) {
            self.too_many(name, count, max);
        }
        let duplicated = props.unique_items == Some(true)
            && items
                .iter()
                .enumerate()
                .any(|(i, item)| items.get(..i).is_some_and(|before| before.contains(item)));
        if duplicated {
            self.report(
                ErrorType::Invalid,
                name,
                || Value::Array(items.to_vec()),
                "shouldn't contain duplicates".to_owned(),
            );
        }
    }

    /// `Too many` at the field: its detail never names the field.
    fn too_many(&mut self, name: &str, count: i64, max: i64) {
        let detail = format!("must have at most {max} items");
        let shown = self.shown(|| Value::from(count));
        let error = FieldError::new(ErrorType::TooMany, &self.path(name), Some(shown), detail);
        self.errors.push(error);
    }

    fn object(&mut self, schema: &Schema, map: &Map<String, Value>, name: &str, depth: usize) {
        let props = &schema.props;
        let count = i64::try_from(map.len()).unwrap_or(i64::MAX);
        if let Some(min) = props.min_properties.filter(|min| count < *min) {
            self.report(
                ErrorType::Invalid,
                name,
                || Value::from(count),
                format!("should have at least {min} properties"),
            );
        }
        if let Some(max) = props.max_properties.filter(|max| count > *max) {
            self.too_many(name, count, max);
        }
        for (key, child) in map {
            if let Some(property) = schema.properties.get(key) {
                let child_name = if name.is_empty() {
                    key.clone()
                } else {
                    format!("{name}.{key}")
                };
                self.node(property, child, &child_name, depth + 1);
            } else if let Some(additional) = &schema.additional {
                self.node(additional, child, &format!("{name}.{key}"), depth + 1);
            }
        }
        for required in &props.required {
            if !map.contains_key(required) {
                let path = self.path(&format!("{name}.{required}"));
                self.errors.push(FieldError::required(&path, ""));
            }
        }
    }

    fn enumeration(&mut self, schema: &Schema, value: &Value, name: &str) {
        let allowed = &schema.props.r#enum;
        if allowed.is_empty() || (!value.is_null() && allowed.iter().any(|a| same_json(a, value, 0))) {
            return;
        }
        let supported: Vec<String> = allowed
            .iter()
            .map(|v| v.as_str().map_or_else(|| to_go_json(v), str::to_owned))
            .collect();
        let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
        let error = FieldError::not_supported(&self.path(name), self.shown(|| value.clone()), &supported);
        self.errors.push(error);
    }
}

/// The type(s) a schema requires, comma-separated as kube-openapi prints them ("" for any).
fn expected_type(schema: &Schema) -> &str {
    if schema.props.is_int_or_string() {
        "integer,string"
    } else {
        &schema.props.type_
    }
}

/// The JSON type of a value as kube-openapi names it.
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
