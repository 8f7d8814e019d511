//! A ClusterClass's variable definitions (its `status.variables`) compiled once, then used to
//! default and validate the values Clusters set, at the Cluster level and in overrides.
//! Maps keyed by variable names use foldhash with a random seed per map: cheaper than SipHash,
//! and still keyed, so names in a request cannot be chosen to collide.

use std::collections::{HashMap, HashSet};

use foldhash::fast::SeedableRandomState as RandomState;
use foldhash::SharedSeed;

use serde_json::Value;

use super::cel::CelRules;
use super::defaulting::{apply_defaults, Below, DefaultsPatch};
use super::go_json::to_go_json;
use super::schema::Schema;
use crate::api::{ClusterClassStatusVariable, ClusterVariable};
use crate::field::{ErrorType, FieldError, FieldErrors, FieldPath};

mod validation;

/// One definition, compiled.
#[derive(Debug, Clone)]
struct Definition {
    from: String,
    required: bool,
    /// The compiled schema and CEL rules, or why they do not compile.
    compiled: Result<(Schema, CelRules), String>,
}

/// One variable with all its definitions.
#[derive(Debug, Clone)]
struct Variable {
    name: String,
    conflict: bool,
    definitions: Vec<Definition>,
}

/// Compiled variable definitions of a ClusterClass, reused by every request for the class.
#[derive(Debug, Clone, Default)]
pub struct CompiledVariables {
    variables: Vec<Variable>,
    /// Position of each variable in `variables`, by name (the first, should a name repeat).
    by_name: HashMap<String, usize, RandomState>,
    /// Why the definitions cannot be used at all (a variable without definitions), as the value
    /// and detail of the error every use reports.
    unusable: Option<(String, String)>,
}

impl CompiledVariables {
    /// Compiles `definitions`; never fails: a schema that does not compile is reported when a
    /// value needs it.
    pub fn compile(definitions: &[ClusterClassStatusVariable]) -> CompiledVariables {
        let variables = definitions
            .iter()
            .map(|variable| Variable {
                name: variable.name.clone(),
                conflict: variable.has_conflict(),
                definitions: variable
                    .definitions
                    .iter()
                    .map(|definition| {
                        let props = &definition.schema.open_api_v3_schema;
                        let schema = Schema::compile(props).map_err(|e| e.message);
                        let rules = CelRules::compile(props, &FieldPath::root()).map_err(|e| e.to_string());
                        Definition {
                            from: definition.from.clone(),
                            required: definition.required == Some(true),
                            compiled: schema.and_then(|s| rules.map(|r| (s, r))),
                        }
                    })
                    .collect(),
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

    /// True when some variable has conflicting definitions (values pick one with
    /// `definitionFrom`, seed 003).
    pub fn has_conflicts(&self) -> bool {
        self.variables.iter().any(|variable| variable.conflict)
    }

    /// True when the class defines no variable.
    pub fn is_empty(&self) -> bool {
        self.variables.is_empty()
    }

    /// Cluster-level defaulting: existing entries keep their order and get nested defaults; then
    /// every absent variable with a top-level default is appended in the order of the class's
    /// status, which is by name as Cluster API writes it (one entry per definition, with
    /// `definitionFrom`, when the definitions conflict). Defaults `values` in place; `patch`, with
    /// its pointer at the list, records what changed (appended entries as adds at their index).
    pub fn default_cluster_variables(
        &self,
        values: Vec<ClusterVariable>,
        path: &FieldPath,
        mut patch: Option<&mut DefaultsPatch>,
    ) -> Result<Vec<ClusterVariable>, FieldErrors> {
        let mut defaulted = self.default_override_variables(values, path, patch.as_deref_mut())?;
        let mut appended = Vec::new();
        // Nested defaulting adds no entry: what `values` sets is what `defaulted` sets.
        let mut present = Presence::of(&defaulted);
        for variable in &self.variables {
            for definition in &variable.definitions {
                let from = if variable.conflict {
                    definition.from.as_str()
                } else {
                    ""
                };
                // A value without definitionFrom for conflicting definitions is refused by
                // validation; it is not defaulted around.
                let is_set = present.has(
                    &variable.name,
                    variable.conflict.then_some(definition.from.as_str()),
                ) || (variable.conflict && present.has(&variable.name, Some("")));
                let Ok((schema, _)) = &definition.compiled else {
                    continue;
                };
                if let (false, Some(default)) = (is_set, &schema.props.default) {
                    let mut value = default.clone();
                    apply_defaults(schema, &mut value, None, &Below::Here);
                    present.add(&variable.name, from);
                    let entry = ClusterVariable {
                        name: variable.name.clone(),
                        definition_from: from.to_owned(),
                        value,
                    };
                    if let Some(patch) = patch.as_deref_mut() {
                        let index = defaulted.len() + appended.len();
                        patch.add(&Below::Index(&Below::Here, index), hub_entry(&entry));
                    }
                    appended.push(entry);
                }
                if !variable.conflict {
                    break;
                }
            }
        }
        defaulted.append(&mut appended);
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
        let mut seen: HashSet<(&str, &str), RandomState> =
            HashSet::with_capacity_and_hasher(values.len(), keyed());
        let repeated: FieldErrors = values
            .iter()
            .filter(|value| !seen.insert((value.name.as_str(), value.definition_from.as_str())))
            .map(|value| repeated_error(value, path))
            .collect();
        if !repeated.is_empty() {
            return Err(repeated);
        }
        for (index, value) in values.iter_mut().enumerate() {
            if let Some(Ok((schema, _))) = self.definition_for(value).map(|d| &d.compiled) {
                let entry = Below::Index(&Below::Here, index);
                let at = Below::Key(&entry, "value");
                apply_defaults(schema, &mut value.value, patch.as_deref_mut(), &at);
            }
        }
        Ok(values)
    }

    /// The definition a value is for: the one its `definitionFrom` names, or, when it names none,
    /// the first definition of a variable whose definitions do not conflict.
    fn definition_for(&self, value: &ClusterVariable) -> Option<&Definition> {
        let variable = self.variable(&value.name)?;
        if value.definition_from.is_empty() {
            return if variable.conflict {
                None
            } else {
                variable.definitions.first()
            };
        }
        variable
            .definitions
            .iter()
            .find(|d| d.from == value.definition_from)
    }
}

/// A foldhash state for one map, its seed drawn from std's `RandomState` (keys from the OS, a
/// new one per call), so a request cannot pick names that collide.
fn keyed() -> RandomState {
    use std::hash::BuildHasher;
    let seed = std::hash::RandomState::new().hash_one(0u8);
    RandomState::with_seed(seed, SharedSeed::global_random())
}

/// A variable entry as it serialises on the hub: `name` and `value` (a `definitionFrom` is kept
/// in the Cluster's `V1BETA1_FIELDS` annotation, which the Cluster's own serialisation writes).
fn hub_entry(variable: &ClusterVariable) -> Value {
    serde_json::json!({"name": variable.name, "value": variable.value})
}

/// Which variables a list sets, by name and by name and `definitionFrom`, for lookups in
/// constant time; borrowed, so building it allocates only its two tables.
struct Presence<'a> {
    names: HashSet<&'a str, RandomState>,
    sources: HashSet<(&'a str, &'a str), RandomState>,
}

impl<'a> Presence<'a> {
    fn of(values: &'a [ClusterVariable]) -> Presence<'a> {
        let mut presence = Presence {
            names: HashSet::with_capacity_and_hasher(values.len(), keyed()),
            sources: HashSet::with_capacity_and_hasher(values.len(), keyed()),
        };
        for value in values {
            presence.add(&value.name, &value.definition_from);
        }
        presence
    }

    fn add(&mut self, name: &'a str, from: &'a str) {
        self.names.insert(name);
        self.sources.insert((name, from));
    }

    /// Whether `name` is set (from the definition `from`, when given).
    fn has(&self, name: &str, from: Option<&str>) -> bool {
        match from {
            None => self.names.contains(name),
            Some(from) => self.sources.contains(&(name, from)),
        }
    }
}

/// The error for a value set again (same name and `definitionFrom`) in one list.
fn repeated_error(value: &ClusterVariable, path: &FieldPath) -> FieldError {
    let detail = if value.definition_from.is_empty() {
        format!("variable {:?} is set more than once", value.name)
    } else {
        format!(
            "variable {:?} from {:?} is set more than once",
            value.name, value.definition_from
        )
    };
    FieldError::invalid(&path.key(&value.name), to_go_json(&value.value), detail)
}

/// Why a class's status variables cannot be used, if some variable has no definitions: every
/// variable's name as Cluster API shows the list (`[Name: a,Name: b]`), and the reasons
/// (one alone, several in brackets). Conflicting definitions are usable: values pick one with
/// `definitionFrom` (seed 003).
fn unusable_definitions(definitions: &[ClusterClassStatusVariable]) -> Option<(String, String)> {
    let reasons: Vec<String> = definitions
        .iter()
        .filter(|variable| variable.definitions.is_empty())
        .map(|variable| format!("variable {:?} has no definitions", variable.name))
        .collect();
    let reason = match reasons.as_slice() {
        [] => return None,
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let names: Vec<String> = definitions.iter().map(|d| format!("Name: {}", d.name)).collect();
    Some((format!("[{}]", names.join(",")), reason))
}

#[cfg(test)]
#[path = "values_tests.rs"]
mod tests;
