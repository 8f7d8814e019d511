//! A ClusterClass's variable definitions (its `status.variables`) compiled once, then used to
//! default and validate the values Clusters set, at the Cluster level and in overrides.
//! Maps keyed by variable names use foldhash with a random seed per map: cheaper than SipHash,
//! and still keyed, so names in a request cannot be chosen to collide.

use std::collections::{HashMap, HashSet};

use foldhash::fast::SeedableRandomState as RandomState;
use foldhash::SharedSeed;

use serde_json::Value;

use super::cel::{CelRules, Shown};
use super::defaulting::{apply_defaults, DefaultsPatch};
use super::go_json::to_go_json;
use super::schema::Schema;
use crate::api::{ClusterClassStatusVariable, ClusterVariable};
use crate::field::{ErrorType, FieldError, FieldErrors, FieldPath};

/// One variable with its definition, compiled.
#[derive(Debug, Clone)]
struct Variable {
    name: String,
    required: bool,
    /// The compiled schema and CEL rules, or why they do not compile.
    compiled: Result<(Schema, CelRules), String>,
}

/// Compiled variable definitions of a ClusterClass, reused by every request for the class.
#[derive(Debug, Clone, Default)]
pub struct CompiledVariables {
    variables: Vec<Variable>,
    /// Position of each variable in `variables`, by name (the first, should a name repeat).
    by_name: HashMap<String, usize, RandomState>,
    /// Why the definitions cannot be used at all (a variable without definitions, or with
    /// conflicting ones), as the value and detail of the error every use reports.
    unusable: Option<(String, String)>,
}

impl CompiledVariables {
    /// Compiles `definitions` (of each variable the first: a usable variable has no conflicting
    /// ones); never fails: a schema that does not compile is reported when a value needs it.
    pub fn compile(definitions: &[ClusterClassStatusVariable]) -> CompiledVariables {
        let variables = definitions
            .iter()
            .filter_map(|variable| {
                let definition = variable.definitions.first()?;
                let props = &definition.schema.open_api_v3_schema;
                let schema = Schema::compile(props).map_err(|e| e.message);
                let rules = CelRules::compile(props, &FieldPath::root()).map_err(|e| e.to_string());
                Some(Variable {
                    name: variable.name.clone(),
                    required: definition.required == Some(true),
                    compiled: schema.and_then(|s| rules.map(|r| (s, r))),
                })
            })
            .collect::<Vec<_>>();
        let mut by_name = HashMap::with_capacity_and_hasher(variables.len(), keyed());
        for (i, variable) in variables.iter().enumerate() {
            by_name.entry(variable.name.clone()).or_insert(i);
        }
        CompiledVariables {
            variables,
            by_name,
            unusable: unusable_definitions(definitions),
        }
    }

    /// The error every defaulting and validation of values reports when the definitions cannot
    /// be used: one `Invalid value` at the list's path naming every variable, as Cluster API
    /// reports it.
    fn unusable_error(&self, path: &FieldPath) -> Option<FieldErrors> {
        self.unusable.as_ref().map(|(shown, reason)| {
            let detail = format!("variable definitions in the ClusterClass not valid: {reason}");
            let error = FieldError::new(
                ErrorType::TypeInvalid,
                path,
                Some(Value::from(shown.as_str())),
                detail,
            );
            FieldErrors::from(error)
        })
    }

    /// The variable named `name`.
    fn variable(&self, name: &str) -> Option<&Variable> {
        self.by_name.get(name).map(|&i| &self.variables[i])
    }

    /// True when the class defines no variable.
    pub fn is_empty(&self) -> bool {
        self.variables.is_empty()
    }

    /// Cluster-level defaulting: existing entries keep their order and get nested defaults; then
    /// every absent variable with a top-level default is appended in the order of the class's
    /// status, which is by name as Cluster API writes it. Defaults `values` in place; `patch`,
    /// with its pointer at the list, records what changed (appended entries as adds at their
    /// index).
    pub fn default_cluster_variables(
        &self,
        values: Vec<ClusterVariable>,
        path: &FieldPath,
        mut patch: Option<&mut DefaultsPatch>,
    ) -> Result<Vec<ClusterVariable>, FieldErrors> {
        let mut defaulted = self.default_override_variables(values, path, patch.as_deref_mut())?;
        // Nested defaulting adds no entry: what `values` sets is what `defaulted` sets.
        let present: HashSet<String, RandomState> = {
            let mut names = HashSet::with_capacity_and_hasher(defaulted.len(), keyed());
            names.extend(defaulted.iter().map(|v| v.name.clone()));
            names
        };
        for variable in &self.variables {
            let Ok((schema, _)) = &variable.compiled else {
                continue;
            };
            let Some(default) = &schema.props.default else {
                continue;
            };
            if present.contains(&variable.name) {
                continue;
            }
            let mut value = default.clone();
            apply_defaults(schema, &mut value, None);
            let entry = ClusterVariable {
                name: variable.name.clone(),
                value,
            };
            if let Some(patch) = patch.as_deref_mut() {
                patch.pointer.push_back(defaulted.len());
                patch.add(serde_json::to_value(&entry).unwrap_or(Value::Null));
                patch.pointer.pop_back();
            }
            defaulted.push(entry);
        }
        Ok(defaulted)
    }

    /// Override lists: nested defaults of the entries given, in place; never new entries. `patch`,
    /// with its pointer at the list, records what changed.
    pub fn default_override_variables(
        &self,
        mut values: Vec<ClusterVariable>,
        path: &FieldPath,
        mut patch: Option<&mut DefaultsPatch>,
    ) -> Result<Vec<ClusterVariable>, FieldErrors> {
        if let Some(unusable) = self.unusable_error(path) {
            return Err(unusable);
        }
        // A list setting a variable twice is not defaulted, as Cluster API's defaulting refuses it.
        let mut seen: HashSet<&str, RandomState> = HashSet::with_capacity_and_hasher(values.len(), keyed());
        let repeated: FieldErrors = values
            .iter()
            .filter(|value| !seen.insert(value.name.as_str()))
            .map(|value| repeated_error(value, path))
            .collect();
        if !repeated.is_empty() {
            return Err(repeated);
        }
        for (index, value) in values.iter_mut().enumerate() {
            if let Some(Ok((schema, _))) = self.variable(&value.name).map(|d| &d.compiled) {
                match patch.as_deref_mut() {
                    Some(patch) => {
                        patch.pointer.push_back(index);
                        patch.pointer.push_back("value");
                        apply_defaults(schema, &mut value.value, Some(&mut *patch));
                        patch.pointer.pop_back();
                        patch.pointer.pop_back();
                    }
                    None => apply_defaults(schema, &mut value.value, None),
                }
            }
        }
        Ok(values)
    }

    /// Validates Cluster-level values: required variables set, then each value as
    /// [`CompiledVariables::validate_override_variables`] does.
    pub fn validate_cluster_variables(
        &self,
        values: &[ClusterVariable],
        old: Option<&[ClusterVariable]>,
        path: &FieldPath,
    ) -> FieldErrors {
        if let Some(unusable) = self.unusable_error(path) {
            return unusable;
        }
        let mut errors = FieldErrors::new();
        for variable in self.variables.iter().filter(|v| v.required) {
            if !values.iter().any(|value| value.name == variable.name) {
                let detail = format!("required variable {:?} must be set", variable.name);
                errors.push(FieldError::required(path, detail));
            }
        }
        errors.extend(self.validate_override_variables(values, old, path));
        errors
    }

    /// Validates values (of the Cluster or of an override list): unique, defined, the schema, no
    /// unknown fields, and the CEL rules (transition rules against the same entry of `old`).
    pub fn validate_override_variables(
        &self,
        values: &[ClusterVariable],
        old: Option<&[ClusterVariable]>,
        path: &FieldPath,
    ) -> FieldErrors {
        if let Some(unusable) = self.unusable_error(path) {
            return unusable;
        }
        let mut errors = FieldErrors::new();
        let mut earlier: HashSet<&str, RandomState> =
            HashSet::with_capacity_and_hasher(values.len(), keyed());
        let mut old_by_name: HashMap<&str, &ClusterVariable, RandomState> = HashMap::with_hasher(keyed());
        for old in old.unwrap_or_default() {
            old_by_name.entry(old.name.as_str()).or_insert(old);
        }
        for value in values {
            let value_path = path.key(&value.name);
            let raw = || to_go_json(&value.value);
            if !earlier.insert(value.name.as_str()) {
                errors.push(repeated_error(value, path));
                continue;
            }
            let Some(variable) = self.variable(&value.name) else {
                errors.push(FieldError::invalid(&value_path, raw(), "variable is not defined"));
                continue;
            };
            let (schema, rules) = match &variable.compiled {
                Ok(compiled) => compiled,
                Err(reason) => {
                    let detail = format!(
                        "the schema of variable {:?} does not compile; the ClusterClass should be checked: {reason}",
                        value.name
                    );
                    errors.push(FieldError::internal(&value_path, detail));
                    continue;
                }
            };
            let before = errors.len();
            schema.validate(
                &value.value,
                &value_path.child("value"),
                &value.value,
                &mut errors,
            );
            if errors.len() > before {
                continue;
            }
            let mut unknown = Vec::new();
            // Cluster API prunes the value wrapped as `variableValue` and strips `variableValue.`
            // from the paths: the paths in a list value keep the whole prefix.
            let prefix = if value.value.is_array() {
                "variableValue"
            } else {
                ""
            };
            schema.unknown_fields(&value.value, prefix, &mut unknown);
            if !unknown.is_empty() {
                let detail = format!(
                    "failed validation: {:?} field(s) are not specified in the variable schema of variable {:?}",
                    unknown.join(","),
                    value.name
                );
                errors.push(FieldError::invalid(&value_path, raw(), detail));
                continue;
            }
            let old_value = old_by_name.get(value.name.as_str()).copied();
            errors.extend(rules.validate(
                &value.value,
                old_value.map(|o| &o.value),
                &value_path.child("value"),
                Shown::Json,
            ));
        }
        errors
    }
}

/// A foldhash state for one map, its seed drawn from std's `RandomState` (keys from the OS, a
/// new one per call), so a request cannot pick names that collide.
fn keyed() -> RandomState {
    use std::hash::BuildHasher;
    let seed = std::hash::RandomState::new().hash_one(0u8);
    RandomState::with_seed(seed, SharedSeed::global_random())
}

/// The error for a value set again (same name) in one list.
fn repeated_error(value: &ClusterVariable, path: &FieldPath) -> FieldError {
    let detail = format!("variable {:?} is set more than once", value.name);
    FieldError::invalid(&path.key(&value.name), to_go_json(&value.value), detail)
}

/// Why a class's status variables cannot be used, if some variable has no definitions or
/// conflicting ones: every variable's name as Cluster API shows the list (`[Name: a,Name: b]`),
/// and the reasons (one alone, several in brackets). Cluster API v1.14 has no `definitionFrom`
/// to pick one of conflicting definitions, so they make the class unusable.
fn unusable_definitions(definitions: &[ClusterClassStatusVariable]) -> Option<(String, String)> {
    let mut reasons = Vec::new();
    for variable in definitions {
        if variable.definitions.is_empty() {
            reasons.push(format!("variable {:?} has no definitions", variable.name));
        }
        if variable.has_conflict() {
            reasons.push(format!(
                "variable {:?} has conflicting definitions",
                variable.name
            ));
        }
    }
    let reason = match reasons.as_slice() {
        [] => return None,
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let names: Vec<String> = definitions.iter().map(|d| format!("Name: {}", d.name)).collect();
    Some((format!("[{}]", names.join(",")), reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    const STATUS: &str = r#"
- name: region
  definitions: [{from: inline, required: true, schema: {openAPIV3Schema: {type: string, default: eu}}}]
- name: etcd
  definitions: [{from: inline, required: false, schema: {openAPIV3Schema: {type: object, default: {},
    properties: {tag: {type: string, default: "3.5"}, dir: {type: string}},
    x-kubernetes-validations: [{rule: "!has(self.dir) || self.dir.startsWith('/')", message: dir must be absolute}]}}}]
- name: size
  definitions: [{from: inline, required: false, schema: {openAPIV3Schema: {type: integer,
    x-kubernetes-validations: [{rule: self >= oldSelf, message: may not shrink}]}}}]
- name: proxy
  definitions:
  - {from: lb, required: false, schema: {openAPIV3Schema: {type: object, properties: {host: {type: string}}}}}
"#;

    fn compiled() -> CompiledVariables {
        CompiledVariables::compile(
            &serde_yaml_ng::from_str::<Vec<ClusterClassStatusVariable>>(STATUS).unwrap(),
        )
    }

    fn values(yaml: &str) -> Vec<ClusterVariable> {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    fn path() -> FieldPath {
        FieldPath::new("spec").children(&["topology", "variables"])
    }

    fn messages(errors: FieldErrors) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn defaults_keep_order_fill_nested_and_append_in_class_order() {
        let defaulted = compiled()
            .default_cluster_variables(
                values("[{name: etcd, value: {dir: /d}}, {name: size, value: 3}]"),
                &path(),
                None,
            )
            .unwrap();
        let got: Vec<(String, Value)> = defaulted.into_iter().map(|v| (v.name, v.value)).collect();
        assert_eq!(
            got,
            [
                ("etcd".into(), json!({"dir": "/d", "tag": "3.5"})),
                ("size".into(), json!(3)),
                ("region".into(), json!("eu")),
            ]
        );
    }

    #[test]
    fn variables_without_definitions_make_every_list_invalid() {
        let status = "[{name: a, definitions: []}, {name: b, definitions: []},
                       {name: c, definitions: [{from: inline, required: false, schema: {openAPIV3Schema: {type: string}}}]}]";
        let compiled = CompiledVariables::compile(&serde_yaml_ng::from_str::<Vec<_>>(status).unwrap());
        let expected = r#"spec.topology.variables: Invalid value: "[Name: a,Name: b,Name: c]": variable definitions in the ClusterClass not valid: [variable "a" has no definitions, variable "b" has no definitions]"#;
        let defaulted = compiled.default_cluster_variables(values("[{name: c, value: x}]"), &path(), None);
        assert_eq!(messages(defaulted.unwrap_err()), [expected]);
        assert_eq!(
            messages(compiled.validate_cluster_variables(&values("[]"), None, &path())),
            [expected]
        );
        let overrides =
            FieldPath::new("spec").children(&["topology", "controlPlane", "variables", "overrides"]);
        let errors = compiled.validate_override_variables(&values("[{name: c, value: x}]"), None, &overrides);
        assert_eq!(
            errors.iter().next().map(|e| e.kind.cause_type()),
            Some("FieldValueTypeInvalid")
        );
        let one = CompiledVariables::compile(
            &serde_yaml_ng::from_str::<Vec<_>>("[{name: a, definitions: []}]").unwrap(),
        );
        assert_eq!(
            messages(one.validate_cluster_variables(&[], None, &path())),
            [
                r#"spec.topology.variables: Invalid value: "[Name: a]": variable definitions in the ClusterClass not valid: variable "a" has no definitions"#
            ]
        );
    }

    #[test]
    fn overrides_get_nested_defaults_but_no_new_entries() {
        let defaulted = compiled()
            .default_override_variables(values("[{name: etcd, value: {}}]"), &path(), None)
            .unwrap();
        assert_eq!(defaulted.len(), 1);
        assert_eq!(defaulted[0].value, json!({"tag": "3.5"}));
    }

    #[test]
    fn required_and_undefined_values() {
        let errors = compiled().validate_cluster_variables(
            &values("[{name: nope, value: 1}, {name: size, value: 1}]"),
            None,
            &path(),
        );
        assert_eq!(
            messages(errors),
            [
                r#"spec.topology.variables: Required value: required variable "region" must be set"#,
                r#"spec.topology.variables[nope]: Invalid value: "1": variable is not defined"#,
            ]
        );
    }

    /// Cluster API v1.14 has no `definitionFrom`: conflicting definitions make the class's
    /// variables unusable (v1.10 let values pick one).
    #[test]
    fn conflicting_definitions_make_every_list_invalid() {
        let status = "[{name: a, definitions: [{from: inline, schema: {openAPIV3Schema: {type: string}}}]},
                       {name: proxy, definitionsConflict: true, definitions: [
                         {from: inline, schema: {openAPIV3Schema: {type: string}}},
                         {from: lb, schema: {openAPIV3Schema: {type: object}}}]}]";
        let compiled = CompiledVariables::compile(&serde_yaml_ng::from_str::<Vec<_>>(status).unwrap());
        assert_eq!(
            messages(compiled.validate_cluster_variables(&values("[{name: a, value: x}]"), None, &path())),
            [
                r#"spec.topology.variables: Invalid value: "[Name: a,Name: proxy]": variable definitions in the ClusterClass not valid: variable "proxy" has conflicting definitions"#
            ]
        );
    }

    #[test]
    fn schema_unknown_fields_and_cel_with_old_values() {
        let vars = values(
            "[{name: region, value: eu}, {name: proxy, value: {host: h, port: 1}},
              {name: etcd, value: {dir: rel}}, {name: size, value: 2}]",
        );
        let old = values("[{name: size, value: 5}]");
        assert_eq!(
            messages(compiled().validate_cluster_variables(&vars, Some(&old), &path())),
            [
                r#"spec.topology.variables[proxy]: Invalid value: "{\"host\":\"h\",\"port\":1}": failed validation: "port" field(s) are not specified in the variable schema of variable "proxy""#,
                r#"spec.topology.variables[etcd].value: Invalid value: "{\"dir\":\"rel\"}": dir must be absolute"#,
                r#"spec.topology.variables[size].value: Invalid value: "2": may not shrink"#,
            ]
        );
    }

    #[test]
    fn repeated_entries() {
        let errors = compiled().validate_override_variables(
            &values("[{name: size, value: 1}, {name: size, value: 2}, {name: proxy, value: {}}, {name: proxy, value: {}}]"),
            None,
            &path(),
        );
        assert_eq!(
            messages(errors),
            [
                r#"spec.topology.variables[size]: Invalid value: "2": variable "size" is set more than once"#,
                r#"spec.topology.variables[proxy]: Invalid value: "{}": variable "proxy" is set more than once"#,
            ]
        );
    }

    #[test]
    fn a_list_setting_a_variable_twice_is_not_defaulted() {
        let twice = values("[{name: size, value: 1}, {name: size, value: 2}, {name: size, value: 3}]");
        let errors = compiled()
            .default_cluster_variables(twice, &path(), None)
            .unwrap_err();
        assert_eq!(
            messages(errors),
            [
                r#"spec.topology.variables[size]: Invalid value: "2": variable "size" is set more than once"#,
                r#"spec.topology.variables[size]: Invalid value: "3": variable "size" is set more than once"#,
            ]
        );
    }

    #[test]
    fn null_values_take_the_top_level_default() {
        let defaulted = compiled()
            .default_override_variables(
                values("[{name: region, value: null}, {name: etcd, value: null}]"),
                &path(),
                None,
            )
            .unwrap();
        let got: Vec<Value> = defaulted.into_iter().map(|v| v.value).collect();
        assert_eq!(got, [json!("eu"), json!({"tag": "3.5"})]);
    }
}
