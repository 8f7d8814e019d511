//! The worker topologies of a Cluster (MachineDeployments and MachinePools) resolved against the
//! class and the current objects: their classes, names and what sequencing needs to know.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::current::Current;
use super::error::TopologyError;
use super::names;
use super::upgrade::{CurrentWorker, Worker};
use crate::api::labels::{
    CLUSTER_NAME_LABEL, MACHINE_POOL_NAME_LABEL, TOPOLOGY_DEPLOYMENT_NAME_LABEL, TOPOLOGY_POOL_NAME_LABEL,
};
use crate::api::{
    ClusterClass, ClusterClassTemplateReference, ClusterVariable, MachineDeploymentClass,
    MachineDeploymentTopology, MachinePoolClass, MachinePoolTopology, NamingStrategy, TopologyMetadata,
};
use crate::patches::selector::Role;

/// A kind of worker topology entry and what it shares with the other kind.
pub trait WorkerTopology {
    /// Its class in the ClusterClass.
    type Class: WorkerClass;
    /// `MachineDeployment` or `MachinePool`.
    const KIND: &'static str;
    /// Its key among the builtin variables and naming data (`machineDeployment`, `machinePool`).
    const SCOPE: &'static str;
    /// Its name in the topology.
    fn name(&self) -> &str;
    /// The class it names.
    fn class(&self) -> &str;
    /// Its replicas, when set.
    fn replicas(&self) -> Option<i32>;
    /// Its variable overrides.
    fn overrides(&self) -> &[ClusterVariable];
    /// Its annotations (read for upgrade sequencing).
    fn annotations(&self) -> &BTreeMap<String, String>;
    /// Its labels and annotations.
    fn metadata(&self) -> &TopologyMetadata;
    /// The label naming its topology entry on its objects (`topology.cluster.x-k8s.io/deployment-name`).
    const NAME_LABEL: &'static str;
    /// The classes of this kind a ClusterClass defines.
    fn classes(class: &ClusterClass) -> &[Self::Class];
    /// Its current object, found by the topology name label.
    fn current<'a>(current: &'a Current, topology_name: &str) -> Option<&'a Value>;
    /// The patch selector role of its templates.
    fn role(class: &str) -> Role;
    /// The names of the bootstrap and infrastructure objects it instantiates from its class's
    /// templates, known before patching; none when it clones templates instead (their names
    /// follow their patched content).
    fn instantiated_names(current: Option<&Value>, cluster: &str, topology_name: &str)
        -> Option<[String; 2]>;
}

/// A worker class of either kind.
pub trait WorkerClass {
    /// The class's name.
    fn name(&self) -> &str;
    /// Its naming strategy, when set.
    fn naming_strategy(&self) -> Option<&NamingStrategy>;
    /// The metadata of its objects.
    fn metadata(&self) -> &TopologyMetadata;
    /// Its bootstrap template.
    fn bootstrap(&self) -> &ClusterClassTemplateReference;
    /// Its infrastructure template.
    fn infrastructure(&self) -> &ClusterClassTemplateReference;
}

/// The accessors both topology entry types implement the same way (their fields share names).
macro_rules! topology_fields {
    () => {
        fn name(&self) -> &str {
            &self.name
        }
        fn class(&self) -> &str {
            &self.class
        }
        fn replicas(&self) -> Option<i32> {
            self.replicas
        }
        fn overrides(&self) -> &[ClusterVariable] {
            &self.variables.overrides
        }
        fn annotations(&self) -> &BTreeMap<String, String> {
            &self.metadata.annotations
        }
        fn metadata(&self) -> &TopologyMetadata {
            &self.metadata
        }
    };
}

impl WorkerTopology for MachineDeploymentTopology {
    type Class = MachineDeploymentClass;
    const KIND: &'static str = "MachineDeployment";
    const SCOPE: &'static str = "machineDeployment";
    const NAME_LABEL: &'static str = TOPOLOGY_DEPLOYMENT_NAME_LABEL;
    topology_fields!();
    fn classes(class: &ClusterClass) -> &[MachineDeploymentClass] {
        &class.spec.workers.machine_deployments
    }
    fn current<'a>(current: &'a Current, topology_name: &str) -> Option<&'a Value> {
        current.machine_deployment(topology_name)
    }
    fn role(class: &str) -> Role {
        Role::MachineDeployment {
            class: class.to_owned(),
        }
    }
    fn instantiated_names(_: Option<&Value>, _: &str, _: &str) -> Option<[String; 2]> {
        None
    }
}

impl WorkerTopology for MachinePoolTopology {
    type Class = MachinePoolClass;
    const KIND: &'static str = "MachinePool";
    const SCOPE: &'static str = "machinePool";
    const NAME_LABEL: &'static str = TOPOLOGY_POOL_NAME_LABEL;
    topology_fields!();
    fn classes(class: &ClusterClass) -> &[MachinePoolClass] {
        &class.spec.workers.machine_pools
    }
    fn current<'a>(current: &'a Current, topology_name: &str) -> Option<&'a Value> {
        current.machine_pool(topology_name)
    }
    fn role(class: &str) -> Role {
        Role::MachinePool {
            class: class.to_owned(),
        }
    }
    fn instantiated_names(
        current: Option<&Value>,
        cluster: &str,
        topology_name: &str,
    ) -> Option<[String; 2]> {
        Some(pool_object_names(current, cluster, topology_name))
    }
}

/// The names of a MachinePool's bootstrap config and infrastructure machine pool: those its
/// current object references, else `{cluster}-{topology}-{suffix}` (kept for the pool's life).
pub fn pool_object_names(current: Option<&Value>, cluster: &str, topology_name: &str) -> [String; 2] {
    let machine = current.map_or(&Value::Null, |object| &object["spec"]["template"]["spec"]);
    let prefix = format!("{cluster}-{topology_name}");
    let name = |reference: &Value, role: &str| {
        reference["name"]
            .as_str()
            .map_or_else(|| names::object_name(&prefix, role), str::to_owned)
    };
    [
        name(&machine["bootstrap"]["configRef"], "bootstrap"),
        name(&machine["infrastructureRef"], "infrastructure"),
    ]
}

/// Both worker class types implement [`WorkerClass`] the same way (their fields share names).
macro_rules! worker_class {
    ($($class:ty),*) => {$(
        impl WorkerClass for $class {
            fn name(&self) -> &str {
                &self.class
            }
            fn naming_strategy(&self) -> Option<&NamingStrategy> {
                Some(&self.naming)
            }
            fn metadata(&self) -> &TopologyMetadata {
                &self.metadata
            }
            fn bootstrap(&self) -> &ClusterClassTemplateReference {
                &self.bootstrap.template_ref
            }
            fn infrastructure(&self) -> &ClusterClassTemplateReference {
                &self.infrastructure.template_ref
            }
        }
    )*};
}

worker_class!(MachineDeploymentClass, MachinePoolClass);

/// A worker topology with its class, its object's name and its current object.
#[derive(Debug, Clone)]
pub struct Resolved<'a, T: WorkerTopology> {
    /// The topology entry.
    pub topology: &'a T,
    /// The class it names.
    pub class: &'a T::Class,
    /// The object's name: the current one's, else from the naming strategy.
    pub name: String,
    /// The current object, when it exists.
    pub current: Option<&'a Value>,
}

/// A resolved MachineDeployment topology.
pub type ResolvedDeployment<'a> = Resolved<'a, MachineDeploymentTopology>;
/// A resolved MachinePool topology.
pub type ResolvedPool<'a> = Resolved<'a, MachinePoolTopology>;

/// Every entry of `topologies`, in order, with its class, name and current object. The name is
/// the current object's, else one from the class's naming strategy (data `{cluster.name,
/// <scope>.topologyName}`), else `{cluster}-{topology}-{suffix}`.
pub fn resolve<'a, T: WorkerTopology>(
    class: &'a ClusterClass,
    topologies: &'a [T],
    current: &'a Current,
    cluster: &str,
) -> Result<Vec<Resolved<'a, T>>, TopologyError> {
    topologies
        .iter()
        .map(|topology| {
            let worker_class = T::classes(class)
                .iter()
                .find(|c| c.name() == topology.class())
                .ok_or_else(|| TopologyError::UnknownWorkerClass {
                    kind: T::KIND,
                    name: topology.name().to_owned(),
                    class: topology.class().to_owned(),
                })?;
            let current = T::current(current, topology.name());
            let name = match current.and_then(|o| o["metadata"]["name"].as_str()) {
                Some(name) => name.to_owned(),
                None => names::from_strategy(
                    worker_class.naming_strategy(),
                    || json!({"cluster": {"name": cluster}, T::SCOPE: {"topologyName": topology.name()}}),
                    &format!("{cluster}-{}", topology.name()),
                    topology.class(),
                )?,
            };
            Ok(Resolved {
                topology,
                class: worker_class,
                name,
                current,
            })
        })
        .collect()
}

/// What sequencing reads of a MachineDeployment: its version, rollout and whether its machines
/// (picked by its selector) still run other versions.
pub fn deployment_worker<'a>(md: &'a ResolvedDeployment<'a>, current: &Current) -> Worker<'a> {
    let existing = md.current.and_then(current_worker);
    let selector = md
        .current
        .map_or(&Value::Null, |object| &object["spec"]["selector"]);
    worker(md.topology, existing, selector, current)
}

/// What sequencing reads of a MachinePool: its version and whether its machines (labelled with
/// its name) still run other versions.
pub fn pool_worker<'a>(mp: &'a ResolvedPool<'a>, current: &Current, cluster: &str) -> Worker<'a> {
    let existing = mp.current.and_then(current_worker);
    let selector = json!({"matchLabels": {CLUSTER_NAME_LABEL: cluster, MACHINE_POOL_NAME_LABEL: mp.name}});
    worker(mp.topology, existing, &selector, current)
}

fn worker<'a, T: WorkerTopology>(
    topology: &'a T,
    existing: Option<CurrentWorker<'a>>,
    selector: &Value,
    current: &Current,
) -> Worker<'a> {
    Worker {
        topology_name: topology.name(),
        annotations: topology.annotations(),
        current: existing,
        rolling_out: existing.is_some_and(|w| current.machines_differ(selector, w.version)),
    }
}

/// The name, version and rollout of an existing worker object (none without a version).
fn current_worker(object: &Value) -> Option<CurrentWorker<'_>> {
    Some(CurrentWorker {
        name: object["metadata"]["name"].as_str()?,
        version: object["spec"]["template"]["spec"]["version"].as_str()?,
        rollout_after: object["spec"]["rollout"]["after"].as_str(),
    })
}
