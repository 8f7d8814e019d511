//! ClusterClassRevision (rollout.capi-topology.io/v1alpha1): an immutable copy of everything a
//! Cluster's desired state is computed from, for one content of a ClusterClass: the class (spec
//! and the variables its status discovered) and each template it refers to. A template edited in
//! place makes a new revision; a Cluster held on an older one keeps the older content.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::class_rollout::ClassRolloutClassRef;
use super::crd::{preserve_unknown_fields, preserve_unknown_list};

/// The label naming the ClusterClass a revision copies.
pub const REVISION_CLASS_LABEL: &str = "rollout.capi-topology.io/class";

/// The content of one revision of a ClusterClass. Immutable.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "rollout.capi-topology.io",
    version = "v1alpha1",
    kind = "ClusterClassRevision",
    namespaced,
    shortname = "ccrev",
    printcolumn = r#"{"name":"Class","type":"string","jsonPath":".spec.classRef.name"}"#,
    printcolumn = r#"{"name":"Revision","type":"integer","jsonPath":".spec.revision"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{"rule": "self == oldSelf", "message": "a ClusterClassRevision is immutable"}]))]
pub struct ClusterClassRevisionSpec {
    /// The ClusterClass copied, in the revision's namespace.
    pub class_ref: ClassRolloutClassRef,
    /// The revision's number among the class's revisions, from 1.
    #[schemars(range(min = 1))]
    pub revision: i64,
    /// `sha256:<hex>` of the content: two revisions of one class never share it.
    #[schemars(length(max = 80))]
    pub hash: String,
    /// The ClusterClass as it was: apiVersion, kind, metadata (name, namespace, uid,
    /// generation), spec and status.
    #[schemars(schema_with = "preserve_unknown_fields")]
    pub class: Value,
    /// The templates the class refers to, as they were: apiVersion, kind, metadata (name,
    /// namespace, labels, annotations) and spec.
    #[serde(default)]
    #[schemars(schema_with = "preserve_unknown_list")]
    pub templates: Vec<Value>,
}
