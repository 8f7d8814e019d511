//! The OpenAPI v3 schema subset a ClusterClass variable may use (`openAPIV3Schema`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A variable's schema.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VariableSchema {
    /// The OpenAPI v3 schema of the variable's value.
    #[serde(rename = "openAPIV3Schema", default)]
    pub open_api_v3_schema: JSONSchemaProps,
}

/// One node of an OpenAPI v3 schema, with the Kubernetes extensions Cluster API allows.
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JSONSchemaProps {
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// An example value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub example: Option<Value>,
    /// `object`, `array`, `string`, `integer`, `number` or `boolean`.
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// Schemas of an object's named properties.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub properties: BTreeMap<String, JSONSchemaProps>,
    /// Schema of every value of a map-like object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub additional_properties: Option<Box<JSONSchemaProps>>,
    /// Most properties an object may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_properties: Option<i64>,
    /// Fewest properties an object may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_properties: Option<i64>,
    /// Properties an object must have.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    /// Schema of an array's items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub items: Option<Box<JSONSchemaProps>>,
    /// Most items an array may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<i64>,
    /// Fewest items an array may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<i64>,
    /// Whether an array's items must differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_items: Option<bool>,
    /// A string format (`uri`, `ipv4`, `date-time`, ...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub format: String,
    /// Longest string allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<i64>,
    /// Shortest string allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<i64>,
    /// A regular expression (RE2 syntax) a string must match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pattern: String,
    /// Largest number allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i64>,
    /// Whether `maximum` itself is excluded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusive_maximum: Option<bool>,
    /// Smallest number allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i64>,
    /// Whether `minimum` itself is excluded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusive_minimum: Option<bool>,
    /// Keep fields the schema does not declare.
    #[serde(
        rename = "x-kubernetes-preserve-unknown-fields",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub x_preserve_unknown_fields: Option<bool>,
    /// The values allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::crd::preserve_unknown_list")]
    pub r#enum: Vec<Value>,
    /// The value used when none is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub default: Option<Value>,
    /// CEL rules the value must satisfy.
    #[serde(
        rename = "x-kubernetes-validations",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    #[schemars(transform = crate::api::list_map::by_rule)]
    pub x_validations: Vec<ValidationRule>,
    /// Labels and annotations for this node, read by runtime extensions.
    #[serde(rename = "x-metadata", default, skip_serializing_if = "Option::is_none")]
    pub x_metadata: Option<VariableSchemaMetadata>,
    /// The value may be an integer or a string.
    #[serde(
        rename = "x-kubernetes-int-or-string",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub x_int_or_string: Option<bool>,
    /// The value must match every one of these schemas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub all_of: Vec<JSONSchemaProps>,
    /// The value must match exactly one of these schemas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub one_of: Vec<JSONSchemaProps>,
    /// The value must match at least one of these schemas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub any_of: Vec<JSONSchemaProps>,
    /// The value must not match this schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::crd::preserve_unknown_fields")]
    pub not: Option<Box<JSONSchemaProps>>,
}

/// Labels and annotations attached to a schema node (`x-metadata`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VariableSchemaMetadata {
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// A CEL rule (`x-kubernetes-validations[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidationRule {
    /// The CEL expression; `self` is the value, `oldSelf` the previous value.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rule: String,
    /// The message when the rule fails.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// A CEL expression producing the message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message_expression: String,
    /// The error type reported: `FieldValueInvalid` (default), `FieldValueRequired`,
    /// `FieldValueDuplicate` or `FieldValueForbidden`. A string, because definitions from
    /// DiscoverVariables responses reach admission unchecked and a bad value is reported there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Where the error is reported, relative to the node (`.spec.replicas`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field_path: String,
}

impl JSONSchemaProps {
    /// Whether unknown fields are kept (`x-kubernetes-preserve-unknown-fields: true`).
    pub fn preserves_unknown_fields(&self) -> bool {
        self.x_preserve_unknown_fields.unwrap_or(false)
    }

    /// Whether the value may be an integer or a string (`x-kubernetes-int-or-string: true`).
    pub fn is_int_or_string(&self) -> bool {
        self.x_int_or_string.unwrap_or(false)
    }
}
