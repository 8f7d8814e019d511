//! The rules of each admitted kind behind one trait, so the review runs them alike.

use json_patch::Patch;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::class_rollout::{self, AdmittedRollout};
use super::webhook::Kind;
use super::{
    cluster, cluster_class, cluster_resource_set, cluster_resource_set_binding, extension_config, Outcome,
};
use crate::api::runtime::ExtensionConfig;
use crate::api::{Cluster, ClusterClass, ClusterResourceSet, ClusterResourceSetBinding};
use crate::store::ObjectSource;

/// The rules of one admitted kind, as the webhooks run them.
pub(super) trait Admitted: Serialize + DeserializeOwned + Clone {
    /// The kind, for the answer's Status.
    const KIND: Kind;
    /// `metadata.name`.
    fn name(&self) -> &str;
    /// `apiVersion` and `kind` as decoded.
    fn type_meta(&self) -> (&str, &str);
    /// Defaults the object and gives the JSONPatch of what changed; by default (a kind without
    /// defaulting, whose mutating path is kept) nothing changes.
    fn default(
        &mut self,
        _old: Option<&Self>,
        _source: &dyn ObjectSource,
    ) -> Result<(Outcome, Patch), String> {
        Ok((Outcome::default(), Patch(Vec::new())))
    }
    /// Validates a create (`old` is None) or an update.
    fn validate(&self, old: Option<&Self>, source: &dyn ObjectSource) -> Outcome;
    /// Validates a delete of `old`; by default any delete is allowed.
    fn validate_delete(_old: &Self, _source: &dyn ObjectSource) -> Outcome {
        Outcome::default()
    }
}

impl Admitted for Cluster {
    const KIND: Kind = Kind::Cluster;
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    fn default(&mut self, old: Option<&Self>, source: &dyn ObjectSource) -> Result<(Outcome, Patch), String> {
        Ok(cluster::default(self, old, source))
    }
    fn validate(&self, old: Option<&Self>, source: &dyn ObjectSource) -> Outcome {
        cluster::validate(self, old, source)
    }
}

/// Cluster API v1.14 has no ClusterClass defaulting: the endpoint kept at the v1beta1 mutating
/// path changes nothing.
impl Admitted for ClusterClass {
    const KIND: Kind = Kind::ClusterClass;
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    fn validate(&self, old: Option<&Self>, source: &dyn ObjectSource) -> Outcome {
        cluster_class::validate(self, old, source)
    }
    fn validate_delete(old: &Self, source: &dyn ObjectSource) -> Outcome {
        cluster_class::validate_delete(old, source)
    }
}

impl Admitted for ClusterResourceSet {
    const KIND: Kind = Kind::ClusterResourceSet;
    fn name(&self) -> &str {
        ClusterResourceSet::name(self)
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    fn default(
        &mut self,
        _old: Option<&Self>,
        _source: &dyn ObjectSource,
    ) -> Result<(Outcome, Patch), String> {
        diffed(self, cluster_resource_set::default)
    }
    fn validate(&self, old: Option<&Self>, _source: &dyn ObjectSource) -> Outcome {
        cluster_resource_set::validate(self, old)
    }
}

/// A binding has no mutating webhook: nothing is defaulted, and a delete is always allowed.
impl Admitted for ClusterResourceSetBinding {
    const KIND: Kind = Kind::ClusterResourceSetBinding;
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    fn validate(&self, old: Option<&Self>, _source: &dyn ObjectSource) -> Outcome {
        cluster_resource_set_binding::validate(self, old)
    }
}

impl Admitted for ExtensionConfig {
    const KIND: Kind = Kind::ExtensionConfig;
    fn name(&self) -> &str {
        ExtensionConfig::name(self)
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    fn default(
        &mut self,
        _old: Option<&Self>,
        _source: &dyn ObjectSource,
    ) -> Result<(Outcome, Patch), String> {
        diffed(self, extension_config::default)
    }
    fn validate(&self, _old: Option<&Self>, _source: &dyn ObjectSource) -> Outcome {
        extension_config::validate(self)
    }
}

/// Our own ClusterClassRollout: validated only, by the rules its controller applies.
impl Admitted for AdmittedRollout {
    const KIND: Kind = Kind::ClusterClassRollout;
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    fn validate(&self, old: Option<&Self>, _source: &dyn ObjectSource) -> Outcome {
        class_rollout::validate(self, old)
    }
}

/// Runs `default` on `object` and gives the JSONPatch from its typed serialisation before to
/// after, so fields our types do not know never appear in the patch.
fn diffed<T: Admitted>(object: &mut T, default: impl FnOnce(&mut T)) -> Result<(Outcome, Patch), String> {
    let encode = |object: &T| {
        serde_json::to_value(object).map_err(|err| format!("cannot encode {}: {err}", T::KIND.name()))
    };
    let before = encode(object)?;
    default(object);
    Ok((Outcome::default(), super::diff::diff(&before, &encode(object)?)))
}
