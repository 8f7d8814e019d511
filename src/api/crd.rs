//! CustomResourceDefinitions for the cluster.x-k8s.io/v1beta1, addons.cluster.x-k8s.io/v1beta1
//! and runtime.cluster.x-k8s.io/v1alpha1 kinds, generated from our types:
//! names, scope and subresources as Cluster API declares them, and structural schemas (no
//! `$ref`, every node typed) that keep every field our types know.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec,
    CustomResourceDefinitionVersion, CustomResourceSubresourceScale, CustomResourceSubresourceStatus,
    CustomResourceSubresources, CustomResourceValidation, JSONSchemaProps as CrdSchema,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{json_schema, JsonSchema, Schema};
use serde_json::{json, Value};

use super::v1beta1::{
    ClusterClassSpec, ClusterClassStatus, ClusterResourceSetBindingSpec, ClusterResourceSetSpec,
    ClusterResourceSetStatus, ClusterSpec, ClusterStatus, MachineDeploymentSpec, MachineDeploymentStatus,
    MachineHealthCheckSpec, MachineHealthCheckStatus, MachinePoolSpec, MachinePoolStatus, MachineSetSpec,
    MachineSetStatus, MachineSpec, MachineStatus,
};
use super::ADDONS_GROUP;
use crate::api::runtime::v1alpha1::{ExtensionConfigSpec, ExtensionConfigStatus, VERSION as RUNTIME_VERSION};
use crate::api::runtime::RUNTIME_GROUP;

/// The API group of the core kinds (Cluster, ClusterClass, Machine...).
pub const GROUP: &str = "cluster.x-k8s.io";
/// The API version the CRDs serve and store (the v1beta1 spoke, until the CRDs carry the hub).
pub const VERSION: &str = "v1beta1";

/// Schema of a field holding arbitrary JSON, kept as given (`x-kubernetes-preserve-unknown-fields`).
/// Also used for the recursive fields of variable schemas, as Cluster API's CRD does.
pub(crate) fn preserve_unknown_fields(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "x-kubernetes-preserve-unknown-fields": true })
}

/// Schema of a list of arbitrary JSON values.
pub(crate) fn preserve_unknown_list(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": { "x-kubernetes-preserve-unknown-fields": true } })
}

/// How a kind's `/scale` subresource maps onto its fields.
struct Scale {
    /// Whether `status.selector` exists for the scale subresource.
    selector: bool,
}

/// One kind and its resource names.
struct Kind {
    group: &'static str,
    version: &'static str,
    /// False for a cluster-scoped kind (ExtensionConfig).
    namespaced: bool,
    kind: &'static str,
    plural: &'static str,
    short_names: &'static [&'static str],
    scale: Option<Scale>,
    spec: fn() -> Value,
    /// None for a kind without a status (ClusterResourceSetBinding).
    status: Option<fn() -> Value>,
}

/// The CRDs of Cluster, ClusterClass, MachineDeployment, MachineSet, Machine, MachineHealthCheck,
/// MachinePool, ClusterResourceSet, ClusterResourceSetBinding and ExtensionConfig.
pub fn custom_resource_definitions() -> Result<Vec<CustomResourceDefinition>, serde_json::Error> {
    kinds().iter().map(definition).collect()
}

fn kinds() -> [Kind; 10] {
    [
        Kind {
            group: GROUP,
            version: VERSION,
            namespaced: true,
            kind: "Cluster",
            plural: "clusters",
            short_names: &["cl"],
            scale: None,
            spec: structural_schema::<ClusterSpec>,
            status: Some(structural_schema::<ClusterStatus>),
        },
        Kind {
            group: GROUP,
            version: VERSION,
            namespaced: true,
            kind: "ClusterClass",
            plural: "clusterclasses",
            short_names: &["cc"],
            scale: None,
            spec: structural_schema::<ClusterClassSpec>,
            status: Some(structural_schema::<ClusterClassStatus>),
        },
        Kind {
            group: GROUP,
            version: VERSION,
            namespaced: true,
            kind: "MachineDeployment",
            plural: "machinedeployments",
            short_names: &["md"],
            scale: Some(Scale { selector: true }),
            spec: structural_schema::<MachineDeploymentSpec>,
            status: Some(structural_schema::<MachineDeploymentStatus>),
        },
        Kind {
            group: GROUP,
            version: VERSION,
            namespaced: true,
            kind: "MachineSet",
            plural: "machinesets",
            short_names: &["ms"],
            scale: Some(Scale { selector: true }),
            spec: structural_schema::<MachineSetSpec>,
            status: Some(structural_schema::<MachineSetStatus>),
        },
        Kind {
            group: GROUP,
            version: VERSION,
            namespaced: true,
            kind: "Machine",
            plural: "machines",
            short_names: &["ma"],
            scale: None,
            spec: structural_schema::<MachineSpec>,
            status: Some(structural_schema::<MachineStatus>),
        },
        Kind {
            group: GROUP,
            version: VERSION,
            namespaced: true,
            kind: "MachineHealthCheck",
            plural: "machinehealthchecks",
            short_names: &["mhc", "mhcs"],
            scale: None,
            spec: structural_schema::<MachineHealthCheckSpec>,
            status: Some(structural_schema::<MachineHealthCheckStatus>),
        },
        Kind {
            group: GROUP,
            version: VERSION,
            namespaced: true,
            kind: "MachinePool",
            plural: "machinepools",
            short_names: &["mp"],
            scale: Some(Scale { selector: false }),
            spec: structural_schema::<MachinePoolSpec>,
            status: Some(structural_schema::<MachinePoolStatus>),
        },
        Kind {
            group: ADDONS_GROUP,
            version: VERSION,
            namespaced: true,
            kind: "ClusterResourceSet",
            plural: "clusterresourcesets",
            short_names: &[],
            scale: None,
            spec: structural_schema::<ClusterResourceSetSpec>,
            status: Some(structural_schema::<ClusterResourceSetStatus>),
        },
        Kind {
            group: ADDONS_GROUP,
            version: VERSION,
            namespaced: true,
            kind: "ClusterResourceSetBinding",
            plural: "clusterresourcesetbindings",
            short_names: &[],
            scale: None,
            spec: structural_schema::<ClusterResourceSetBindingSpec>,
            status: None,
        },
        Kind {
            group: RUNTIME_GROUP,
            version: RUNTIME_VERSION,
            namespaced: false,
            kind: "ExtensionConfig",
            plural: "extensionconfigs",
            short_names: &["ext"],
            scale: None,
            spec: structural_schema::<ExtensionConfigSpec>,
            status: Some(structural_schema::<ExtensionConfigStatus>),
        },
    ]
}

fn definition(kind: &Kind) -> Result<CustomResourceDefinition, serde_json::Error> {
    let mut schema = json!({
        "description": format!("A {} ({}/{}).", kind.kind, kind.group, kind.version),
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": (kind.spec)(),
        },
    });
    if let Some(status) = kind.status {
        schema["properties"]["status"] = status();
    }
    let scale = kind.scale.as_ref().map(|scale| CustomResourceSubresourceScale {
        spec_replicas_path: ".spec.replicas".to_owned(),
        status_replicas_path: ".status.replicas".to_owned(),
        label_selector_path: scale.selector.then(|| ".status.selector".to_owned()),
    });
    Ok(CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{}.{}", kind.plural, kind.group)),
            ..ObjectMeta::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: kind.group.to_owned(),
            names: CustomResourceDefinitionNames {
                categories: Some(vec!["cluster-api".to_owned()]),
                kind: kind.kind.to_owned(),
                list_kind: Some(format!("{}List", kind.kind)),
                plural: kind.plural.to_owned(),
                short_names: (!kind.short_names.is_empty())
                    .then(|| kind.short_names.iter().map(|s| (*s).to_owned()).collect()),
                singular: Some(kind.kind.to_ascii_lowercase()),
            },
            scope: if kind.namespaced { "Namespaced" } else { "Cluster" }.to_owned(),
            versions: vec![CustomResourceDefinitionVersion {
                name: kind.version.to_owned(),
                served: true,
                storage: true,
                schema: Some(CustomResourceValidation {
                    open_api_v3_schema: Some(serde_json::from_value::<CrdSchema>(schema)?),
                }),
                subresources: Some(CustomResourceSubresources {
                    scale,
                    status: Some(CustomResourceSubresourceStatus(json!({}))),
                }),
                ..CustomResourceDefinitionVersion::default()
            }],
            ..CustomResourceDefinitionSpec::default()
        },
        status: None,
    })
}

/// The structural OpenAPI schema of `T`: subschemas inlined, `Option`s and enums rewritten the
/// way Kubernetes wants them, then `nullable` and `title` dropped (Cluster API's CRDs have
/// neither, so `null`s are pruned as there).
fn structural_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(schemars::transform::AddNullable::default())
        .with_transform(kube::core::schema::StructuralSchemaRewriter)
        .with_transform(kube::core::schema::OptionalEnum)
        .with_transform(kube::core::schema::OptionalIntOrString)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    strip_annotations(&mut schema);
    schema
}

/// Removes `nullable` and `title` from a schema node and every node below it.
fn strip_annotations(node: &mut Value) {
    let Some(map) = node.as_object_mut() else {
        return;
    };
    map.remove("nullable");
    map.remove("title");
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = map.get_mut(key) {
            strip_annotations(child);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            children.iter_mut().for_each(strip_annotations);
        }
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(strip_annotations);
    }
}

#[cfg(test)]
#[path = "crd_tests.rs"]
mod tests;
