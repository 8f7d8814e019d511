//! CustomResourceDefinitions of Cluster API's kinds, generated from our types: names, scope and
//! subresources as Cluster API declares them, and structural schemas (no `$ref`, every node typed)
//! that keep every field our types know.
//!
//! Every CRD serves and stores v1beta2, the hub (`crate::api`). Cluster, ClusterClass,
//! ClusterResourceSet and ClusterResourceSetBinding also serve v1beta1 (schema from
//! `crate::api::v1beta1`), ExtensionConfig v1alpha1 (`crate::api::runtime::v1alpha1`), both
//! `deprecated: true` as in Cluster API v1.14.0 (which sets no `deprecationWarning`, so the API
//! server's own warning applies: `cluster.x-k8s.io/v1beta1 Cluster is deprecated`); the API server
//! converts between them by calling `/convert` (`spec.conversion.strategy: Webhook`). The
//! Machine kinds serve v1beta2 only: nothing here converts them.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionVersion, CustomResourceSubresourceScale,
    CustomResourceSubresourceStatus, CustomResourceSubresources, CustomResourceValidation,
    JSONSchemaProps as CrdSchema, ServiceReference, WebhookClientConfig, WebhookConversion,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::ByteString;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{json_schema, JsonSchema, Schema};
use serde_json::{json, Value};

use super::runtime::{v1alpha1, ExtensionConfigSpec, ExtensionConfigStatus, RUNTIME_GROUP};
use super::{v1beta1, ADDONS_GROUP, HUB_VERSION};
use super::{
    ClusterClassSpec, ClusterClassStatus, ClusterResourceSetBindingSpec, ClusterResourceSetSpec,
    ClusterResourceSetStatus, ClusterSpec, ClusterStatus, MachineDeploymentSpec, MachineDeploymentStatus,
    MachineHealthCheckSpec, MachineHealthCheckStatus, MachinePoolSpec, MachinePoolStatus, MachineSetSpec,
    MachineSetStatus, MachineSpec, MachineStatus,
};

/// The API group of the core kinds (Cluster, ClusterClass, Machine...).
pub const GROUP: &str = "cluster.x-k8s.io";
/// The API version the CRDs store (the hub): every kind is admitted and reconciled in it.
pub const VERSION: &str = HUB_VERSION;
/// The older version the CRDs of Cluster, ClusterClass and the addons kinds still serve.
pub const SPOKE_VERSION: &str = "v1beta1";
/// The path the API server posts ConversionReviews to.
pub const CONVERSION_PATH: &str = "/convert";
/// The Service in front of the webhook server, as `manifests/base` names it.
pub const WEBHOOK_SERVICE: &str = "capi-topology-webhook";
/// The namespace `manifests/` deploys into.
pub const NAMESPACE: &str = "capi-topology-system";

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

/// One served version of a kind and its schema.
struct Version {
    name: &'static str,
    spec: fn() -> Value,
    /// None for a kind without a status (ClusterResourceSetBinding).
    status: Option<fn() -> Value>,
}

/// One kind and its resource names; `versions` lists the storage version (the hub) first.
struct Kind {
    group: &'static str,
    /// False for a cluster-scoped kind (ExtensionConfig).
    namespaced: bool,
    kind: &'static str,
    plural: &'static str,
    short_names: &'static [&'static str],
    scale: Option<Scale>,
    versions: Vec<Version>,
}

/// Options of the generated CRDs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The PEM CA bundle the API server trusts the conversion webhook with; when `None`, the CRDs
    /// carry cert-manager's `cert-manager.io/inject-ca-from` annotation instead (the CA injector
    /// fills the bundle from the webhook's Certificate).
    pub ca_bundle: Option<Vec<u8>>,
}

/// The annotation cert-manager's CA injector reads, and the Certificate it names.
const INJECT_CA_FROM: (&str, &str) = (
    "cert-manager.io/inject-ca-from",
    "capi-topology-system/capi-topology-webhook",
);

/// The CRDs of Cluster, ClusterClass, MachineDeployment, MachineSet, Machine, MachineHealthCheck,
/// MachinePool, ClusterResourceSet, ClusterResourceSetBinding and ExtensionConfig.
pub fn custom_resource_definitions() -> Result<Vec<CustomResourceDefinition>, serde_json::Error> {
    custom_resource_definitions_with(&Options::default())
}

/// The CRDs, with `options`.
pub fn custom_resource_definitions_with(
    options: &Options,
) -> Result<Vec<CustomResourceDefinition>, serde_json::Error> {
    kinds().iter().map(|kind| definition(kind, options)).collect()
}

fn hub(spec: fn() -> Value, status: Option<fn() -> Value>) -> Version {
    Version {
        name: HUB_VERSION,
        spec,
        status,
    }
}

fn spoke(name: &'static str, spec: fn() -> Value, status: Option<fn() -> Value>) -> Version {
    Version { name, spec, status }
}

fn machine_kind(
    kind: &'static str,
    plural: &'static str,
    short_names: &'static [&'static str],
    scale: Option<Scale>,
    version: Version,
) -> Kind {
    Kind {
        group: GROUP,
        namespaced: true,
        kind,
        plural,
        short_names,
        scale,
        versions: vec![version],
    }
}

fn kinds() -> Vec<Kind> {
    vec![
        Kind {
            group: GROUP,
            namespaced: true,
            kind: "Cluster",
            plural: "clusters",
            short_names: &["cl"],
            scale: None,
            versions: vec![
                hub(
                    structural_schema::<ClusterSpec>,
                    Some(structural_schema::<ClusterStatus>),
                ),
                spoke(
                    SPOKE_VERSION,
                    structural_schema::<v1beta1::ClusterSpec>,
                    Some(structural_schema::<v1beta1::ClusterStatus>),
                ),
            ],
        },
        Kind {
            group: GROUP,
            namespaced: true,
            kind: "ClusterClass",
            plural: "clusterclasses",
            short_names: &["cc"],
            scale: None,
            versions: vec![
                hub(
                    structural_schema::<ClusterClassSpec>,
                    Some(structural_schema::<ClusterClassStatus>),
                ),
                spoke(
                    SPOKE_VERSION,
                    structural_schema::<v1beta1::ClusterClassSpec>,
                    Some(structural_schema::<v1beta1::ClusterClassStatus>),
                ),
            ],
        },
        machine_kind(
            "MachineDeployment",
            "machinedeployments",
            &["md"],
            Some(Scale { selector: true }),
            hub(
                structural_schema::<MachineDeploymentSpec>,
                Some(structural_schema::<MachineDeploymentStatus>),
            ),
        ),
        machine_kind(
            "MachineSet",
            "machinesets",
            &["ms"],
            Some(Scale { selector: true }),
            hub(
                structural_schema::<MachineSetSpec>,
                Some(structural_schema::<MachineSetStatus>),
            ),
        ),
        machine_kind(
            "Machine",
            "machines",
            &["ma"],
            None,
            hub(
                structural_schema::<MachineSpec>,
                Some(structural_schema::<MachineStatus>),
            ),
        ),
        machine_kind(
            "MachineHealthCheck",
            "machinehealthchecks",
            &["mhc", "mhcs"],
            None,
            hub(
                structural_schema::<MachineHealthCheckSpec>,
                Some(structural_schema::<MachineHealthCheckStatus>),
            ),
        ),
        machine_kind(
            "MachinePool",
            "machinepools",
            &["mp"],
            Some(Scale { selector: false }),
            hub(
                structural_schema::<MachinePoolSpec>,
                Some(structural_schema::<MachinePoolStatus>),
            ),
        ),
        Kind {
            group: ADDONS_GROUP,
            namespaced: true,
            kind: "ClusterResourceSet",
            plural: "clusterresourcesets",
            short_names: &[],
            scale: None,
            versions: vec![
                hub(
                    structural_schema::<ClusterResourceSetSpec>,
                    Some(structural_schema::<ClusterResourceSetStatus>),
                ),
                spoke(
                    SPOKE_VERSION,
                    structural_schema::<v1beta1::ClusterResourceSetSpec>,
                    Some(structural_schema::<v1beta1::ClusterResourceSetStatus>),
                ),
            ],
        },
        Kind {
            group: ADDONS_GROUP,
            namespaced: true,
            kind: "ClusterResourceSetBinding",
            plural: "clusterresourcesetbindings",
            short_names: &[],
            scale: None,
            versions: vec![
                hub(structural_schema::<ClusterResourceSetBindingSpec>, None),
                spoke(
                    SPOKE_VERSION,
                    structural_schema::<v1beta1::ClusterResourceSetBindingSpec>,
                    None,
                ),
            ],
        },
        Kind {
            group: RUNTIME_GROUP,
            namespaced: false,
            kind: "ExtensionConfig",
            plural: "extensionconfigs",
            short_names: &["ext"],
            scale: None,
            versions: vec![
                hub(
                    structural_schema::<ExtensionConfigSpec>,
                    Some(structural_schema::<ExtensionConfigStatus>),
                ),
                spoke(
                    v1alpha1::VERSION,
                    structural_schema::<v1alpha1::ExtensionConfigSpec>,
                    Some(structural_schema::<v1alpha1::ExtensionConfigStatus>),
                ),
            ],
        },
    ]
}

fn definition(kind: &Kind, options: &Options) -> Result<CustomResourceDefinition, serde_json::Error> {
    // Spokes first, as controller-gen orders versions (by name).
    let mut versions = kind
        .versions
        .iter()
        .map(|version| served_version(kind, version))
        .collect::<Result<Vec<_>, _>>()?;
    versions.sort_by(|a, b| a.name.cmp(&b.name));
    let converts = versions.len() > 1;
    let annotations = (converts && options.ca_bundle.is_none()).then(|| {
        [(INJECT_CA_FROM.0.to_owned(), INJECT_CA_FROM.1.to_owned())]
            .into_iter()
            .collect()
    });
    Ok(CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{}.{}", kind.plural, kind.group)),
            annotations,
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
            versions,
            conversion: converts.then(|| conversion(options)),
            ..CustomResourceDefinitionSpec::default()
        },
        status: None,
    })
}

/// `spec.conversion`: the API server converts by posting to `/convert` on the webhook Service.
fn conversion(options: &Options) -> CustomResourceConversion {
    CustomResourceConversion {
        strategy: "Webhook".to_owned(),
        webhook: Some(WebhookConversion {
            conversion_review_versions: vec!["v1".to_owned()],
            client_config: Some(WebhookClientConfig {
                ca_bundle: options.ca_bundle.clone().map(ByteString),
                service: Some(ServiceReference {
                    name: WEBHOOK_SERVICE.to_owned(),
                    namespace: NAMESPACE.to_owned(),
                    path: Some(CONVERSION_PATH.to_owned()),
                    port: Some(443),
                }),
                url: None,
            }),
        }),
    }
}

fn served_version(
    kind: &Kind,
    version: &Version,
) -> Result<CustomResourceDefinitionVersion, serde_json::Error> {
    let mut schema = json!({
        "description": format!("A {} ({}/{}).", kind.kind, kind.group, version.name),
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": (version.spec)(),
        },
    });
    if let Some(status) = version.status {
        schema["properties"]["status"] = status();
    }
    super::crd_constraints::apply(kind.kind, version.name, &mut schema);
    let scale = kind.scale.as_ref().map(|scale| CustomResourceSubresourceScale {
        spec_replicas_path: ".spec.replicas".to_owned(),
        status_replicas_path: ".status.replicas".to_owned(),
        label_selector_path: scale.selector.then(|| ".status.selector".to_owned()),
    });
    let storage = version.name == HUB_VERSION;
    Ok(CustomResourceDefinitionVersion {
        name: version.name.to_owned(),
        served: true,
        storage,
        deprecated: (!storage).then_some(true),
        schema: Some(CustomResourceValidation {
            open_api_v3_schema: Some(serde_json::from_value::<CrdSchema>(schema)?),
        }),
        subresources: Some(CustomResourceSubresources {
            scale,
            status: Some(CustomResourceSubresourceStatus(json!({}))),
        }),
        ..CustomResourceDefinitionVersion::default()
    })
}

/// The structural OpenAPI schema of `T`: subschemas inlined, `Option`s and enums rewritten the
/// way Kubernetes wants them, then `nullable`, `title` and `default` dropped (Cluster API's CRDs
/// have no `nullable`, so `null`s are pruned as there; the `default`s schemars writes for
/// `#[serde(default)]` fields would make the API server fill in values Cluster API leaves out,
/// so the only defaults are Cluster API's own, from [`super::crd_constraints`]).
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

/// Removes `nullable`, `title` and `default` from a schema node and every node below it.
fn strip_annotations(node: &mut Value) {
    let Some(map) = node.as_object_mut() else {
        return;
    };
    map.remove("nullable");
    map.remove("title");
    map.remove("default");
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
