//! Well-known labels and annotations of cluster.x-k8s.io objects.

/// Names the Cluster an object belongs to.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// Marks objects the topology controller manages.
pub const TOPOLOGY_OWNED_LABEL: &str = "topology.cluster.x-k8s.io/owned";
/// Names the MachineDeployment topology an object belongs to.
pub const TOPOLOGY_DEPLOYMENT_NAME_LABEL: &str = "topology.cluster.x-k8s.io/deployment-name";
/// Names the MachinePool topology an object belongs to.
pub const TOPOLOGY_POOL_NAME_LABEL: &str = "topology.cluster.x-k8s.io/pool-name";
/// Holds a MachineDeployment or MachinePool back from upgrading, and those after it.
pub const TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION: &str = "topology.cluster.x-k8s.io/hold-upgrade-sequence";
/// Defers the upgrade of one MachineDeployment or MachinePool.
pub const TOPOLOGY_DEFER_UPGRADE_ANNOTATION: &str = "topology.cluster.x-k8s.io/defer-upgrade";
/// How many MachineDeployments upgrade at once.
pub const TOPOLOGY_UPGRADE_CONCURRENCY_ANNOTATION: &str = "topology.cluster.x-k8s.io/upgrade-concurrency";
/// Lets `spec.topology.class` be set on an existing Cluster.
pub const UNSAFE_UPDATE_CLASS_NAME_ANNOTATION: &str =
    "unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check";
/// Skips the version change checks of the Cluster webhook.
pub const UNSAFE_UPDATE_VERSION_ANNOTATION: &str =
    "unsafe.topology.cluster.x-k8s.io/disable-update-version-check";
/// Pauses reconciliation of an object.
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
/// The name of the template an object was cloned from.
pub const TEMPLATE_CLONED_FROM_NAME_ANNOTATION: &str = "cluster.x-k8s.io/cloned-from-name";
/// The group and kind of the template an object was cloned from.
pub const TEMPLATE_CLONED_FROM_GROUP_KIND_ANNOTATION: &str = "cluster.x-k8s.io/cloned-from-groupkind";
/// The cluster autoscaler's minimum size of a node group.
pub const AUTOSCALER_MIN_SIZE_ANNOTATION: &str =
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size";
/// The cluster autoscaler's maximum size of a node group.
pub const AUTOSCALER_MAX_SIZE_ANNOTATION: &str =
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size";
/// Says who manages an object's replicas (e.g. an external autoscaler).
pub const REPLICAS_MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/replicas-managed-by";
/// The `from` of variable definitions written inline in a ClusterClass.
pub const VARIABLE_DEFINITION_FROM_INLINE: &str = "inline";
/// The condition the ClusterClass reconciler sets once `status.variables` is up to date.
pub const VARIABLES_RECONCILED_CONDITION: &str = "VariablesReconciled";
