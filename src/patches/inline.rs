//! Inline patches: a ClusterClass patch's definitions compiled once (templates parsed), then
//! applied to the templates of a topology in order.

use std::rc::Rc;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::pointer_ops::{field, Op, Pointer};
use super::selector::{matches, Role};
use super::template::{
    parse_yaml_output_owned, CommonBuiltin, ExecOptions, SharedData, Template, TemplateError,
};
use super::variable_path::{lookup, VariablePathError};
use crate::api::runtime::HolderReference;
use crate::api::{ClusterClassPatch, ClusterVariable, PatchSelector};

/// One template to patch, with the variables visible to it (Cluster values, overridden for the
/// control plane or its MachineDeployment, plus `builtin`).
#[derive(Debug, Clone, PartialEq)]
pub struct PatchItem {
    /// Where the template sits in the topology.
    pub role: Role,
    /// The object that will use the template, and its field that refers to it.
    pub holder: HolderReference,
    /// The template object (apiVersion, kind, metadata, spec).
    pub object: Value,
    /// The variables by name, `builtin` included; templates of one scope (a worker's bootstrap
    /// and infrastructure templates) share them.
    pub variables: Arc<Map<String, Value>>,
    /// The values its scope overrides (the control plane's or its worker's), as given: what
    /// external patches are sent beside the Cluster's values.
    pub overrides: Arc<[ClusterVariable]>,
}

/// What every patch reads of one item, computed once: its apiVersion and kind (for selectors) and
/// its variables converted for templates.
#[derive(Debug, Default)]
pub struct ItemCache {
    api_version: String,
    kind: String,
    data: Rc<SharedData>,
}

impl ItemCache {
    /// The caches of `items`; consecutive items sharing their variables share one template
    /// conversion of them (made on first use).
    pub fn of_items(items: &[PatchItem]) -> Vec<Self> {
        Self::caches(items, None)
    }

    /// [`of_items`](Self::of_items) for items whose variables all hold the same value at
    /// `builtin.<common>` (a topology's `builtin.cluster`): that value is converted once for all.
    pub fn of_items_sharing(items: &[PatchItem], common: &str) -> Vec<Self> {
        let member = |item: &PatchItem| item.variables.get("builtin").and_then(|b| b.get(common)).cloned();
        debug_assert!(
            items.windows(2).all(|pair| member(&pair[0]) == member(&pair[1])),
            "builtin.{common} differs between items"
        );
        Self::caches(items, Some(Rc::new(CommonBuiltin::new(common))))
    }

    fn caches(items: &[PatchItem], common: Option<Rc<CommonBuiltin>>) -> Vec<Self> {
        let mut caches: Vec<ItemCache> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let text = |key: &str| {
                field(&item.object, key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let previous = i
                .checked_sub(1)
                .and_then(|p| Some((items.get(p)?, caches.get(p)?)));
            let data = match previous {
                Some((before, cache)) if Arc::ptr_eq(&before.variables, &item.variables) => {
                    cache.data.clone()
                }
                _ => Rc::new(
                    common
                        .clone()
                        .map_or_else(SharedData::default, SharedData::with_common),
                ),
            };
            caches.push(ItemCache {
                api_version: text("apiVersion"),
                kind: text("kind"),
                data,
            });
        }
        caches
    }
}

/// Why a patch could not be compiled or applied; the message names the patch, definition and op.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PatchError {
    /// A template or enabledIf does not parse.
    #[error("patch {patch:?}{location}: {source}")]
    Template {
        /// The patch's name.
        patch: String,
        /// `, definition 0, op 1`, or `, enabledIf`.
        location: String,
        /// The template error.
        source: Box<TemplateError>,
    },
    /// A value could not be computed or applied.
    #[error("patch {patch:?}, definition {definition}, op {op}: {reason}")]
    Op {
        /// The patch's name.
        patch: String,
        /// The definition's index.
        definition: usize,
        /// The op's index.
        op: usize,
        /// What failed.
        reason: String,
    },
    /// The generated JSON patch does not apply to a template.
    #[error("patch {patch:?}: cannot apply to {kind} {name:?}: {reason}")]
    Apply {
        /// The patch's name.
        patch: String,
        /// The template's kind.
        kind: String,
        /// The template's name.
        name: String,
        /// The JSON patch error.
        reason: String,
    },
}

/// Where an op's value comes from.
#[derive(Debug, Clone)]
enum ValueSource {
    /// `remove` takes none.
    Nothing,
    /// `value`.
    Literal(Value),
    /// `valueFrom.variable`.
    Variable(String),
    /// `valueFrom.template`.
    Template(Template),
}

#[derive(Debug, Clone)]
struct CompiledOp {
    op: Op,
    pointer: Pointer,
    value: ValueSource,
}

#[derive(Debug, Clone)]
struct CompiledDefinition {
    selector: PatchSelector,
    ops: Vec<CompiledOp>,
}

/// A ClusterClass patch with its templates parsed, ready to apply many times.
#[derive(Debug, Clone)]
pub struct CompiledPatch {
    name: String,
    enabled_if: Option<Template>,
    definitions: Vec<CompiledDefinition>,
}

impl CompiledPatch {
    /// Parses the patch's `enabledIf` and value templates. External patches compile to no definitions.
    pub fn compile(patch: &ClusterClassPatch) -> Result<Self, PatchError> {
        let template_error = |location: String, source: TemplateError| PatchError::Template {
            patch: patch.name.clone(),
            location,
            source: Box::new(source),
        };
        let enabled_if = match patch.enabled_if.as_str() {
            "" => None,
            source => Some(Template::parse(source).map_err(|e| template_error(", enabledIf".into(), e))?),
        };
        let mut definitions = Vec::with_capacity(patch.definitions.len());
        for (d, definition) in patch.definitions.iter().enumerate() {
            let mut ops = Vec::with_capacity(definition.json_patches.len());
            for (o, json_patch) in definition.json_patches.iter().enumerate() {
                let op_error = |reason: &str| PatchError::Op {
                    patch: patch.name.clone(),
                    definition: d,
                    op: o,
                    reason: reason.to_owned(),
                };
                let value_from = json_patch.value_from.as_ref();
                let value = match (json_patch.op.as_str(), &json_patch.value, value_from) {
                    ("remove", _, _) => ValueSource::Nothing,
                    (_, Some(value), None) => ValueSource::Literal(value.clone()),
                    (_, None, Some(from)) => match (from.variable.as_str(), from.template.as_str()) {
                        (variable, "") if !variable.is_empty() => ValueSource::Variable(variable.to_owned()),
                        ("", source) if !source.is_empty() => ValueSource::Template(
                            Template::parse(source)
                                .map_err(|e| template_error(format!(", definition {d}, op {o}"), e))?,
                        ),
                        _ => {
                            return Err(op_error(
                                "valueFrom must set exactly one of variable and template",
                            ))
                        }
                    },
                    (_, Some(_), Some(_)) => {
                        return Err(op_error("only one of value and valueFrom may be set"))
                    }
                    (_, None, None) => return Err(op_error("one of value and valueFrom must be set")),
                };
                ops.push(CompiledOp {
                    op: Op::parse(&json_patch.op).map_err(|reason| op_error(&reason))?,
                    pointer: Pointer::parse(&json_patch.path).map_err(|reason| op_error(&reason))?,
                    value,
                });
            }
            definitions.push(CompiledDefinition {
                selector: definition.selector.clone(),
                ops,
            });
        }
        Ok(Self {
            name: patch.name.clone(),
            enabled_if,
            definitions,
        })
    }

    /// The patch's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Applies the patch to every item its selectors match and its `enabledIf` allows, in order.
    pub fn apply(&self, items: &mut [PatchItem], options: &ExecOptions) -> Result<(), PatchError> {
        self.apply_cached(items, &ItemCache::of_items(items), options)
    }

    /// [`apply`](Self::apply) with what every patch reads of each item computed once in `caches`
    /// (one per item, valid while the items' kinds and variables do not change).
    pub fn apply_cached(
        &self,
        items: &mut [PatchItem],
        caches: &[ItemCache],
        options: &ExecOptions,
    ) -> Result<(), PatchError> {
        for (item, cache) in items.iter_mut().zip(caches) {
            let shared = &cache.data;
            let kind = &cache.kind;
            let matched = || {
                self.definitions
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| matches(&d.selector, &cache.api_version, kind, &item.role))
            };
            if matched().next().is_none() || !self.is_enabled(&item.variables, shared, options)? {
                continue;
            }
            // Values come from the variables alone, so each op is applied as soon as it is known;
            // a failing op fails the whole plan, so the item needs no rollback.
            let mut applied = 0;
            for (d, definition) in matched() {
                for (o, op) in definition.ops.iter().enumerate() {
                    let value = self
                        .value_of(op, &item.variables, shared, options)
                        .map_err(|reason| PatchError::Op {
                            patch: self.name.clone(),
                            definition: d,
                            op: o,
                            reason,
                        })?;
                    let path = &op.pointer;
                    let outcome = path.apply(&mut item.object, op.op, value.unwrap_or(Value::Null));
                    outcome.map_err(|reason| PatchError::Apply {
                        patch: self.name.clone(),
                        kind: kind.clone(),
                        name: item.object["metadata"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        reason: format!(
                            "operation '/{applied}' failed at path '{}': {reason}",
                            path.as_str()
                        ),
                    })?;
                    applied += 1;
                }
            }
            if let Some(missing) = missing_spec(&item.object) {
                return Err(PatchError::Apply {
                    patch: self.name.clone(),
                    kind: kind.clone(),
                    name: item.object["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    reason: format!("missing field {missing:?}"),
                });
            }
        }
        Ok(())
    }

    /// `enabledIf` renders exactly `true` (as YAML) for the patch to apply; no enabledIf means enabled.
    fn is_enabled(
        &self,
        variables: &Map<String, Value>,
        shared: &SharedData,
        options: &ExecOptions,
    ) -> Result<bool, PatchError> {
        let Some(template) = &self.enabled_if else {
            return Ok(true);
        };
        let rendered = template
            .execute_shared(variables, shared, options)
            .and_then(parse_yaml_output_owned)
            .map_err(|source| PatchError::Template {
                patch: self.name.clone(),
                location: ", enabledIf".into(),
                source: Box::new(source),
            })?;
        Ok(rendered == Value::Bool(true))
    }

    fn value_of(
        &self,
        op: &CompiledOp,
        variables: &Map<String, Value>,
        shared: &SharedData,
        options: &ExecOptions,
    ) -> Result<Option<Value>, String> {
        match &op.value {
            ValueSource::Nothing => Ok(None),
            ValueSource::Literal(value) => Ok(Some(value.clone())),
            ValueSource::Variable(path) => lookup(variables, path)
                .map(Some)
                .map_err(|e: VariablePathError| format!("failed to calculate value: {e}")),
            ValueSource::Template(template) => template
                .execute_shared(variables, shared, options)
                .and_then(parse_yaml_output_owned)
                .map(Some)
                .map_err(|e| format!("failed to calculate value for template: {e}")),
        }
    }
}

/// The field a patched template must keep, if a patch removed it: its `spec` (the only part of a
/// patched template that is kept) and, below it, `spec.template.spec` (what objects are built from).
fn missing_spec(template: &Value) -> Option<&'static str> {
    let Some(spec) = field(template, "spec") else {
        return Some("spec");
    };
    let inner = field(spec, "template").and_then(|t| field(t, "spec"));
    inner.is_none().then_some("spec.template.spec")
}

#[cfg(test)]
#[path = "inline_tests.rs"]
mod tests;
