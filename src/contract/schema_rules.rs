//! The fields the provider contract requires of an InfraCluster and its template, checked
//! against one version's openAPIV3Schema: the v1beta2 contract's, or the deprecated v1beta1
//! contract's (seed 001) for a CRD that only implements that one.

use serde_json::Value;

/// What a field's schema must declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `type: object`.
    Object,
    /// `type: string`.
    String,
    /// `type: boolean`.
    Boolean,
    /// `type: integer`, `format: int32` when a format is given.
    Int32,
    /// A map of `{controlPlane: boolean, attributes: map[string]string}` (contract v1beta1).
    FailureDomains,
    /// A list of `{name: string, controlPlane: boolean, attributes: map[string]string}`
    /// (contract v1beta2).
    FailureDomainList,
}

/// One field the contract names.
#[derive(Debug, Clone, Copy)]
pub struct FieldRule {
    /// The field's path in the object (`["spec", "controlPlaneEndpoint", "host"]`).
    pub path: &'static [&'static str],
    /// What its schema must be.
    pub shape: Shape,
    /// Whether the schema must declare it at all.
    pub required: bool,
}

const fn rule(path: &'static [&'static str], shape: Shape, required: bool) -> FieldRule {
    FieldRule {
        path,
        shape,
        required,
    }
}

/// The InfraCluster's fields under the v1beta2 contract: initialization instead of `ready`,
/// failure domains as a list; terminal failures are no longer part of it.
pub const INFRA_CLUSTER: [FieldRule; 8] = [
    rule(&["spec"], Shape::Object, true),
    rule(&["spec", "controlPlaneEndpoint"], Shape::Object, true),
    rule(&["spec", "controlPlaneEndpoint", "host"], Shape::String, true),
    rule(&["spec", "controlPlaneEndpoint", "port"], Shape::Int32, true),
    rule(&["status"], Shape::Object, true),
    rule(&["status", "initialization"], Shape::Object, true),
    rule(&["status", "initialization", "provisioned"], Shape::Boolean, true),
    rule(&["status", "failureDomains"], Shape::FailureDomainList, false),
];

/// The InfraCluster's fields under the deprecated v1beta1 contract (seed 001, "InfraCluster
/// Resources"), still accepted from a CRD that implements only that contract.
pub const INFRA_CLUSTER_V1BETA1: [FieldRule; 9] = [
    rule(&["spec"], Shape::Object, true),
    rule(&["spec", "controlPlaneEndpoint"], Shape::Object, true),
    rule(&["spec", "controlPlaneEndpoint", "host"], Shape::String, true),
    rule(&["spec", "controlPlaneEndpoint", "port"], Shape::Int32, true),
    rule(&["status"], Shape::Object, true),
    rule(&["status", "ready"], Shape::Boolean, true),
    rule(&["status", "failureReason"], Shape::String, false),
    rule(&["status", "failureMessage"], Shape::String, false),
    rule(&["status", "failureDomains"], Shape::FailureDomains, false),
];

/// The InfraClusterTemplate's fields (seed 001, "InfraClusterTemplate Resources"; its metadata
/// is optional there).
pub const INFRA_CLUSTER_TEMPLATE: [FieldRule; 4] = [
    rule(&["spec"], Shape::Object, true),
    rule(&["spec", "template"], Shape::Object, true),
    rule(&["spec", "template", "spec"], Shape::Object, true),
    rule(&["spec", "template", "metadata"], Shape::Object, false),
];

/// A field whose schema breaks a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProblem {
    /// The object field (`spec.controlPlaneEndpoint.port`).
    pub field: String,
    /// Where in the version's schema (`properties.spec.properties.controlPlaneEndpoint...`).
    pub schema_path: String,
    /// What is wrong.
    pub message: String,
}

/// Every problem of `rules` against `schema` (a version's openAPIV3Schema). A field whose parent
/// is already reported missing or mistyped is not reported again.
pub fn check_fields(schema: &Value, rules: &[FieldRule]) -> Vec<SchemaProblem> {
    let mut problems = Vec::new();
    let mut broken: Vec<&[&str]> = Vec::new();
    for rule in rules {
        if broken.iter().any(|parent| rule.path.starts_with(parent)) {
            continue;
        }
        let found = lookup(schema, rule.path);
        let problem = match found {
            None if rule.required => Some("is not declared in the schema".to_owned()),
            None => None,
            Some(node) => shape_problem(node, rule.shape),
        };
        if let Some(message) = problem {
            broken.push(rule.path);
            problems.push(SchemaProblem {
                field: rule.path.join("."),
                schema_path: schema_path(rule.path),
                message,
            });
        }
    }
    problems
}

/// The schema of the field at `path`, following `properties`.
fn lookup<'a>(schema: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(schema, |node, name| node.get("properties")?.get(*name))
}

fn schema_path(path: &[&str]) -> String {
    path.iter()
        .map(|name| format!("properties.{name}"))
        .collect::<Vec<_>>()
        .join(".")
}

fn type_of(node: &Value) -> &str {
    node.get("type").and_then(Value::as_str).unwrap_or("")
}

fn expect_type(node: &Value, wanted: &str) -> Option<String> {
    match type_of(node) {
        t if t == wanted => None,
        "" => Some(format!("must be of type {wanted}, declares no type")),
        other => Some(format!("must be of type {wanted}, is {other}")),
    }
}

fn shape_problem(node: &Value, shape: Shape) -> Option<String> {
    match shape {
        Shape::Object => expect_type(node, "object"),
        Shape::String => expect_type(node, "string"),
        Shape::Boolean => expect_type(node, "boolean"),
        Shape::Int32 => {
            expect_type(node, "integer").or_else(|| match node.get("format").and_then(Value::as_str) {
                None | Some("int32") => None,
                Some(other) => Some(format!("must be an int32, has format {other}")),
            })
        }
        Shape::FailureDomains => failure_domains_problem(node),
        Shape::FailureDomainList => failure_domain_list_problem(node),
    }
}

/// A list of `{name: string, controlPlane: boolean, attributes: map[string]string}`.
fn failure_domain_list_problem(node: &Value) -> Option<String> {
    if let Some(problem) = expect_type(node, "array") {
        return Some(format!("{problem} (a list of failure domains)"));
    }
    let Some(domain) = node.get("items").filter(|d| d.is_object()) else {
        return Some("must declare its items (failure domains)".to_owned());
    };
    if let Some(problem) = expect_type(domain, "object") {
        return Some(format!("each failure domain {problem}"));
    }
    match domain.get("properties").and_then(|p| p.get("name")) {
        None => Some("a failure domain must declare name (string)".to_owned()),
        Some(name) => expect_type(name, "string").map(|p| format!("a failure domain's name {p}")),
    }
    .or_else(|| domain_fields_problem(domain))
}

/// A map (`additionalProperties`) of `{controlPlane: boolean, attributes: map[string]string}`.
fn failure_domains_problem(node: &Value) -> Option<String> {
    if let Some(problem) = expect_type(node, "object") {
        return Some(format!("{problem} (a map of failure domains)"));
    }
    let Some(domain) = node.get("additionalProperties").filter(|d| d.is_object()) else {
        return Some("must be a map (additionalProperties) of failure domains".to_owned());
    };
    if let Some(problem) = expect_type(domain, "object") {
        return Some(format!("each failure domain {problem}"));
    }
    domain_fields_problem(domain)
}

/// A failure domain's `controlPlane` (boolean) and `attributes` (map of strings).
fn domain_fields_problem(domain: &Value) -> Option<String> {
    let property = |name: &str| domain.get("properties").and_then(|p| p.get(name));
    match property("controlPlane") {
        None => return Some("a failure domain must declare controlPlane (boolean)".to_owned()),
        Some(field) => {
            if let Some(problem) = expect_type(field, "boolean") {
                return Some(format!("a failure domain's controlPlane {problem}"));
            }
        }
    }
    let Some(attributes) = property("attributes") else {
        return Some("a failure domain must declare attributes (map of strings)".to_owned());
    };
    let values = attributes.get("additionalProperties");
    if type_of(attributes) != "object" || values.map(type_of) != Some("string") {
        return Some("a failure domain's attributes must be a map of strings".to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn infra_schema(port: Value) -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"controlPlaneEndpoint": {"type": "object",
                "properties": {"host": {"type": "string"}, "port": port}}}},
            "status": {"type": "object", "properties": {
                "ready": {"type": "boolean"},
                "failureDomains": {"type": "object", "additionalProperties": {"type": "object",
                    "properties": {"controlPlane": {"type": "boolean"},
                        "attributes": {"type": "object", "additionalProperties": {"type": "string"}}}}}}}}})
    }

    #[test]
    fn a_schema_as_the_seed_describes_passes() {
        let schema = infra_schema(json!({"type": "integer", "format": "int32"}));
        assert_eq!(check_fields(&schema, &INFRA_CLUSTER_V1BETA1), []);
    }

    #[test]
    fn a_mistyped_port_is_named_with_its_paths() {
        let problems = check_fields(&infra_schema(json!({"type": "string"})), &INFRA_CLUSTER_V1BETA1);
        assert_eq!(
            problems,
            [SchemaProblem {
                field: "spec.controlPlaneEndpoint.port".into(),
                schema_path: "properties.spec.properties.controlPlaneEndpoint.properties.port".into(),
                message: "must be of type integer, is string".into(),
            }]
        );
        let int64 = check_fields(
            &infra_schema(json!({"type": "integer", "format": "int64"})),
            &INFRA_CLUSTER_V1BETA1,
        );
        assert_eq!(int64[0].message, "must be an int32, has format int64");
    }

    #[test]
    fn a_missing_parent_is_reported_once() {
        let schema = json!({"type": "object", "properties": {"status": {"type": "object",
            "properties": {"ready": {"type": "boolean"}}}}});
        let fields: Vec<String> = check_fields(&schema, &INFRA_CLUSTER_V1BETA1)
            .into_iter()
            .map(|p| p.field)
            .collect();
        assert_eq!(fields, ["spec"]);
    }

    #[test]
    fn failure_domains_must_be_a_map_of_domains() {
        let mut schema = infra_schema(json!({"type": "integer"}));
        schema["properties"]["status"]["properties"]["failureDomains"] =
            json!({"type": "array", "items": {}});
        let problems = check_fields(&schema, &INFRA_CLUSTER_V1BETA1);
        assert_eq!(problems[0].field, "status.failureDomains");
        assert!(
            problems[0].message.contains("must be of type object, is array"),
            "{problems:?}"
        );
    }

    fn v1beta2_schema(domains: Value) -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"controlPlaneEndpoint": {"type": "object",
                "properties": {"host": {"type": "string"}, "port": {"type": "integer", "format": "int32"}}}}},
            "status": {"type": "object", "properties": {
                "initialization": {"type": "object", "properties": {"provisioned": {"type": "boolean"}}},
                "failureDomains": domains}}}})
    }

    #[test]
    fn the_v1beta2_contract_wants_initialization_and_a_list_of_failure_domains() {
        let list = json!({"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "controlPlane": {"type": "boolean"},
            "attributes": {"type": "object", "additionalProperties": {"type": "string"}}}}});
        assert_eq!(check_fields(&v1beta2_schema(list), &INFRA_CLUSTER), []);
        let map = infra_schema(json!({"type": "integer"}))["properties"]["status"]["properties"]
            ["failureDomains"]
            .clone();
        let problems = check_fields(&v1beta2_schema(map), &INFRA_CLUSTER);
        assert_eq!(problems[0].field, "status.failureDomains");
        assert_eq!(
            problems[0].message,
            "must be of type array, is object (a list of failure domains)"
        );
        let nameless = json!({"type": "array", "items": {"type": "object", "properties": {
            "controlPlane": {"type": "boolean"}}}});
        let problems = check_fields(&v1beta2_schema(nameless), &INFRA_CLUSTER);
        assert_eq!(problems[0].message, "a failure domain must declare name (string)");
        // A v1beta1-only schema lacks the initialization.
        let fields: Vec<String> = check_fields(&infra_schema(json!({"type": "integer"})), &INFRA_CLUSTER)
            .into_iter()
            .map(|p| p.field)
            .collect();
        assert_eq!(fields, ["status.initialization", "status.failureDomains"]);
    }
}
