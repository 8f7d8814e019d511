//! Inline patches: a ClusterClass patch's definitions compiled once (templates parsed), then
//! applied to the templates of a topology in order.

use json_patch::{AddOperation, PatchOperation, RemoveOperation, ReplaceOperation};
use serde_json::{Map, Value};

use super::selector::{matches, Role};
use super::template::{parse_yaml_output, ExecOptions, SharedData, Template, TemplateError};
use super::variable_path::{lookup, VariablePathError};
use crate::api::{ClusterClassPatch, PatchSelector};

/// One template to patch, with the variables visible to it (Cluster values, overridden for the
/// control plane or its MachineDeployment, plus `builtin`).
#[derive(Debug, Clone, PartialEq)]
pub struct PatchItem {
    /// Where the template sits in the topology.
    pub role: Role,
    /// The template object (apiVersion, kind, metadata, spec).
    pub object: Value,
    /// The variables by name, `builtin` included.
    pub variables: Map<String, Value>,
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
    op: String,
    path: String,
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
        let enabled_if = match &patch.enabled_if {
            Some(source) => {
                Some(Template::parse(source).map_err(|e| template_error(", enabledIf".into(), e))?)
            }
            None => None,
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
                    (_, None, Some(from)) => match (&from.variable, &from.template) {
                        (Some(variable), None) => ValueSource::Variable(variable.clone()),
                        (None, Some(source)) => ValueSource::Template(
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
                    op: json_patch.op.clone(),
                    path: json_patch.path.clone(),
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
        let shared: Vec<SharedData> = items.iter().map(|_| SharedData::default()).collect();
        self.apply_shared(items, &shared, options)
    }

    /// [`apply`](Self::apply), with each item's variables converted for templates once in
    /// `shared` (one per item, kept across patches while the variables do not change).
    pub fn apply_shared(
        &self,
        items: &mut [PatchItem],
        shared: &[SharedData],
        options: &ExecOptions,
    ) -> Result<(), PatchError> {
        for (item, shared) in items.iter_mut().zip(shared) {
            let (matched, kind): (Vec<(usize, &CompiledDefinition)>, String) = {
                let api_version = item.object["apiVersion"].as_str().unwrap_or_default();
                let kind = item.object["kind"].as_str().unwrap_or_default();
                let matched = self
                    .definitions
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| matches(&d.selector, api_version, kind, &item.role))
                    .collect();
                (matched, kind.to_owned())
            };
            if matched.is_empty() || !self.is_enabled(&item.variables, shared, options)? {
                continue;
            }
            let mut operations = Vec::new();
            for (d, definition) in matched {
                for (o, op) in definition.ops.iter().enumerate() {
                    let value = self
                        .value_of(op, &item.variables, shared, options)
                        .map_err(|reason| PatchError::Op {
                            patch: self.name.clone(),
                            definition: d,
                            op: o,
                            reason,
                        })?;
                    operations.push(operation(op, value).map_err(|reason| PatchError::Op {
                        patch: self.name.clone(),
                        definition: d,
                        op: o,
                        reason,
                    })?);
                }
            }
            // A failing patch fails the whole plan, so the item needs no rollback.
            json_patch::patch_unsafe(&mut item.object, &operations).map_err(|err| PatchError::Apply {
                patch: self.name.clone(),
                kind: kind.clone(),
                name: item
                    .object
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                reason: err.to_string(),
            })?;
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
            .and_then(|text| parse_yaml_output(&text))
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
                .and_then(|text| parse_yaml_output(&text))
                .map(Some)
                .map_err(|e| format!("failed to calculate value for template: {e}")),
        }
    }
}

/// The JSON patch operation for `op` with its computed value.
fn operation(op: &CompiledOp, value: Option<Value>) -> Result<PatchOperation, String> {
    let path = json_patch::jsonptr::PointerBuf::parse(op.path.as_str())
        .map_err(|e| format!("invalid path {:?}: {e}", op.path))?;
    let value = value.unwrap_or(Value::Null);
    match op.op.as_str() {
        "add" => Ok(PatchOperation::Add(AddOperation { path, value })),
        "replace" => Ok(PatchOperation::Replace(ReplaceOperation { path, value })),
        "remove" => Ok(PatchOperation::Remove(RemoveOperation { path })),
        other => Err(format!(
            "unsupported op {other:?}: must be one of add, replace, remove"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(yaml: &str) -> CompiledPatch {
        CompiledPatch::compile(&serde_yaml_ng::from_str(yaml).unwrap()).unwrap()
    }

    fn item(role: Role, variables: Value) -> PatchItem {
        PatchItem {
            role,
            object: json!({"apiVersion": "infra/v1", "kind": "MachineTemplate", "metadata": {"name": "t"},
                           "spec": {"template": {"spec": {"list": ["a"]}}}}),
            variables: variables.as_object().cloned().unwrap(),
        }
    }

    const PATCH: &str = r#"
name: image
enabledIf: '{{ if .enabled }}true{{ end }}'
definitions:
- selector: {apiVersion: infra/v1, kind: MachineTemplate, matchResources: {machineDeploymentClass: {names: ["*-worker"]}}}
  jsonPatches:
  - {op: add, path: /spec/template/spec/image, valueFrom: {template: 'node:{{ .builtin.machineDeployment.version | replace "+" "_" }}'}}
  - {op: add, path: /spec/template/spec/size, valueFrom: {variable: sizes.large}}
  - {op: add, path: /spec/template/spec/list/0, value: first}
  - {op: replace, path: /spec/template/spec/port, valueFrom: {template: '8080'}}
"#;

    #[test]
    fn a_template_changing_its_data_does_not_change_what_later_patches_see() {
        let setter = patch(
            r#"
name: setter
definitions:
- selector: {apiVersion: infra/v1, kind: MachineTemplate, matchResources: {machineDeploymentClass: {names: [w]}}}
  jsonPatches:
  - {op: add, path: /spec/template/spec/a, valueFrom: {template: '{{ $_ := set .sizes "large" 99 }}{{ .sizes.large }}'}}
"#,
        );
        let reader = patch(
            r#"
name: reader
definitions:
- selector: {apiVersion: infra/v1, kind: MachineTemplate, matchResources: {machineDeploymentClass: {names: [w]}}}
  jsonPatches:
  - {op: add, path: /spec/template/spec/b, valueFrom: {template: '{{ .sizes.large }}'}}
"#,
        );
        let role = Role::MachineDeployment { class: "w".into() };
        let mut items = vec![item(role, json!({"sizes": {"large": 8}}))];
        let shared = [SharedData::default()];
        let options = ExecOptions::default();
        reader.apply_shared(&mut items, &shared, &options).unwrap();
        setter.apply_shared(&mut items, &shared, &options).unwrap();
        reader.apply_shared(&mut items, &shared, &options).unwrap();
        let spec = &items[0].object["spec"]["template"]["spec"];
        assert_eq!((&spec["a"], &spec["b"]), (&json!(99), &json!(8)));
    }

    #[test]
    fn applies_matching_enabled_items_only() {
        let vars = json!({"enabled": true, "sizes": {"large": 8},
                          "builtin": {"machineDeployment": {"version": "v1.31.0+k3s1"}}});
        let mut items = vec![
            item(
                Role::MachineDeployment {
                    class: "default-worker".into(),
                },
                vars.clone(),
            ),
            item(Role::MachineDeployment { class: "gpu".into() }, vars.clone()),
            item(
                Role::MachineDeployment {
                    class: "big-worker".into(),
                },
                json!({"enabled": false}),
            ),
        ];
        items[0].object["spec"]["template"]["spec"]["port"] = json!(1);
        patch(PATCH).apply(&mut items, &ExecOptions::default()).unwrap();
        assert_eq!(
            items[0].object["spec"]["template"]["spec"],
            json!({"list": ["first", "a"], "image": "node:v1.31.0_k3s1", "size": 8, "port": 8080})
        );
        assert_eq!(
            items[1].object["spec"]["template"]["spec"],
            json!({"list": ["a"]}),
            "class does not match"
        );
        assert_eq!(
            items[2].object["spec"]["template"]["spec"],
            json!({"list": ["a"]}),
            "enabledIf is false"
        );
    }

    #[test]
    fn errors_name_the_patch_definition_and_op() {
        let vars = json!({"enabled": true, "sizes": {}, "builtin": {"machineDeployment": {"version": "v1"}}});
        let mut items = vec![item(
            Role::MachineDeployment {
                class: "a-worker".into(),
            },
            vars,
        )];
        let err = patch(PATCH)
            .apply(&mut items, &ExecOptions::default())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"patch "image", definition 0, op 1: failed to calculate value: variable "sizes.large" not found"#
        );
    }

    #[test]
    fn replace_of_a_missing_field_fails_naming_the_template() {
        let vars = json!({"enabled": true, "sizes": {"large": 1}, "builtin": {"machineDeployment": {"version": "v1"}}});
        let mut items = vec![item(
            Role::MachineDeployment {
                class: "a-worker".into(),
            },
            vars,
        )];
        let err = patch(PATCH)
            .apply(&mut items, &ExecOptions::default())
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with(r#"patch "image": cannot apply to MachineTemplate "t": "#),
            "{err}"
        );
    }

    #[test]
    fn value_and_value_from_together_do_not_compile() {
        let err = CompiledPatch::compile(
            &serde_yaml_ng::from_str(
                "name: p\ndefinitions:\n- selector: {apiVersion: a/v1, kind: T}\n  jsonPatches:\n  \
                 - {op: add, path: /spec/x, value: 1, valueFrom: {variable: v}}\n",
            )
            .unwrap(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"patch "p", definition 0, op 0: only one of value and valueFrom may be set"#
        );
    }
}
