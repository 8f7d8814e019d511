//! A ClusterClass compiled once: the class, its resolved templates and its compiled patches.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::error::TopologyError;
use crate::api::{ClusterClass, ClusterClassTemplateReference};
use crate::patches::builtin_reads::reads_generated_names;
use crate::patches::inline::CompiledPatch;
use crate::store::{group_of, ObjectSource};

/// Everything a plan needs from a ClusterClass, resolved and compiled.
#[derive(Debug, Clone)]
pub struct Blueprint {
    /// The class.
    pub class: ClusterClass,
    /// Templates by kind, then name, as referenced by the class (shared with the source they
    /// were read from; a plan copies each into its patch items).
    templates: BTreeMap<String, BTreeMap<String, Arc<Value>>>,
    /// The class's inline patches, compiled, in order (external patches are skipped here).
    pub patches: Vec<CompiledPatch>,
    /// Whether some patch may read the generated template names among the builtins (then a plan
    /// settles those names before the final patching; see `template_names`).
    pub reads_generated_names: bool,
    /// The Cluster API contract (`v1beta1`, `v1beta2`) of the control plane's kind: from its
    /// CRD's contract label when the source knows the CRD, else the version of the control plane
    /// template's apiVersion (see [`ObjectSource::contract_of`]). It decides the paths the
    /// control plane's fields are written at, as Cluster API's `contract` package does.
    pub control_plane_contract: String,
}

impl Blueprint {
    /// Resolves every template the class references from `source` and compiles its inline patches.
    pub fn new(class: ClusterClass, source: &dyn ObjectSource) -> Result<Self, TopologyError> {
        let namespace = class.metadata.namespace.clone().unwrap_or_default();
        let class_name = class.metadata.name.clone().unwrap_or_default();
        let refs = template_references(&class);
        let mut templates: BTreeMap<String, BTreeMap<String, Arc<Value>>> = BTreeMap::new();
        for (what, template) in refs {
            let (api_version, kind, name) =
                reference(template).ok_or_else(|| TopologyError::IncompleteReference {
                    class: class_name.clone(),
                    what: what.to_owned(),
                })?;
            let object = source
                .get(group_of(api_version), kind, &namespace, name)
                .ok_or_else(|| TopologyError::MissingTemplate {
                    class: class_name.clone(),
                    kind: kind.to_owned(),
                    namespace: namespace.clone(),
                    name: name.to_owned(),
                })?;
            templates
                .entry(kind.to_owned())
                .or_default()
                .insert(name.to_owned(), object);
        }
        let patches = class
            .spec
            .patches
            .iter()
            .filter(|patch| patch.external.is_none())
            .map(CompiledPatch::compile)
            .collect::<Result<Vec<_>, _>>()?;
        let reads_generated_names = class.spec.patches.iter().any(reads_generated_names);
        let cp_ref = &class.spec.control_plane.template_ref;
        // The version the template is held at (the watch cache reads provider kinds at the
        // contract's newest version), which the control plane is written at.
        let held = reference(cp_ref)
            .and_then(|(_, kind, name)| templates.get(kind)?.get(name))
            .and_then(|template| template["apiVersion"].as_str())
            .unwrap_or(&cp_ref.api_version);
        let control_plane_contract = contract_of(source, held, &cp_ref.kind);
        Ok(Blueprint {
            class,
            templates,
            patches,
            reads_generated_names,
            control_plane_contract,
        })
    }

    /// The resolved template a class reference points to.
    pub fn template(&self, template: &ClusterClassTemplateReference) -> Option<&Value> {
        let (_, kind, name) = reference(template)?;
        self.templates.get(kind)?.get(name).map(|object| &**object)
    }

    /// True when the control plane follows the v1beta1 contract (its old field paths).
    pub fn control_plane_is_v1beta1(&self) -> bool {
        self.control_plane_contract == "v1beta1"
    }
}

/// Every template reference of `class`, each with what it is for (`infrastructure`,
/// `controlPlane`, `controlPlane.machineInfrastructure`, `bootstrap`), in the class's order.
pub fn template_references(class: &ClusterClass) -> Vec<(&'static str, &ClusterClassTemplateReference)> {
    let mut refs: Vec<(&'static str, &ClusterClassTemplateReference)> =
        vec![("infrastructure", &class.spec.infrastructure.template_ref)];
    refs.push(("controlPlane", &class.spec.control_plane.template_ref));
    if let Some(machine) = class.spec.control_plane.machine_infrastructure_ref() {
        refs.push(("controlPlane.machineInfrastructure", machine));
    }
    for md in &class.spec.workers.machine_deployments {
        refs.push(("bootstrap", &md.bootstrap.template_ref));
        refs.push(("infrastructure", &md.infrastructure.template_ref));
    }
    for mp in &class.spec.workers.machine_pools {
        refs.push(("bootstrap", &mp.bootstrap.template_ref));
        refs.push(("infrastructure", &mp.infrastructure.template_ref));
    }
    refs
}

/// The contract of the object a template of `api_version` and `kind` makes (same apiVersion,
/// the kind without `Template`): the source's answer from the kind's CRD, else the version of
/// the apiVersion (`.../v1beta2` -> `v1beta2`) when no CRD is known, as offline plans mostly have
/// none.
fn contract_of(source: &dyn ObjectSource, api_version: &str, kind: &str) -> String {
    let kind = kind.strip_suffix("Template").unwrap_or(kind);
    let version = api_version.rsplit('/').next().unwrap_or_default();
    source
        .contract_of(group_of(api_version), kind, version)
        .unwrap_or_else(|| version.to_owned())
}

/// `(apiVersion, kind, name)` of a class reference, when complete.
/// A reference's apiVersion, kind and name, when none is empty.
pub fn reference(template: &ClusterClassTemplateReference) -> Option<(&str, &str, &str)> {
    let r = template;
    let complete = !(r.api_version.is_empty() || r.kind.is_empty() || r.name.is_empty());
    complete.then_some((r.api_version.as_str(), r.kind.as_str(), r.name.as_str()))
}
