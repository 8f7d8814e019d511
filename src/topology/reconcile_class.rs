//! Whether a Cluster's ClusterClass may be used by the topology controller: it exists, its
//! controller has observed its generation and its variables are reconciled. Pure.

use std::sync::Arc;

use crate::api::labels::{VARIABLES_READY_CONDITION, VARIABLES_RECONCILED_CONDITION};
use crate::api::ClusterClass;
use crate::store::{ClassEntry, ObjectSource};

/// Why a Cluster's class cannot be used yet: the reason and message of the Cluster's
/// `TopologyReconciled` condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassNotUsable {
    /// The condition's reason.
    pub reason: &'static str,
    /// The condition's message.
    pub message: String,
}

impl ClassNotUsable {
    fn new(reason: &'static str, message: String) -> Self {
        Self { reason, message }
    }
}

/// The ClusterClass `class_namespace/class_name`, when it exists and is usable: its controller
/// has observed its generation and reconciled its variables; otherwise why the topology waits.
pub fn usable_class(
    class_namespace: &str,
    class_name: &str,
    source: &dyn ObjectSource,
) -> Result<Arc<ClassEntry>, ClassNotUsable> {
    let Some(entry) = source.cluster_class(class_namespace, class_name) else {
        return Err(ClassNotUsable::new(
            "ClusterClassNotFound",
            format!("ClusterClass {class_namespace}/{} not found", class_name),
        ));
    };
    let class = &entry.class;
    let observed = class.status.as_ref().and_then(|s| s.observed_generation);
    if class.metadata.generation.is_some() && observed != class.metadata.generation {
        return Err(ClassNotUsable::new(
            "ClusterClassNotReconciled",
            format!(
                "ClusterClass {class_namespace}/{} has not been reconciled yet (generation {:?}, observed {:?}); waiting for its status",
                class_name,
                class.metadata.generation.unwrap_or_default(),
                observed.unwrap_or_default()
            ),
        ));
    }
    let variables_ready = variables_ready(class);
    if class.metadata.generation.is_some() && variables_ready.is_none_or(|s| s == "False") {
        return Err(ClassNotUsable::new(
            "ClusterClassNotReconciled",
            format!(
                "ClusterClass is not successfully reconciled: status of {VARIABLES_READY_CONDITION} condition on ClusterClass must be \"True\""
            ),
        ));
    }
    Ok(entry)
}

/// As Cluster API: a class whose variables could not be reconciled (a DiscoverVariables call
/// failed) is not used until they are: the status of `VariablesReady`, else (a status a v1beta1
/// controller wrote) of the deprecated `VariablesReconciled`, as admission reads them.
fn variables_ready(class: &ClusterClass) -> Option<&str> {
    let status = class.status.as_ref();
    let ready = status.and_then(|s| s.conditions.iter().find(|c| c.type_ == VARIABLES_READY_CONDITION));
    ready.map(|c| c.status.as_str()).or_else(|| {
        status
            .and_then(|s| s.deprecated.as_ref()?.v1beta1.as_ref())
            .and_then(|v| {
                v.conditions
                    .iter()
                    .find(|c| c.type_ == VARIABLES_RECONCILED_CONDITION)
            })
            .map(|c| c.status.as_str())
    })
}
