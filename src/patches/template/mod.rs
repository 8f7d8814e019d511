//! Go `text/template` with sprig's hermetic functions, as Cluster API renders patch templates
//! (`valueFrom.template`, `enabledIf`) and naming-strategy templates.
//!
//! Templates are parsed once into an immutable tree ([`Template`], `Send + Sync`) and executed
//! against JSON data with hard limits on steps, output size and nesting ([`ExecOptions`]).
//! [`parse_yaml_output`] types rendered text the way Cluster API does (YAML 1.1).

mod ast;
mod eval;
mod exec;
mod float;
mod format;
mod funcs;
mod lexer;
mod operands;
mod parser;
mod printf;
mod value;
mod version;
mod yaml11;

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

pub use yaml11::{parse_yaml_output, parse_yaml_output_owned};

/// Name Cluster API gives patch templates (it appears in error messages).
const PATCH_TEMPLATE_NAME: &str = "tpl";
/// Name Cluster API gives naming-strategy templates.
const NAME_TEMPLATE_NAME: &str = "template name generator";

/// A parsed template, reusable for many executions.
#[derive(Debug, Clone)]
pub struct Template {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    name: String,
    source: String,
    sprig: bool,
    /// Whether the source names a function that changes maps in place (sprig's `set`, `unset`,
    /// `merge`, `mergeOverwrite`): such a template gets data of its own.
    mutates_data: bool,
    main: ast::List,
    defines: BTreeMap<String, ast::List>,
}

/// Limits and options of one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOptions {
    /// `missingkey=error`: a missing map key fails instead of yielding `<no value>`.
    pub missing_key_error: bool,
    /// Largest output (and largest intermediate string) in bytes.
    pub max_output_bytes: usize,
    /// Most evaluation steps (nodes, commands, function calls, loop iterations).
    pub max_steps: u64,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            missing_key_error: false,
            max_output_bytes: 1 << 20,
            max_steps: 100_000,
        }
    }
}

/// Errors of parsing, executing or typing a template, worded like Go's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The template does not parse.
    #[error("template: {name}:{line}: {message}")]
    Parse {
        /// Template name.
        name: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Execution failed (including exceeded limits).
    #[error("template: {name}:{line}:{column}: executing {executing:?} at <{context}>: {message}")]
    Exec {
        /// Template name.
        name: String,
        /// 1-based line.
        line: usize,
        /// 0-based byte column, as Go reports it.
        column: usize,
        /// Name of the (possibly `define`d) template being executed.
        executing: String,
        /// The node being evaluated.
        context: String,
        /// What failed.
        message: String,
    },
    /// The rendered text is not valid YAML or has no JSON form.
    #[error("error converting YAML to JSON: {0}")]
    Yaml(String),
}

impl Template {
    /// Parses a patch template (text/template builtins plus sprig's hermetic functions).
    pub fn parse(source: &str) -> Result<Template, TemplateError> {
        Self::parse_named(source, PATCH_TEMPLATE_NAME, true)
    }

    /// Parses a naming-strategy template: text/template builtins only, no sprig functions.
    pub fn parse_builtins_only(source: &str) -> Result<Template, TemplateError> {
        Self::parse_named(source, NAME_TEMPLATE_NAME, false)
    }

    fn parse_named(source: &str, name: &str, sprig: bool) -> Result<Template, TemplateError> {
        let parse_error = |(pos, message): (usize, String)| TemplateError::Parse {
            name: name.to_string(),
            line: line_col(source, pos).0,
            message,
        };
        let tokens = lexer::lex(source).map_err(parse_error)?;
        let is_func = |f: &str| funcs::lookup(f, sprig).is_some();
        let parsed = parser::parse(&tokens, &is_func).map_err(parse_error)?;
        Ok(Template {
            inner: Arc::new(Inner {
                name: name.to_string(),
                source: source.to_string(),
                sprig,
                mutates_data: names_mutator(source),
                main: parsed.main,
                defines: parsed.defines,
            }),
        })
    }

    /// Renders the template with `data` as dot.
    pub fn execute(&self, data: &serde_json::Value, options: &ExecOptions) -> Result<String, TemplateError> {
        exec::execute(&self.inner, value::Value::from_json(data), options)
    }

    /// Renders the template with the variables `data` as dot, reusing `shared`'s conversion of
    /// them unless the template could change it.
    pub fn execute_shared(
        &self,
        data: &serde_json::Map<String, serde_json::Value>,
        shared: &SharedData,
        options: &ExecOptions,
    ) -> Result<String, TemplateError> {
        let dot = if self.inner.mutates_data {
            value::Value::from_json_map(data)
        } else {
            shared.data.get_or_init(|| shared.convert(data)).clone()
        };
        exec::execute(&self.inner, dot, options)
    }
}

/// One set of variables converted once for every template execution that only reads them (the
/// conversion is most of a short template's cost). Holds nothing until first used.
#[derive(Debug, Default)]
pub struct SharedData {
    data: OnceCell<Option<value::Value>>,
    /// A `builtin` member whose conversion is shared with other sets of variables.
    common: Option<Rc<CommonBuiltin>>,
}

impl SharedData {
    /// Data whose `builtin` member `common` names is converted once for every set sharing it.
    pub fn with_common(common: Rc<CommonBuiltin>) -> Self {
        SharedData {
            data: OnceCell::new(),
            common: Some(common),
        }
    }

    /// `data` converted (`None`: nested too deep), the common `builtin` member taken from (or
    /// left in) `common`; the same value and depth check as [`value::Value::from_json_map`].
    fn convert(&self, data: &serde_json::Map<String, serde_json::Value>) -> Option<value::Value> {
        let Some(common) = &self.common else {
            return value::Value::from_json_map(data);
        };
        let builtin = |members: &serde_json::Map<String, serde_json::Value>| {
            let converted = members.iter().map(|(name, member)| {
                let value = if *name == common.name {
                    common
                        .value
                        .get_or_init(|| value::Value::from_json_at(member, 2))
                        .clone()?
                } else {
                    value::Value::from_json_at(member, 2)?
                };
                Some((name.clone(), value))
            });
            Some(value::Value::new_map(converted.collect::<Option<_>>()?))
        };
        let converted = data.iter().map(|(name, variable)| {
            let value = match variable {
                serde_json::Value::Object(members) if name == "builtin" => builtin(members)?,
                other => value::Value::from_json_at(other, 1)?,
            };
            Some((name.clone(), value))
        });
        Some(value::Value::new_map(converted.collect::<Option<_>>()?))
    }
}

/// A member of `builtin` (the Cluster's) that holds the same value in several sets of variables
/// (every scope of one topology): converted for templates once, when first needed, for all.
#[derive(Debug)]
pub struct CommonBuiltin {
    name: String,
    value: OnceCell<Option<value::Value>>,
}

impl CommonBuiltin {
    /// The shared conversion of `builtin.<name>`.
    pub fn new(name: &str) -> Self {
        CommonBuiltin {
            name: name.to_owned(),
            value: OnceCell::new(),
        }
    }
}

/// Whether `source` names a function that changes a map in place.
fn names_mutator(source: &str) -> bool {
    const MUTATORS: [&str; 4] = ["set", "unset", "merge", "mergeOverwrite"];
    source
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| MUTATORS.contains(&word))
}

/// 1-based line and 0-based byte column of a byte offset.
fn line_col(source: &str, pos: usize) -> (usize, usize) {
    let before = source.get(..pos.min(source.len())).unwrap_or(source);
    let line = 1 + before.matches('\n').count();
    let column = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1);
    (line, column)
}

#[cfg(test)]
mod tests_core;
#[cfg(test)]
mod tests_limits;
#[cfg(test)]
mod tests_random;
#[cfg(test)]
mod tests_realworld;
#[cfg(test)]
mod tests_sprig;
#[cfg(test)]
mod tests_yaml;
