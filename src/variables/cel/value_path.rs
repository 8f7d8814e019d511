//! The value paths kube-cel reports a failing rule at (`a.b`, `list[2].name`, `[0]`): turned
//! into field paths, and followed through the schema to the node that holds the rule.

use crate::api::JSONSchemaProps;
use crate::field::FieldPath;
use crate::variables::limits::MAX_DEPTH;

/// One step of a value path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// A property or map key.
    Field(&'a str),
    /// A list index.
    Index(usize),
}

/// The steps of `path`; a part whose brackets do not hold numbers is one field name.
pub fn steps(path: &str) -> Vec<Step<'_>> {
    let mut steps = Vec::new();
    for part in path.split('.').filter(|part| !part.is_empty()) {
        match split_indexes(part) {
            Some((name, indexes)) => {
                if !name.is_empty() {
                    steps.push(Step::Field(name));
                }
                steps.extend(indexes.into_iter().map(Step::Index));
            }
            None => steps.push(Step::Field(part)),
        }
    }
    steps
}

/// `name[1][2]` as `name` and its indexes.
fn split_indexes(part: &str) -> Option<(&str, Vec<usize>)> {
    let name_end = part.find('[').unwrap_or(part.len());
    let mut rest = &part[name_end..];
    let mut indexes = Vec::new();
    while let Some(open) = rest.strip_prefix('[') {
        let close = open.find(']')?;
        indexes.push(open[..close].parse().ok()?);
        rest = &open[close + 1..];
    }
    rest.is_empty().then_some((&part[..name_end], indexes))
}

/// `base` followed by `steps`, as the API server prints it (`value.list[2].name`).
pub fn field_path(base: &FieldPath, steps: &[Step<'_>]) -> FieldPath {
    steps.iter().fold(base.clone(), |path, step| match step {
        Step::Field(name) => path.child(name),
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
    fn paths_split_into_fields_and_indexes() {
        assert_eq!(steps(""), []);
        assert_eq!(steps("[0]"), [Step::Index(0)]);
        assert_eq!(
            steps("a.list[2][3].b"),
            [
                Step::Field("a"),
                Step::Field("list"),
                Step::Index(2),
                Step::Index(3),
                Step::Field("b")
            ]
        );
        assert_eq!(steps("odd[x]"), [Step::Field("odd[x]")]);
        let base = FieldPath::new("value");
        assert_eq!(field_path(&base, &steps("[1].a")).to_string(), "value[1].a");
    }

    #[test]
    fn the_node_holding_the_rule_gives_the_type() {
        let schema: JSONSchemaProps = serde_yaml_ng::from_str(
            "{type: object, x-kubernetes-validations: [{rule: r}], properties: {l: {type: array, \
             items: {type: object, properties: {n: {type: string, x-kubernetes-validations: [{rule: s}]}}}}}}",
        )
        .unwrap();
        assert_eq!(rule_node_type(&schema, &steps("l[0].n"), "s"), "string");
        assert_eq!(rule_node_type(&schema, &steps("l[0].n"), "r"), "object");
        assert_eq!(rule_node_type(&schema, &steps("nope.x"), "s"), "object");
    }
}
