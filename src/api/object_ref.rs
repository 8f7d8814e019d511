//! Reading `corev1.ObjectReference`s: the API group and version inside `apiVersion`, and the
//! group/kind pair Cluster API compares references by; how messages name an object.

use std::fmt;

use serde_json::Value;

use super::common::ObjectReference;

/// An object's namespace and name (empty when absent).
pub fn namespace_and_name(object: &Value) -> (&str, &str) {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    (text("/metadata/namespace"), text("/metadata/name"))
}

/// `Kind namespace/name` of an object (`Kind name` for a cluster-scoped one), as messages,
/// events and the ClusterResourceSet preview name it.
pub fn describe(object: &Value) -> String {
    let kind = object
        .pointer("/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match namespace_and_name(object) {
        ("", name) => format!("{kind} {name}"),
        (namespace, name) => format!("{kind} {namespace}/{name}"),
    }
}

/// The API group of an `apiVersion`: `cluster.x-k8s.io/v1beta1` -> `cluster.x-k8s.io`, and the
/// core group `""` for `v1`.
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// The version of an `apiVersion`: `cluster.x-k8s.io/v1beta1` -> `v1beta1`, `v1` -> `v1`.
pub fn api_group_version(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map_or(api_version, |(_, version)| version)
}

/// An API group and kind, the identity of a resource type across versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupKind<'a> {
    /// The API group (`""` for the core group).
    pub group: &'a str,
    /// The kind.
    pub kind: &'a str,
}

impl fmt::Display for GroupKind<'_> {
    /// `Kind.group`, or just `Kind` for the core group (as Kubernetes prints it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

/// Accessors for the parts of an [`ObjectReference`] that are `Option<String>` on the wire;
/// absent parts read as `""`.
pub trait ObjectReferenceExt {
    /// The API group of the reference's `apiVersion`.
    fn group(&self) -> &str;
    /// The version of the reference's `apiVersion`.
    fn version(&self) -> &str;
    /// The referenced kind.
    fn kind_str(&self) -> &str;
    /// The referenced name.
    fn name_str(&self) -> &str;
    /// The referenced namespace.
    fn namespace_str(&self) -> &str;
    /// Group and kind.
    fn group_kind(&self) -> GroupKind<'_>;
}

impl ObjectReferenceExt for ObjectReference {
    fn group(&self) -> &str {
        api_group(self.api_version.as_deref().unwrap_or_default())
    }

    fn version(&self) -> &str {
        api_group_version(self.api_version.as_deref().unwrap_or_default())
    }

    fn kind_str(&self) -> &str {
        self.kind.as_deref().unwrap_or_default()
    }

    fn name_str(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }

    fn namespace_str(&self) -> &str {
        self.namespace.as_deref().unwrap_or_default()
    }

    fn group_kind(&self) -> GroupKind<'_> {
        GroupKind {
            group: self.group(),
            kind: self.kind_str(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_api_versions() {
        assert_eq!(api_group("cluster.x-k8s.io/v1beta1"), "cluster.x-k8s.io");
        assert_eq!(api_group_version("cluster.x-k8s.io/v1beta1"), "v1beta1");
        assert_eq!(api_group("v1"), "");
        assert_eq!(api_group_version("v1"), "v1");
        assert_eq!(api_group(""), "");
        assert_eq!(api_group_version(""), "");
    }

    #[test]
    fn reads_references() {
        let reference: ObjectReference = serde_yaml_ng::from_str(
            "{apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, name: cp, namespace: ns}",
        )
        .unwrap_or_default();
        assert_eq!(reference.group(), "controlplane.cluster.x-k8s.io");
        assert_eq!(reference.version(), "v1beta1");
        assert_eq!(reference.kind_str(), "KubeadmControlPlaneTemplate");
        assert_eq!(reference.name_str(), "cp");
        assert_eq!(reference.namespace_str(), "ns");
        assert_eq!(
            reference.group_kind().to_string(),
            "KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io"
        );
        let empty = ObjectReference::default();
        assert_eq!(empty.group_kind(), GroupKind::default());
        let secret = GroupKind {
            group: "",
            kind: "Secret",
        };
        assert_eq!(secret.to_string(), "Secret");
    }
}
