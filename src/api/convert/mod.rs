//! Lossless conversion between the served versions of Cluster API's kinds, on plain JSON.
//!
//! v1beta2 is the hub; each kind has one spoke: `cluster.x-k8s.io/v1beta1` (Cluster,
//! ClusterClass, MachineHealthCheck, MachineDeployment, MachineSet, MachinePool), `addons.cluster.x-k8s.io/v1beta1` (ClusterResourceSet, ...Binding) and
//! `runtime.cluster.x-k8s.io/v1alpha1` (ExtensionConfig). The converters work on
//! [`serde_json::Value`] and move only the fields whose shape changed, so every field they do not
//! name (a newer field, a provider's extension) passes through untouched, independently of the
//! typed model in `crate::api`.
//!
//! Semantics follow Cluster API v1.14.0's hub-and-spoke converters
//! (`core/webhooks/conversion`, `api/*/conversion.go`):
//! - hub → spoke writes the hub object (without metadata) into the annotation
//!   [`CONVERSION_DATA`] of every `cluster.x-k8s.io` kind (MachineSet too, which Cluster API
//!   leaves without); spoke → hub reads it back, removes it, and restores the `*bool` intent a
//!   v1beta1 `bool` cannot carry (`paused`, `initialization.*`, patch selector
//!   `matchResources.*`, variable schema booleans, `definitionsConflict`) and which of the `0`s
//!   a v1beta1 `int32` always writes (replica counters) the hub really had.
//! - durations become whole seconds (`"1s5ms"` → `1`) and come back as Go prints them (`"1s"`),
//!   unless the hub kept the written form (below).
//! - spoke → hub leaves out the optional structs Go's v1beta2 types marshal with `omitzero`
//!   when they come out empty (a v1beta1 `metadata: {}`), see `omitted`.
//! - Cluster `infrastructureRef`/`controlPlaneRef` and a Machine template's
//!   `infrastructureRef`/`bootstrap.configRef` (MachineDeployment, MachineSet, MachinePool)
//!   lose their apiVersion for an apiGroup; the way back asks [`ContractVersions`] which version the referenced CRD serves for the contract.
//!
//! **Project decision, beyond the reference:** v1beta1 fields that v1beta2 has no place for
//! (Cluster `spec.topology.rolloutAfter`, `variables[].definitionFrom` and the
//! `definitionFrom` of machineDeployment/machinePool variable overrides, MachineDeployment
//! `revisionHistoryLimit` and `progressDeadlineSeconds`) are not dropped. Spoke
//! → hub keeps them in the hub annotation [`V1BETA1_FIELDS`] (a JSON list of
//! `{"path": <JSON pointer into the v1beta1 object>, "value": ..., "guard": {<pointer>: <name>}}`,
//! where `guard` holds the names of the list entries on the path); hub → spoke puts each back
//! where the guard still matches and removes the annotation. So a Cluster written as v1beta1
//! with `definitionFrom` and stored as v1beta2 reads back the same through v1beta1. The same
//! annotation keeps each v1beta1 duration (of every kind) whose written form is not the one Go
//! prints (`90s` for `1m30s`), put back while the stored value is still that duration, so a
//! GitOps tool comparing what it applied in v1beta1 sees no drift. What the annotation may hold,
//! and how each entry is checked, is in `kept`.
//!
//! Output differences from the Go converters, by design of a JSON-level converter: zero values
//! the Go structs always print (`controlPlaneEndpoint: {host: "", port: 0}`, an empty `status`)
//! are not synthesised; fields are emitted only when they carry something, except where the
//! v1beta1 field has no `omitempty` and conveys meaning (`required`, `definitionsConflict`,
//! `infrastructureReady`/`controlPlaneReady` of a present status).

mod carried;
mod cluster;
mod cluster_class;
mod data;
mod duration;
mod extension_config;
mod health_check;
mod kept;
mod kind;
mod machine_deployment;
mod machine_health_check;
mod machine_pool;
mod machine_set;
mod machine_spec;
mod omitted;
pub mod paths;
mod refs;
mod resource_set;
mod resource_set_binding;
pub mod review;
mod rollout;
mod schema;
mod status;
mod topology;
mod value;
mod written;

#[cfg(test)]
mod golden;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod proptests_class;
#[cfg(test)]
mod proptests_machines;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_backports;

use serde_json::Value;

pub use data::{CONVERSION_DATA, V1BETA1_FIELDS};
pub use kept::{is_date_time, problems as v1beta1_fields_problems, without_written_forms, Problem};

/// Nanoseconds of `text` as Go's `time.ParseDuration` reads it (`1m30s`, `250ms`), or `None`
/// where Go fails.
pub fn parse_go_duration_nanos(text: &str) -> Option<i64> {
    duration::parse_nanos(text)
}

/// `seconds` as a v1beta1 (`metav1.Duration`) field prints it, e.g. `600` -> `10m0s`: for
/// writers of v1beta1-contract provider objects (a control plane's `nodeDrainTimeout`).
pub fn go_duration(seconds: i64) -> String {
    duration::from_seconds(seconds)
}

/// A ClusterClassVariable as a v1beta1 writer shapes it (an old Runtime Extension's
/// DiscoverVariables answer: `metadata`, `required` a bool) converted to the hub in place;
/// anything but an object is left alone.
pub fn variable_to_hub(variable: &mut Value) {
    if let Some(obj) = variable.as_object_mut() {
        schema::variable_to_hub(obj, None);
    }
}
use kind::{served, split_api_version, Kind};
use value::Obj;

/// The hub version of every group this module converts.
pub const HUB_VERSION: &str = "v1beta2";

/// Looks up the version of a referenced kind from its CRD's `cluster.x-k8s.io/<contract>` label (v1beta2 label tried before v1beta1).
pub trait ContractVersions {
    /// The API version (`v1beta2`, without the group) the CRD of `group`/`kind` serves for the
    /// Cluster API contract, or `None` when there is no such CRD or label.
    fn version_of(&self, group: &str, kind: &str) -> Option<String>;
}

/// Why an object could not be converted. Messages name the object (`Cluster ns/name`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// The object is not a JSON object or has no `apiVersion`/`kind`.
    #[error("cannot convert: {0}")]
    Malformed(String),
    /// A version of one of our groups that is not served (`cluster.x-k8s.io/v1alpha3`).
    #[error("cannot convert {object}: apiVersion {api_version} is not served (served: {served})")]
    UnknownVersion {
        /// The object.
        object: String,
        /// Its apiVersion, or the one asked for.
        api_version: String,
        /// The versions served for its group.
        served: String,
    },
    /// A conversion between groups, or of a kind this module does not convert.
    #[error("cannot convert {object} to {api_version}")]
    Unsupported {
        /// The object.
        object: String,
        /// The apiVersion asked for.
        api_version: String,
    },
    /// The CRD of a referenced kind is missing or carries no contract label.
    #[error(
        "failed to convert {object}: cannot find the CRD of kind {kind} in group {group:?} with a \
         cluster.x-k8s.io/v1beta2 or cluster.x-k8s.io/v1beta1 contract label"
    )]
    MissingContract {
        /// The object.
        object: String,
        /// The referenced group.
        group: String,
        /// The referenced kind.
        kind: String,
    },
    /// A field holds a value of the wrong shape (an unparsable duration or apiVersion).
    #[error("failed to convert {object}: {field}: {message}")]
    InvalidField {
        /// The object.
        object: String,
        /// The field's path (`spec.topology.controlPlane.nodeDrainTimeout`).
        field: String,
        /// What is wrong.
        message: String,
    },
}

/// The object being converted, for error messages and the namespace refs get.
pub(crate) struct Ctx {
    /// `Kind ns/name`.
    pub(crate) object: String,
    /// The object's namespace (`""` when cluster-scoped or unset).
    pub(crate) namespace: String,
    /// Whether a conversion to a spoke writes the conversion-data annotation (the whole hub,
    /// marshalled): not for a view that drops it straight away.
    pub(crate) conversion_data: bool,
}

impl Ctx {
    fn of(kind: &str, obj: &Obj) -> Self {
        let meta = obj.get("metadata").and_then(Value::as_object);
        let field = |key: &str| {
            meta.and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        let namespace = field("namespace").to_owned();
        let name = field("name");
        let object = if namespace.is_empty() {
            format!("{kind} {name}")
        } else {
            format!("{kind} {namespace}/{name}")
        };
        Ctx {
            object,
            namespace,
            conversion_data: true,
        }
    }

    pub(crate) fn invalid(&self, field: &str, message: impl Into<String>) -> ConvertError {
        ConvertError::InvalidField {
            object: self.object.clone(),
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// Reads `apiVersion` and `kind`, and checks the version is served when the group is ours.
fn identify(object: &Value) -> Result<(String, String), ConvertError> {
    let obj = object
        .as_object()
        .ok_or_else(|| ConvertError::Malformed("not a JSON object".into()))?;
    let text = |key: &str| obj.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
    let (Some(api_version), Some(kind)) = (text("apiVersion"), text("kind")) else {
        return Err(ConvertError::Malformed(
            "an object without apiVersion or kind".into(),
        ));
    };
    check_served(api_version, &Ctx::of(kind, obj).object)?;
    Ok((api_version.to_owned(), kind.to_owned()))
}

fn check_served(api_version: &str, object: &str) -> Result<(), ConvertError> {
    let (group, version) = split_api_version(api_version);
    match served(group) {
        Some(versions) if !versions.contains(&version) => Err(ConvertError::UnknownVersion {
            object: object.to_owned(),
            api_version: api_version.to_owned(),
            served: versions.join(", "),
        }),
        _ => Ok(()),
    }
}

/// True when (apiVersion, kind) is one of ours that this module converts; and an error for an unknown version of our groups (e.g. cluster.x-k8s.io/v1alpha3).
pub fn is_convertible(api_version: &str, kind: &str) -> Result<bool, ConvertError> {
    check_served(api_version, kind)?;
    Ok(Kind::of(split_api_version(api_version).0, kind).is_some())
}

/// Converts an object of one of our kinds in any served version to the hub (v1beta2); hub objects and kinds we do not convert pass through untouched.
pub fn to_hub(mut object: Value) -> Result<Value, ConvertError> {
    let (api_version, kind_name) = identify(&object)?;
    let (group, version) = split_api_version(&api_version);
    let Some(kind) = Kind::of(group, &kind_name) else {
        return Ok(object);
    };
    if version == HUB_VERSION {
        return Ok(object);
    }
    let hub_api_version = format!("{group}/{HUB_VERSION}");
    let Some(obj) = object.as_object_mut() else {
        return Ok(object);
    };
    let ctx = Ctx::of(&kind_name, obj);
    // A spoke never carries the hub's annotation: what it keeps is taken from the spoke's fields.
    data::take_annotation(obj, V1BETA1_FIELDS);
    let written = written::written_durations(kind, obj);
    kind.spoke_to_hub(obj, &ctx)?;
    omitted::drop_empty_structs(&kind_name, obj);
    data::keep_first(obj, written);
    obj.insert("apiVersion".into(), Value::String(hub_api_version));
    Ok(object)
}

/// Where an object of `api_version` and `kind_name`, a spoke, keeps the value its hub keeps at
/// `hub` (a JSON pointer's encoded tokens), when the conversion carries `value` there as it is:
/// a place both versions share, or the other end of a field that only moved. `None` when the
/// conversion rewrites the value or its place, or for an object that is no spoke.
pub fn spoke_place<'a>(
    api_version: &str,
    kind_name: &str,
    hub: &'a [&'a str],
    value: &Value,
) -> Option<std::borrow::Cow<'a, [&'a str]>> {
    let (group, version) = split_api_version(api_version);
    let kind = Kind::of(group, kind_name).filter(|kind| kind.spoke_version() == version)?;
    carried::spoke_place(kind, hub, value)
}

/// Converts a hub object to `api_version` (a spoke or the hub itself).
pub fn from_hub(
    object: Value,
    api_version: &str,
    versions: &dyn ContractVersions,
) -> Result<Value, ConvertError> {
    to_spoke(object, api_version, versions, true)
}

/// [`from_hub`] without the conversion-data annotation (the whole hub object, marshalled), for a
/// view of the object that never goes back to the hub: the admission's JSONPatch against a
/// spoke object, which leaves the annotation out.
pub fn from_hub_without_data(
    object: Value,
    api_version: &str,
    versions: &dyn ContractVersions,
) -> Result<Value, ConvertError> {
    to_spoke(object, api_version, versions, false)
}

/// [`from_hub`], writing the conversion-data annotation when `conversion_data`.
fn to_spoke(
    mut object: Value,
    api_version: &str,
    versions: &dyn ContractVersions,
    conversion_data: bool,
) -> Result<Value, ConvertError> {
    let (current, kind_name) = identify(&object)?;
    let ctx = object.as_object().map(|obj| Ctx {
        conversion_data,
        ..Ctx::of(&kind_name, obj)
    });
    let object_name = ctx.as_ref().map_or_else(String::new, |c| c.object.clone());
    check_served(api_version, &object_name)?;
    if current == api_version {
        return Ok(object);
    }
    let (group, version) = split_api_version(&current);
    let (target_group, target_version) = split_api_version(api_version);
    let unsupported = || ConvertError::Unsupported {
        object: object_name.clone(),
        api_version: api_version.to_owned(),
    };
    let kind = Kind::of(group, &kind_name).ok_or_else(unsupported)?;
    if version != HUB_VERSION || target_group != group || target_version != kind.spoke_version() {
        return Err(unsupported());
    }
    let (Some(obj), Some(ctx)) = (object.as_object_mut(), ctx) else {
        return Err(unsupported());
    };
    let kept_fields = data::take_annotation(obj, V1BETA1_FIELDS);
    kind.hub_to_spoke(obj, &ctx, versions)?;
    if let Some(text) = kept_fields {
        kept::restore(obj, kind, &text, &ctx);
    }
    obj.insert("apiVersion".into(), Value::String(api_version.to_owned()));
    Ok(object)
}

/// Any served version to any other (through the hub).
pub fn convert(
    object: Value,
    api_version: &str,
    versions: &dyn ContractVersions,
) -> Result<Value, ConvertError> {
    if object.get("apiVersion").and_then(Value::as_str) == Some(api_version) {
        identify(&object)?;
        return Ok(object);
    }
    from_hub(to_hub(object)?, api_version, versions)
}
