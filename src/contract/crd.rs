//! A CustomResourceDefinition as the contract checks read it: names, scope, labels, and the
//! openAPIV3Schema of each version.

use std::collections::BTreeMap;

use serde_json::Value;

/// The parts of a CRD the contract is about.
#[derive(Debug, Clone)]
pub struct Crd<'a> {
    /// `metadata.name`.
    pub name: &'a str,
    /// `spec.group`.
    pub group: &'a str,
    /// `spec.names.kind`.
    pub kind: &'a str,
    /// `spec.names.plural`.
    pub plural: &'a str,
    /// `spec.scope`.
    pub scope: &'a str,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `spec.versions`, in order.
    pub versions: Vec<CrdVersion<'a>>,
}

/// One entry of `spec.versions`.
#[derive(Debug, Clone)]
pub struct CrdVersion<'a> {
    /// `name`.
    pub name: &'a str,
    /// `served`.
    pub served: bool,
    /// `storage`.
    pub storage: bool,
    /// `schema.openAPIV3Schema`, when given.
    pub schema: Option<&'a Value>,
}

/// The string-valued `metadata.labels` of an object (a CRD's contract labels among them).
pub fn labels_of(object: &Value) -> BTreeMap<String, String> {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .collect()
}

impl<'a> Crd<'a> {
    /// Reads `object` as a CRD; `None` for any other object.
    pub fn read(object: &'a Value) -> Option<Crd<'a>> {
        let api_version = object.get("apiVersion")?.as_str()?;
        if !api_version.starts_with("apiextensions.k8s.io/")
            || object.get("kind")?.as_str()? != "CustomResourceDefinition"
        {
            return None;
        }
        let text = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let labels = labels_of(object);
        let versions = object
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(|versions| versions.iter().map(CrdVersion::read).collect())
            .unwrap_or_default();
        Some(Crd {
            name: text("/metadata/name"),
            group: text("/spec/group"),
            kind: text("/spec/names/kind"),
            plural: text("/spec/names/plural"),
            scope: text("/spec/scope"),
            labels,
            versions,
        })
    }

    /// The version named `name`.
    pub fn version(&self, name: &str) -> Option<&CrdVersion<'a>> {
        self.versions.iter().find(|v| v.name == name)
    }

    /// The storage version (the first version when none is marked).
    pub fn storage_version(&self) -> Option<&CrdVersion<'a>> {
        self.versions.iter().find(|v| v.storage).or(self.versions.first())
    }
}

impl<'a> CrdVersion<'a> {
    fn read(version: &'a Value) -> CrdVersion<'a> {
        CrdVersion {
            name: version.get("name").and_then(Value::as_str).unwrap_or_default(),
            served: version.get("served").and_then(Value::as_bool).unwrap_or(false),
            storage: version.get("storage").and_then(Value::as_bool).unwrap_or(false),
            schema: version.pointer("/schema/openAPIV3Schema"),
        }
    }
}
