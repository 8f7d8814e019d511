//! Validating the values a Cluster sets against its class's compiled definitions: required
//! variables set; each value unique, defined, naming its definition when definitions conflict,
//! matching the schema with no unknown field, and passing the schema's CEL rules.

use std::collections::{HashMap, HashSet};

use super::{keyed, repeated_error, CompiledVariables, Presence, RandomState, Variable};
use crate::api::ClusterVariable;
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::variables::cel::Shown;
use crate::variables::go_json::to_go_json;

impl CompiledVariables {
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
        let present = Presence::of(values);
        for variable in &self.variables {
            for definition in variable.definitions.iter().filter(|d| d.required) {
                if present.has(
                    &variable.name,
                    variable.conflict.then_some(definition.from.as_str()),
                ) {
                    continue;
                }
                let detail = if variable.conflict {
                    format!(
                        "required variable {:?} must be set for the definition from {:?}",
                        variable.name, definition.from
                    )
                } else {
                    format!("required variable {:?} must be set", variable.name)
                };
                errors.push(FieldError::required(path, detail));
                if !variable.conflict {
                    break;
                }
            }
        }
        errors.extend(self.validate_override_variables(values, old, path));
        errors
    }

    /// Validates values (of the Cluster or of an override list): unique, defined, `definitionFrom`
    /// naming a definition (required when definitions conflict), the schema, no unknown fields,
    /// and the CEL rules (transition rules against the same entry of `old`).
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
        // Per name seen so far: the definitionFroms it was set with, and whether with or without one.
        let mut earlier_sources: HashSet<(&str, &str), RandomState> =
            HashSet::with_capacity_and_hasher(values.len(), keyed());
        let mut earlier_kinds: HashMap<&str, (bool, bool), RandomState> =
            HashMap::with_capacity_and_hasher(values.len(), keyed());
        let mut old_by_source: HashMap<(&str, &str), &ClusterVariable, RandomState> =
            HashMap::with_hasher(keyed());
        for old in old.unwrap_or_default() {
            old_by_source
                .entry((old.name.as_str(), old.definition_from.as_str()))
                .or_insert(old);
        }
        for value in values {
            let value_path = path.key(&value.name);
            let from = value.definition_from.as_str();
            let repeated = !earlier_sources.insert((value.name.as_str(), from));
            let (with_from, without_from) = earlier_kinds.entry(value.name.as_str()).or_default();
            let mixed = if from.is_empty() {
                *with_from
            } else {
                *without_from
            };
            if from.is_empty() {
                *without_from = true;
            } else {
                *with_from = true;
            }
            if repeated {
                errors.push(repeated_error(value, path));
                continue;
            }
            if mixed {
                let detail = format!(
                    "variable {:?} is set both with and without definitionFrom",
                    value.name
                );
                errors.push(FieldError::invalid(
                    &value_path.child("definitionFrom"),
                    value.definition_from.as_str(),
                    detail,
                ));
                continue;
            }
            let old_value = old_by_source
                .get(&(value.name.as_str(), value.definition_from.as_str()))
                .copied();
            self.validate_value(value, old_value, &value_path, &mut errors);
        }
        errors
    }

    /// Validates one value of a Cluster against its definition: the variable and the definition
    /// exist, the schema compiles, the value matches it with no unknown field, and the schema's
    /// rules pass (`old_value`, the value it replaces, for the transition rules).
    fn validate_value(
        &self,
        value: &ClusterVariable,
        old_value: Option<&ClusterVariable>,
        value_path: &FieldPath,
        errors: &mut FieldErrors,
    ) {
        let raw = || to_go_json(&value.value);
        let Some(variable) = self.variable(&value.name) else {
            errors.push(FieldError::invalid(value_path, raw(), "variable is not defined"));
            return;
        };
        let Some(definition) = self.definition_for(value) else {
            errors.push(definition_from_error(variable, value, value_path));
            return;
        };
        let (schema, rules) = match &definition.compiled {
            Ok(compiled) => compiled,
            Err(reason) => {
                let detail = format!(
                    "the schema of variable {:?} does not compile; the ClusterClass should be checked: {reason}",
                    value.name
                );
                errors.push(FieldError::internal(value_path, detail));
                return;
            }
        };
        let before = errors.len();
        schema.validate(&value.value, &value_path.child("value"), &value.value, errors);
        if errors.len() > before {
            return;
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
            errors.push(FieldError::invalid(value_path, raw(), detail));
            return;
        }
        errors.extend(rules.validate(
            &value.value,
            old_value.map(|o| &o.value),
            &value_path.child("value"),
            Shown::Json,
        ));
    }
}

/// The error for a value whose `definitionFrom` is missing (definitions conflict) or names no definition.
fn definition_from_error(variable: &Variable, value: &ClusterVariable, path: &FieldPath) -> FieldError {
    let sources: Vec<String> = variable
        .definitions
        .iter()
        .map(|d| format!("{:?}", d.from))
        .collect();
    let path = path.child("definitionFrom");
    if value.definition_from.is_empty() {
        FieldError::required(
            &path,
            format!(
                "variable {:?} has conflicting definitions: set one value per definition, with \
                 definitionFrom set to one of {} (a cluster.x-k8s.io/v1beta1 field: write the \
                 Cluster through cluster.x-k8s.io/v1beta1)",
                variable.name,
                sources.join(", ")
            ),
        )
    } else {
        FieldError::invalid(
            &path,
            value.definition_from.as_str(),
            format!(
                "variable {:?} has no definition from it; definitions come from {}",
                variable.name,
                sources.join(", ")
            ),
        )
    }
}
