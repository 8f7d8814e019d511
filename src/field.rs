//! Field paths and field errors: the engine's one error vocabulary, rendered the way the
//! Kubernetes API server renders its own validation errors.

use std::fmt;

use serde_json::Value;

/// A path to a field of an object, e.g. `spec.topology.variables[cpu].value`.
///
/// Kept as the text the API server prints, so extending a path is one allocation and showing it
/// none; every builder returns a new path and leaves `self` alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath {
    text: String,
}

impl FieldPath {
    /// A path starting at the given top-level field (`FieldPath::new("spec")`).
    pub fn new(root: &str) -> Self {
        Self::root().child(root)
    }

    /// The empty path (the object itself).
    pub fn root() -> Self {
        Self::default()
    }

    /// Parses a dotted path such as `spec.topology.version` (no indexes or keys).
    pub fn parse_dotted(path: &str) -> Self {
        path.split('.')
            .filter(|s| !s.is_empty())
            .fold(Self::root(), |p, s| p.child(s))
    }

    /// This path followed by a struct field.
    pub fn child(&self, name: &str) -> Self {
        let separator = if self.text.is_empty() { "" } else { "." };
        self.with(&[separator, name])
    }

    /// This path followed by several struct fields (`p.children(&["a", "b"])` is `p.a.b`).
    pub fn children(&self, names: &[&str]) -> Self {
        let mut text =
            String::with_capacity(self.text.len() + names.iter().map(|n| n.len() + 1).sum::<usize>());
        text.push_str(&self.text);
        for name in names {
            if !text.is_empty() {
                text.push('.');
            }
            text.push_str(name);
        }
        Self { text }
    }

    /// This path followed by a list index.
    pub fn index(&self, index: usize) -> Self {
        self.with(&["[", &index.to_string(), "]"])
    }

    /// This path followed by a map key or a named list entry.
    pub fn key(&self, key: &str) -> Self {
        self.with(&["[", key, "]"])
    }

    /// True for the empty path.
    pub fn is_root(&self) -> bool {
        self.text.is_empty()
    }

    fn with(&self, parts: &[&str]) -> Self {
        let mut text = String::with_capacity(self.text.len() + parts.iter().map(|p| p.len()).sum::<usize>());
        text.push_str(&self.text);
        parts.iter().for_each(|part| text.push_str(part));
        Self { text }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The kind of a field error, as the API server names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// A required field is missing.
    Required,
    /// A value is malformed or fails a rule.
    Invalid,
    /// A value is not allowed in this context.
    Forbidden,
    /// A value repeats one that must be unique.
    Duplicate,
    /// A referenced thing does not exist.
    NotFound,
    /// A value is not one of the supported values.
    NotSupported,
    /// A value has the wrong JSON type.
    TypeInvalid,
    /// A value is too long.
    TooLong,
    /// A list has too many items.
    TooMany,
    /// Something failed that is not the user's fault.
    Internal,
}

impl ErrorType {
    /// The machine-readable cause type of a `Status` (`FieldValueInvalid`, ...).
    pub fn cause_type(self) -> &'static str {
        match self {
            Self::Required => "FieldValueRequired",
            Self::Invalid => "FieldValueInvalid",
            Self::Forbidden => "FieldValueForbidden",
            Self::Duplicate => "FieldValueDuplicate",
            Self::NotFound => "FieldValueNotFound",
            Self::NotSupported => "FieldValueNotSupported",
            Self::TypeInvalid => "FieldValueTypeInvalid",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::Internal => "InternalError",
        }
    }

    /// The human-readable phrase the API server prints (`Invalid value`, ...).
    pub fn phrase(self) -> &'static str {
        match self {
            Self::Required => "Required value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::Forbidden => "Forbidden",
            Self::Duplicate => "Duplicate value",
            Self::NotFound => "Not found",
            Self::NotSupported => "Unsupported value",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::Internal => "Internal error",
        }
    }

    /// Whether the API server prints the offending value for this kind of error.
    fn shows_value(self) -> bool {
        matches!(
            self,
            Self::Invalid
                | Self::TypeInvalid
                | Self::Duplicate
                | Self::NotFound
                | Self::NotSupported
                | Self::TooMany
        )
    }
}

/// One validation error on one field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// What went wrong.
    pub kind: ErrorType,
    /// Where.
    pub path: FieldPath,
    /// The offending value, for the kinds that show it.
    pub value: Option<Value>,
    /// The offending value already printed as Go prints the reference's typed value
    /// (`v1.LabelSelector{...}`): shown as it is, instead of `value`.
    pub shown: Option<String>,
    /// Why, in words.
    pub detail: String,
}

impl FieldError {
    /// An error of any kind; the other constructors are shorthands for this one.
    pub fn new(kind: ErrorType, path: &FieldPath, value: Option<Value>, detail: impl Into<String>) -> Self {
        Self {
            kind,
            path: path.clone(),
            value,
            shown: None,
            detail: detail.into(),
        }
    }

    /// A required field is missing.
    pub fn required(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Required, path, None, detail)
    }

    /// A value is malformed or fails a rule.
    pub fn invalid(path: &FieldPath, value: impl Into<Value>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Invalid, path, Some(value.into()), detail)
    }

    /// A value is malformed, shown as it is printed already (Go's `%#v` of a typed value, which
    /// the API server prints unquoted).
    pub fn invalid_shown(path: &FieldPath, shown: impl Into<String>, detail: impl Into<String>) -> Self {
        let mut error = Self::new(ErrorType::Invalid, path, None, detail);
        error.shown = Some(shown.into());
        error
    }

    /// A value is not allowed here.
    pub fn forbidden(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Forbidden, path, None, detail)
    }

    /// A value repeats one that must be unique.
    pub fn duplicate(path: &FieldPath, value: impl Into<Value>) -> Self {
        Self::new(ErrorType::Duplicate, path, Some(value.into()), "")
    }

    /// A referenced thing does not exist.
    pub fn not_found(path: &FieldPath, value: impl Into<Value>) -> Self {
        Self::new(ErrorType::NotFound, path, Some(value.into()), "")
    }

    /// A value is not one of `supported`.
    pub fn not_supported(path: &FieldPath, value: impl Into<Value>, supported: &[&str]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(ErrorType::NotSupported, path, Some(value.into()), detail)
    }

    /// A value is longer than `max` characters.
    pub fn too_long(path: &FieldPath, max: usize) -> Self {
        Self::new(
            ErrorType::TooLong,
            path,
            None,
            format!("may not be more than {max} bytes"),
        )
    }

    /// A list has more than `max` items.
    pub fn too_many(path: &FieldPath, actual: usize, max: usize) -> Self {
        Self::new(
            ErrorType::TooMany,
            path,
            Some(actual.into()),
            format!("must have at most {max} items"),
        )
    }

    /// Something failed that is not the user's fault.
    pub fn internal(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Internal, path, None, detail)
    }

    /// The error without its path, as a `Status` cause message carries it
    /// (`Invalid value: "1.x": must be a valid semantic version`).
    pub fn body(&self) -> String {
        let mut out = self.kind.phrase().to_owned();
        if self.kind.shows_value() {
            if let Some(shown) = &self.shown {
                out.push_str(": ");
                out.push_str(&truncate(shown.clone(), MAX_RENDERED_VALUE));
            } else if let Some(value) = &self.value {
                out.push_str(": ");
                out.push_str(&render_value(value));
            }
        }
        if !self.detail.is_empty() {
            out.push_str(": ");
            if self.detail.len() > MAX_RENDERED_DETAIL {
                out.push_str(&truncate(self.detail.clone(), MAX_RENDERED_DETAIL));
            } else {
                out.push_str(&self.detail);
            }
        }
        out
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_root() {
            f.write_str(&self.body())
        } else {
            write!(f, "{}: {}", self.path, self.body())
        }
    }
}

impl std::error::Error for FieldError {}

/// The longest rendering of an offending value echoed back; longer ones are cut, saying how
/// much was left out, so a huge input never comes back as a huge denial or log line.
pub const MAX_RENDERED_VALUE: usize = 1024;

/// The longest rendering of an error's detail; a detail quoting its input (a parser's message,
/// a list of every supported value) is cut past it.
pub const MAX_RENDERED_DETAIL: usize = 4096;

/// Renders a bad value as the API server does: strings quoted, scalars bare, the rest as JSON;
/// cut to [`MAX_RENDERED_VALUE`] bytes.
fn render_value(value: &Value) -> String {
    let rendered = match value {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".to_owned(),
        other => other.to_string(),
    };
    truncate(rendered, MAX_RENDERED_VALUE)
}

/// `text` cut to at most `max` bytes (on a character boundary), ending with how many bytes
/// were left out.
pub fn truncate(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    truncated(&text, max)
}

/// [`truncate`] of borrowed text: only what is kept is copied, so a huge text (an extension's
/// answer) is never duplicated to be cut.
pub fn truncated(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...({} more bytes)", &text[..cut], text.len() - cut)
}

/// A list of field errors; empty means valid.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldErrors(Vec<FieldError>);

impl FieldErrors {
    /// No errors.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one error.
    pub fn push(&mut self, error: FieldError) {
        self.0.push(error);
    }

    /// Adds all errors of `other`.
    pub fn extend(&mut self, other: impl IntoIterator<Item = FieldError>) {
        self.0.extend(other);
    }

    /// True when there is no error.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of errors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The errors, in the order they were found.
    pub fn iter(&self) -> std::slice::Iter<'_, FieldError> {
        self.0.iter()
    }

    /// `Ok(())` when empty, the errors otherwise.
    pub fn into_result(self) -> Result<(), FieldErrors> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }
}

impl From<FieldError> for FieldErrors {
    fn from(error: FieldError) -> Self {
        Self(vec![error])
    }
}

impl From<Vec<FieldError>> for FieldErrors {
    fn from(errors: Vec<FieldError>) -> Self {
        Self(errors)
    }
}

impl FromIterator<FieldError> for FieldErrors {
    fn from_iter<I: IntoIterator<Item = FieldError>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl IntoIterator for FieldErrors {
    type Item = FieldError;
    type IntoIter = std::vec::IntoIter<FieldError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a FieldErrors {
    type Item = &'a FieldError;
    type IntoIter = std::slice::Iter<'a, FieldError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for FieldErrors {
    /// Like the API server's aggregate: one message alone, several in `[a, b]`, repeats dropped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut seen = std::collections::HashSet::with_capacity(self.0.len());
        let messages: Vec<String> = self
            .0
            .iter()
            .map(ToString::to_string)
            .filter(|message| seen.insert(message.clone()))
            .collect();
        match messages.as_slice() {
            [] => Ok(()),
            [one] => f.write_str(one),
            many => write!(f, "[{}]", many.join(", ")),
        }
    }
}

impl std::error::Error for FieldErrors {}

#[cfg(test)]
#[path = "field_tests.rs"]
mod tests;
