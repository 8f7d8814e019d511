//! `status.variables` as the ClusterClass reconciler writes it: every definition of every
//! variable, inline and discovered, with conflicts flagged.

use crate::api::labels::VARIABLE_DEFINITION_FROM_INLINE;
use crate::api::{ClusterClassStatusVariable, ClusterClassStatusVariableDefinition, ClusterClassVariable};

/// The status variables for `inline` definitions and those `discovered` per external patch
/// (patch name, variables), sorted by name; a name whose schemas differ is a conflict.
pub fn status_variables(
    inline: &[ClusterClassVariable],
    discovered: &[(String, Vec<ClusterClassVariable>)],
) -> Vec<ClusterClassStatusVariable> {
    let sources = std::iter::once((VARIABLE_DEFINITION_FROM_INLINE, inline)).chain(
        discovered
            .iter()
            .map(|(patch, variables)| (patch.as_str(), variables.as_slice())),
    );
    let mut status: Vec<ClusterClassStatusVariable> = Vec::new();
    let mut position: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (from, variables) in sources {
        for variable in variables {
            let definition = ClusterClassStatusVariableDefinition {
                from: from.to_owned(),
                required: variable.required,
                deprecated_v1_beta1_metadata: variable.deprecated_v1_beta1_metadata.clone(),
                schema: variable.schema.clone(),
            };
            match position.get(&variable.name).map(|&i| &mut status[i]) {
                Some(existing) => {
                    // Compared with the first definition, `required` unset as false, as the
                    // ClusterClass reconciler does.
                    let differs = existing.definitions.first().is_some_and(|d| {
                        d.schema != definition.schema
                            || d.required.unwrap_or(false) != definition.required.unwrap_or(false)
                            || d.deprecated_v1_beta1_metadata != definition.deprecated_v1_beta1_metadata
                    });
                    if differs {
                        existing.definitions_conflict = Some(true);
                    }
                    existing.definitions.push(definition);
                }
                None => {
                    position.insert(variable.name.clone(), status.len());
                    status.push(ClusterClassStatusVariable {
                        name: variable.name.clone(),
                        definitions_conflict: Some(false),
                        definitions: vec![definition],
                    });
                }
            }
        }
    }
    // By name, as Cluster API's reconciler writes them (so defaulted variables are appended to a
    // Cluster in this order); each variable's definitions keep their source order.
    status.sort_by(|a, b| a.name.cmp(&b.name));
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variables(yaml: &str) -> Vec<ClusterClassVariable> {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    #[test]
    fn inline_only_has_no_conflicts() {
        let status = status_variables(
            &variables("[{name: a, required: true, schema: {openAPIV3Schema: {type: string}}}]"),
            &[],
        );
        assert_eq!(status.len(), 1);
        assert_eq!(status[0].definitions[0].from, "inline");
        assert!(status[0].definitions[0].required == Some(true) && !status[0].has_conflict());
    }

    #[test]
    fn differing_schemas_conflict_equal_ones_do_not() {
        let inline = variables("[{name: proxy, required: false, schema: {openAPIV3Schema: {type: string}}}]");
        let same = (
            "lb".to_owned(),
            variables("[{name: proxy, required: false, schema: {openAPIV3Schema: {type: string}}}]"),
        );
        assert!(!status_variables(&inline, &[same])[0].has_conflict());
        let other = (
            "lb".to_owned(),
            variables("[{name: proxy, required: false, schema: {openAPIV3Schema: {type: object}}}]"),
        );
        let status = status_variables(&inline, &[other]);
        assert!(status[0].has_conflict());
        assert_eq!(
            status[0]
                .definitions
                .iter()
                .map(|d| d.from.as_str())
                .collect::<Vec<_>>(),
            ["inline", "lb"]
        );
    }
}
