//! Why a desired state could not be computed.

use crate::patches::inline::PatchError;

/// An error of the topology engine.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TopologyError {
    /// The Cluster has no `spec.topology`.
    #[error("Cluster {0:?} has no spec.topology")]
    NoTopology(String),
    /// A template referenced by the class is missing from the object source.
    #[error("{kind} {namespace}/{name} referenced by ClusterClass {class:?} not found")]
    MissingTemplate {
        /// The class.
        class: String,
        /// The template's kind.
        kind: String,
        /// The template's namespace.
        namespace: String,
        /// The template's name.
        name: String,
    },
    /// A class reference has no kind or name.
    #[error("ClusterClass {class:?}: {what} reference is incomplete")]
    IncompleteReference {
        /// The class.
        class: String,
        /// Which reference.
        what: String,
    },
    /// A worker topology names a class the ClusterClass does not define.
    #[error("{kind} topology {name:?}: class {class:?} not found in the ClusterClass")]
    UnknownWorkerClass {
        /// `MachineDeployment` or `MachinePool`.
        kind: &'static str,
        /// The topology's name.
        name: String,
        /// The missing class.
        class: String,
    },
    /// A naming strategy's template failed.
    #[error("naming strategy template {template:?}: {reason}")]
    Naming {
        /// The template.
        template: String,
        /// Why it failed.
        reason: String,
    },
    /// An external patch failed to generate or validate.
    #[error("external patch {patch:?}: {reason}")]
    External {
        /// The patch's name.
        patch: String,
        /// What the extension said.
        reason: String,
    },
    /// The upgrade plan could not be computed, or is not valid.
    #[error("failed to compute the upgrade plan: {reason}")]
    UpgradePlan {
        /// Why.
        reason: String,
    },
    /// A lifecycle hook call failed.
    #[error("error calling the {hook} hook: {reason}")]
    LifecycleHook {
        /// The hook's name.
        hook: String,
        /// What the call or its handlers said.
        reason: String,
    },
    /// A patch failed (the message names the patch, definition and op).
    #[error(transparent)]
    Patch(#[from] PatchError),
}
