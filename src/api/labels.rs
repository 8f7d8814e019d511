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
/// The control plane version of the upgrade step in progress, on the Cluster (only while upgrading).
pub const TOPOLOGY_UPGRADE_STEP_ANNOTATION: &str = "topology.internal.cluster.x-k8s.io/upgrade-step";
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
/// Its v1beta2 (metav1) counterpart, which Cluster API v1.14's topology controller reads.
pub const VARIABLES_READY_CONDITION: &str = "VariablesReady";
/// Names the Cluster an object belongs to, as an annotation (on Nodes).
pub const CLUSTER_NAME_ANNOTATION: &str = "cluster.x-k8s.io/cluster-name";
/// Names the namespace of the Cluster an object belongs to (on Nodes).
pub const CLUSTER_NAMESPACE_ANNOTATION: &str = "cluster.x-k8s.io/cluster-namespace";
/// Names the provider of a component.
pub const PROVIDER_NAME_LABEL: &str = "cluster.x-k8s.io/provider";
/// Marks control plane Machines.
pub const MACHINE_CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";
/// Names the control plane a Machine belongs to.
pub const MACHINE_CONTROL_PLANE_NAME_LABEL: &str = "cluster.x-k8s.io/control-plane-name";
/// Names the MachineSet a Machine belongs to.
pub const MACHINE_SET_NAME_LABEL: &str = "cluster.x-k8s.io/set-name";
/// Names the MachineDeployment a MachineSet or Machine belongs to.
pub const MACHINE_DEPLOYMENT_NAME_LABEL: &str = "cluster.x-k8s.io/deployment-name";
/// Names the MachinePool a Machine belongs to.
pub const MACHINE_POOL_NAME_LABEL: &str = "cluster.x-k8s.io/pool-name";
/// Makes a controller reconcile only objects with its value.
pub const WATCH_LABEL: &str = "cluster.x-k8s.io/watch-filter";
/// Marks infrastructure managed outside Cluster API.
pub const MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/managed-by";
/// Marks objects produced by a topology dry run.
pub const TOPOLOGY_DRY_RUN_ANNOTATION: &str = "topology.cluster.x-k8s.io/dry-run";
/// Prefix of annotations that block a Cluster upgrade until a runtime hook lets it through.
pub const BEFORE_CLUSTER_UPGRADE_HOOK_ANNOTATION_PREFIX: &str =
    "before-upgrade.hook.cluster.cluster.x-k8s.io";
/// Stops the MachineSet controller from creating Machines.
pub const DISABLE_MACHINE_CREATE_ANNOTATION: &str = "cluster.x-k8s.io/disable-machine-create";
/// Marks a Machine to delete first when scaling down.
pub const DELETE_MACHINE_ANNOTATION: &str = "cluster.x-k8s.io/delete-machine";
/// Lists MachineSet preflight checks to skip.
pub const MACHINE_SET_SKIP_PREFLIGHT_CHECKS_ANNOTATION: &str =
    "machineset.cluster.x-k8s.io/skip-preflight-checks";
/// The revision of a MachineSet within its MachineDeployment.
pub const MACHINE_DEPLOYMENT_REVISION_ANNOTATION: &str = "machinedeployment.clusters.x-k8s.io/revision";
/// The label holding the hash of a MachineSet's template.
pub const MACHINE_DEPLOYMENT_UNIQUE_LABEL: &str = "machine-template-hash";
/// The suffix of template kinds (`DockerMachineTemplate`).
pub const TEMPLATE_SUFFIX: &str = "Template";
