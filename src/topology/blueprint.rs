//! A ClusterClass compiled once: the class, its resolved templates and its compiled patches.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::error::TopologyError;
use crate::api::{ClusterClass, ObjectReference};
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
}

impl Blueprint {
    /// Resolves every template the class references from `source` and compiles its inline patches.
    pub fn new(class: ClusterClass, source: &dyn ObjectSource) -> Result<Self, TopologyError> {
        let namespace = class.metadata.namespace.clone().unwrap_or_default();
        let class_name = class.metadata.name.clone().unwrap_or_default();
        let mut refs: Vec<(&str, Option<&ObjectReference>)> =
            vec![("infrastructure", class.spec.infrastructure.r#ref.as_ref())];
        refs.push(("controlPlane", class.spec.control_plane.r#ref.as_ref()));
        if let Some(machine) = &class.spec.control_plane.machine_infrastructure {
            refs.push(("controlPlane.machineInfrastructure", machine.r#ref.as_ref()));
        }
        for md in &class.spec.workers.machine_deployments {
            refs.push(("bootstrap", md.template.bootstrap.r#ref.as_ref()));
            refs.push(("infrastructure", md.template.infrastructure.r#ref.as_ref()));
        }
        for mp in &class.spec.workers.machine_pools {
            refs.push(("bootstrap", mp.template.bootstrap.r#ref.as_ref()));
            refs.push(("infrastructure", mp.template.infrastructure.r#ref.as_ref()));
        }
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
        Ok(Blueprint {
            class,
            templates,
            patches,
            reads_generated_names,
        })
    }

    /// The resolved template a class reference points to.
    pub fn template(&self, template: Option<&ObjectReference>) -> Option<&Value> {
        let (_, kind, name) = reference(template)?;
        self.templates.get(kind)?.get(name).map(|object| &**object)
    }
}

/// `(apiVersion, kind, name)` of a class reference, when complete.
fn reference(template: Option<&ObjectReference>) -> Option<(&str, &str, &str)> {
    let r = template?;
    Some((r.api_version.as_deref()?, r.kind.as_deref()?, r.name.as_deref()?))
}
