//! Where a failing rule sits in the evaluated value, as steps (`list[2].name`, `m[key]`): turned
//! into field paths, and followed through the schema to the node that holds the rule.

use crate::api::JSONSchemaProps;
use crate::field::FieldPath;
use crate::variables::limits::MAX_DEPTH;

/// One step of a value path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// A declared property (or a segment of a rule's `fieldPath`).
    Field(&'a str),
    /// A map entry (`additionalProperties`), shown as `[key]` as the API server shows it.
    Key(&'a str),
    /// A list index.
    Index(usize),
}

/// `base` followed by `steps`, as the API server prints it (`value.list[2].name`, `value.m[k]`).
pub fn field_path(base: &FieldPath, steps: &[Step<'_>]) -> FieldPath {
    steps.iter().fold(base.clone(), |path, step| match step {
        Step::Field(name) => path.child(name),
        Step::Key(key) => path.key(key),
        Step::Index(index) => path.index(*index),
    })
}

/// The `type` of the node that holds `rule` for a failure reported at `steps`: the deepest node
/// along the path (a rule's `fieldPath` only ever extends it) with a rule of that text; the
/// root's type when none has.
pub fn rule_node_type<'s>(schema: &'s JSONSchemaProps, steps: &[Step<'_>], rule: &str) -> &'s str {
    let mut node = schema;
    let mut found = schema;
    for step in steps.iter().take(MAX_DEPTH) {
        let next = match step {
            Step::Field(name) => node
                .properties
                .get(*name)
                .or(node.additional_properties.as_deref()),
            Step::Key(_) => node.additional_properties.as_deref(),
            Step::Index(_) => node.items.as_deref(),
        };
        let Some(next) = next else { break };
        node = next;
        if node.x_validations.iter().any(|r| r.rule == rule) {
            found = node;
        }
    }
    &found.type_
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_print_as_fields_keys_and_indexes() {
        let base = FieldPath::new("value");
        assert_eq!(field_path(&base, &[]).to_string(), "value");
        let steps = [Step::Index(1), Step::Field("a"), Step::Key("b-c")];
        assert_eq!(field_path(&base, &steps).to_string(), "value[1].a[b-c]");
    }

    #[test]
    fn the_node_holding_the_rule_gives_the_type() {
        let schema: JSONSchemaProps = serde_yaml_ng::from_str(
            "{type: object, x-kubernetes-validations: [{rule: r}], properties: {l: {type: array, \
             items: {type: object, properties: {n: {type: string, x-kubernetes-validations: [{rule: s}]}}}}, \
             m: {type: object, additionalProperties: {type: integer, x-kubernetes-validations: [{rule: t}]}}}}",
        )
        .unwrap();
        let in_list = [Step::Field("l"), Step::Index(0), Step::Field("n")];
        assert_eq!(rule_node_type(&schema, &in_list, "s"), "string");
        assert_eq!(rule_node_type(&schema, &in_list, "r"), "object");
        assert_eq!(
            rule_node_type(&schema, &[Step::Field("m"), Step::Key("k")], "t"),
            "integer"
        );
        assert_eq!(
            rule_node_type(&schema, &[Step::Field("nope"), Step::Field("x")], "s"),
            "object"
        );
    }
}
