//! Labels and annotations a ClusterClass attaches to its variables, for runtime extensions: a
//! variable's `deprecatedV1Beta1Metadata` and the `x-metadata` of any schema node, validated as
//! Kubernetes validates object metadata, at `spec.variables[<name>].deprecatedV1Beta1Metadata.labels` and
//! `spec.variables[<name>].schema.openAPIV3Schema.properties[<p>].x-metadata.annotations`.

use crate::admission::cluster::metadata;
use crate::api::{ClusterClass, JSONSchemaProps};
use crate::field::{FieldErrors, FieldPath};

/// Every metadata error of the class's variables.
pub fn validate(class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    for variable in &class.spec.variables {
        let path = FieldPath::new("spec").child("variables").key(&variable.name);
        errors.extend(metadata::validate(
            &variable.deprecated_v1_beta1_metadata.labels,
            &variable.deprecated_v1_beta1_metadata.annotations,
            &path.child("deprecatedV1Beta1Metadata"),
        ));
        let schema_path = path.children(&["schema", "openAPIV3Schema"]);
        errors.extend(x_metadata(&variable.schema.open_api_v3_schema, &schema_path));
    }
    errors
}

/// The `x-metadata` errors of every node of a schema, in document order (iterative; the depth
/// of the schema is bounded by the definition checks, not needed here).
fn x_metadata(schema: &JSONSchemaProps, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let mut pending = vec![(schema, path.clone())];
    while let Some((node, node_path)) = pending.pop() {
        if let Some(meta) = &node.x_metadata {
            errors.extend(metadata::validate(
                &meta.labels,
                &meta.annotations,
                &node_path.child("x-metadata"),
            ));
        }
        let mut next: Vec<(&JSONSchemaProps, FieldPath)> = Vec::new();
        if let Some(additional) = node.additional_properties.as_deref() {
            next.push((additional, node_path.child("additionalProperties")));
        }
        for (name, property) in &node.properties {
            next.push((property, node_path.child("properties").key(name)));
        }
        if let Some(items) = node.items.as_deref() {
            next.push((items, node_path.child("items")));
        }
        pending.extend(next.into_iter().rev());
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(variables: &str) -> Vec<String> {
        let class: ClusterClass = serde_yaml_ng::from_str(&format!(
            "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata: {{name: c, namespace: default}}\nspec:\n  variables: {variables}"
        ))
        .unwrap();
        validate(&class).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn variable_metadata_and_x_metadata_at_any_depth() {
        let found = errors(
            "[{name: v, required: false, deprecatedV1Beta1Metadata: {labels: {'bad key!': ok}, annotations: {'a/b/c': x}},
               schema: {openAPIV3Schema: {type: object, properties: {p: {type: array, items: {type: string,
               x-metadata: {labels: {ok: 'not ok!'}}}}}}}}]",
        );
        assert_eq!(
            found,
            [
                "spec.variables[v].deprecatedV1Beta1Metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "spec.variables[v].deprecatedV1Beta1Metadata.annotations: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                "spec.variables[v].schema.openAPIV3Schema.properties[p].items.x-metadata.labels: Invalid value: \"not ok!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ]
        );
        assert!(errors("[{name: v, required: false, deprecatedV1Beta1Metadata: {labels: {a.b/c: d}}, schema: {openAPIV3Schema: {type: string}}}]").is_empty());
    }
}
