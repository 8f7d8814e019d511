//! The workers' part of a plan: their patch items (a worker's two templates share its
//! variables) and, once patched, their objects.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::blueprint::Blueprint;
use super::builtins::merge;
use super::current::Current;
use super::desired::machine_deployments::{self, MachineDeploymentInput};
use super::desired::machine_pools::{self, label_pool_object, MachinePoolInput};
use super::desired::{
    clone_template, health_checks, merged_metadata, metadata_builtin, owned_labels, worker_annotations,
};
use super::template_names::{
    clone_name, NameSlot, NamedScope, DEPLOYMENT_BOOTSTRAP, DEPLOYMENT_INFRASTRUCTURE,
};
use super::upgrade::WorkerDecision;
use super::workers::{
    pool_object_names, Resolved, ResolvedDeployment, ResolvedPool, WorkerClass, WorkerTopology,
};
use crate::api::labels::{TOPOLOGY_DEPLOYMENT_NAME_LABEL, TOPOLOGY_OWNED_LABEL};
use crate::api::runtime::HolderReference;
use crate::api::{ClusterClassTemplateReference, ClusterVariable};
use crate::patches::selector::Role;

/// A worker to create or update, with its decision and the indexes of its templates among the
/// patch items.
pub(super) struct Planned<W> {
    worker: W,
    decision: WorkerDecision,
    bootstrap: Option<usize>,
    infrastructure: Option<usize>,
}

/// The API version of the Cluster API objects that hold templates.
pub(super) const HOLDER_API_VERSION: &str = super::desired::CAPI_API_VERSION;

/// The variables of one scope (the Cluster, its control plane, one worker), shared by its templates.
#[derive(Debug, Clone)]
pub(super) struct Scope {
    /// The Cluster's values with the scope's overrides on top, and `builtin`.
    pub(super) variables: Arc<Map<String, Value>>,
    /// The scope's overrides, as given.
    pub(super) overrides: Arc<[ClusterVariable]>,
}

/// Adds a template held by `holder` with its scope's variables to the patch items, returning its index.
pub(super) type PushItem<'p> = dyn FnMut(Role, HolderReference, Option<&Value>, &Scope) -> Option<usize> + 'p;

/// A scope from its builtins and its overrides.
pub(super) type ScopeVariables<'p> = dyn Fn(Value, &[ClusterVariable]) -> Scope + 'p;

/// The reference of a holder of a template.
pub(super) fn holder(
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    field_path: &str,
) -> HolderReference {
    HolderReference {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        field_path: field_path.to_owned(),
    }
}

/// What the workers' patch items are made from.
pub(super) struct WorkerScope<'p> {
    pub(super) blueprint: &'p Blueprint,
    pub(super) base: &'p Value,
    /// The Cluster's name (its objects' labels).
    pub(super) cluster_name: &'p str,
    /// The Cluster's namespace (its workers' holder references).
    pub(super) namespace: &'p str,
    pub(super) scope: &'p ScopeVariables<'p>,
}

impl WorkerScope<'_> {
    /// The workers to create or update (those whose creation waits are left out), each with its
    /// two templates added to the patch items through `push`, sharing its variables.
    pub(super) fn items<'a, T: WorkerTopology>(
        &self,
        resolved: Vec<Resolved<'a, T>>,
        decisions: &[WorkerDecision],
        push: &mut PushItem<'_>,
    ) -> Vec<Planned<Resolved<'a, T>>> {
        let mut planned = Vec::new();
        for (worker, decision) in resolved.into_iter().zip(decisions) {
            if !decision.create {
                continue;
            }
            let topology = worker.topology;
            let mut scope = json!({"version": decision.version, "class": topology.class(), "name": worker.name,
                "topologyName": topology.name()});
            if let Some(replicas) = topology.replicas() {
                scope["replicas"] = json!(replicas);
            }
            let mut fixed = owned_labels(self.cluster_name);
            fixed.insert(T::NAME_LABEL.to_owned(), topology.name().to_owned());
            let (labels, annotations) =
                merged_metadata(&[worker.class.metadata(), topology.metadata()], fixed);
            scope["metadata"] = metadata_builtin(labels, worker_annotations(annotations));
            if let Some([bootstrap, infrastructure]) =
                T::instantiated_names(worker.current, self.cluster_name, topology.name())
            {
                scope["bootstrap"] = json!({"configRef": {"name": bootstrap}});
                scope["infrastructureRef"] = json!({"name": infrastructure});
            }
            // The scope moved in (`json!` would copy it through serialization).
            let builtin = Value::Object(Map::from_iter([(T::SCOPE.to_owned(), scope)]));
            let variables = (self.scope)(merge(self.base, builtin), topology.overrides());
            let role = T::role(topology.class());
            let template = |reference: &ClusterClassTemplateReference| self.blueprint.template(reference);
            let held = |field_path| {
                holder(
                    HOLDER_API_VERSION,
                    T::KIND,
                    self.namespace,
                    &worker.name,
                    field_path,
                )
            };
            let bootstrap = push(
                role.clone(),
                held("spec.template.spec.bootstrap.configRef"),
                template(worker.class.bootstrap()),
                &variables,
            );
            let infrastructure = push(
                role,
                held("spec.template.spec.infrastructureRef"),
                template(worker.class.infrastructure()),
                &variables,
            );
            planned.push(Planned {
                worker,
                decision: decision.clone(),
                bootstrap,
                infrastructure,
            });
        }
        planned
    }
}

/// A patched template, taken (not copied) by the object built from it, with the name its clone
/// was given while patching (see `template_names`), if any.
pub(super) type Patched = (Value, Option<String>);

/// Takes the patched template of a patch item.
pub(super) type TakePatched<'t> = dyn FnMut(Option<usize>) -> Option<Patched> + 't;

/// The object reference at `path` below the machine template spec of `worker`, or null.
fn machine_reference<'v>(worker: Option<&'v Value>, path: &[&str]) -> &'v Value {
    worker.map_or(&Value::Null, |object| {
        path.iter()
            .fold(&object["spec"]["template"]["spec"], |v, k| &v[*k])
    })
}

/// The start of the names of a MachineDeployment's template clones, as Cluster API's:
/// `{cluster}-{topology}`.
fn template_prefix(cluster_name: &str, topology_name: &str) -> String {
    format!("{cluster_name}-{topology_name}")
}

const BOOTSTRAP_REF: &[&str] = &["bootstrap", "configRef"];
const INFRASTRUCTURE_REF: &[&str] = &["infrastructureRef"];

impl Planned<ResolvedDeployment<'_>> {
    /// The generated names of this MachineDeployment's template clones, for patches that read them.
    pub(super) fn named_scope<'c>(&self, current: &'c Current, cluster_name: &str) -> NamedScope<'c> {
        let md = &self.worker;
        let prefix = template_prefix(cluster_name, &md.topology.name);
        let mut slots = Vec::new();
        for (item, path, reference) in [
            (self.bootstrap, DEPLOYMENT_BOOTSTRAP, BOOTSTRAP_REF),
            (self.infrastructure, DEPLOYMENT_INFRASTRUCTURE, INFRASTRUCTURE_REF),
        ] {
            if let Some(item) = item {
                let reference = machine_reference(md.current, reference);
                slots.push(NameSlot::new(item, path, prefix.clone(), reference, current));
            }
        }
        NamedScope {
            items: self.bootstrap.into_iter().chain(self.infrastructure).collect(),
            slots,
        }
    }
}

/// A MachineDeployment's objects: its bootstrap and infrastructure template clones (reused while
/// unchanged, renamed when their content changes), itself and its health check.
pub(super) fn deployment_objects(
    planned: &Planned<ResolvedDeployment<'_>>,
    take: &mut TakePatched<'_>,
    current: &Current,
    namespace: &str,
    cluster_name: &str,
) -> Vec<Value> {
    let md = &planned.worker;
    let prefix = template_prefix(cluster_name, &md.topology.name);
    let mut clone = |index: Option<usize>, path: &[&str]| {
        take(index).map(|(template, settled)| {
            let name = settled.unwrap_or_else(|| {
                clone_name(
                    current,
                    machine_reference(md.current, path),
                    &prefix,
                    &template["spec"],
                )
            });
            let mut clone = clone_template(template, &name, namespace, cluster_name, false);
            if let Some(labels) = clone["metadata"]["labels"].as_object_mut() {
                labels.insert(TOPOLOGY_DEPLOYMENT_NAME_LABEL.to_owned(), json!(md.topology.name));
            }
            clone
        })
    };
    let (Some(bootstrap), Some(infrastructure)) = (
        clone(planned.bootstrap, BOOTSTRAP_REF),
        clone(planned.infrastructure, INFRASTRUCTURE_REF),
    ) else {
        return Vec::new();
    };
    let object = machine_deployments::desired(&MachineDeploymentInput {
        name: &md.name,
        namespace,
        cluster: cluster_name,
        version: &planned.decision.version,
        rollout_after: planned.decision.rollout_after.as_deref(),
        class: md.class,
        topology: md.topology,
        bootstrap: &bootstrap,
        infrastructure: &infrastructure,
    });
    let mut objects = vec![bootstrap, infrastructure, object];
    if let Some(check) = health_checks::effective(&md.class.health_check, &md.topology.health_check) {
        let selector = Map::from_iter([
            (TOPOLOGY_DEPLOYMENT_NAME_LABEL.to_owned(), json!(md.topology.name)),
            (TOPOLOGY_OWNED_LABEL.to_owned(), json!("")),
        ]);
        objects.push(health_checks::desired(
            &md.name,
            namespace,
            cluster_name,
            selector,
            &check,
        ));
    }
    objects
}

/// A MachinePool's objects: its bootstrap config and infrastructure machine pool, instantiated
/// from the class's templates and kept under their current names (updated in place), then itself.
pub(super) fn pool_objects(
    planned: &Planned<ResolvedPool<'_>>,
    take: &mut TakePatched<'_>,
    namespace: &str,
    cluster_name: &str,
) -> Vec<Value> {
    let mp = &planned.worker;
    let [bootstrap_name, infrastructure_name] =
        pool_object_names(mp.current, cluster_name, &mp.topology.name);
    let mut instantiate = |index: Option<usize>, name: &str| {
        take(index).map(|(template, _)| {
            let mut object = clone_template(template, name, namespace, cluster_name, true);
            label_pool_object(&mut object, &mp.topology.name);
            object
        })
    };
    let (Some(bootstrap), Some(infrastructure)) = (
        instantiate(planned.bootstrap, &bootstrap_name),
        instantiate(planned.infrastructure, &infrastructure_name),
    ) else {
        return Vec::new();
    };
    let object = machine_pools::desired(&MachinePoolInput {
        name: &mp.name,
        namespace,
        cluster: cluster_name,
        version: &planned.decision.version,
        class: mp.class,
        topology: mp.topology,
        bootstrap: &bootstrap,
        infrastructure: &infrastructure,
    });
    vec![bootstrap, infrastructure, object]
}
