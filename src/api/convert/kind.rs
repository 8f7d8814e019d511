//! The kinds this module converts, the versions their groups serve, and which converter moves
//! each kind's fields between its spoke and the hub.

use super::value::Obj;
use super::{
    cluster, cluster_class, extension_config, machine_deployment, machine_health_check, machine_pool,
    machine_set, resource_set, resource_set_binding, ContractVersions, ConvertError, Ctx,
};

/// The kinds this module converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Cluster,
    ClusterClass,
    ClusterResourceSet,
    ClusterResourceSetBinding,
    ExtensionConfig,
    MachineHealthCheck,
    MachineDeployment,
    MachineSet,
    MachinePool,
}

/// Our groups and the versions each serves, spoke first.
const GROUPS: [(&str, &[&str]); 3] = [
    ("cluster.x-k8s.io", &["v1beta1", "v1beta2"]),
    ("addons.cluster.x-k8s.io", &["v1beta1", "v1beta2"]),
    ("runtime.cluster.x-k8s.io", &["v1alpha1", "v1beta2"]),
];

impl Kind {
    /// Every kind.
    pub(super) const ALL: [Kind; 9] = [
        Kind::Cluster,
        Kind::ClusterClass,
        Kind::ClusterResourceSet,
        Kind::ClusterResourceSetBinding,
        Kind::ExtensionConfig,
        Kind::MachineHealthCheck,
        Kind::MachineDeployment,
        Kind::MachineSet,
        Kind::MachinePool,
    ];

    /// The kind of `kind` in `group`, when this module converts it.
    pub(super) fn of(group: &str, kind: &str) -> Option<Kind> {
        Some(match (group, kind) {
            ("cluster.x-k8s.io", "Cluster") => Kind::Cluster,
            ("cluster.x-k8s.io", "ClusterClass") => Kind::ClusterClass,
            ("addons.cluster.x-k8s.io", "ClusterResourceSet") => Kind::ClusterResourceSet,
            ("addons.cluster.x-k8s.io", "ClusterResourceSetBinding") => Kind::ClusterResourceSetBinding,
            ("runtime.cluster.x-k8s.io", "ExtensionConfig") => Kind::ExtensionConfig,
            ("cluster.x-k8s.io", "MachineHealthCheck") => Kind::MachineHealthCheck,
            ("cluster.x-k8s.io", "MachineDeployment") => Kind::MachineDeployment,
            ("cluster.x-k8s.io", "MachineSet") => Kind::MachineSet,
            ("cluster.x-k8s.io", "MachinePool") => Kind::MachinePool,
            _ => return None,
        })
    }

    /// The version of the kind's spoke.
    pub(super) fn spoke_version(self) -> &'static str {
        match self {
            Kind::ExtensionConfig => "v1alpha1",
            _ => "v1beta1",
        }
    }

    /// Moves a spoke object's fields to where the hub has them, in place.
    pub(super) fn spoke_to_hub(self, obj: &mut Obj, ctx: &Ctx) -> Result<(), ConvertError> {
        match self {
            Kind::Cluster => cluster::to_hub(obj, ctx),
            Kind::ClusterClass => cluster_class::to_hub(obj, ctx),
            Kind::ClusterResourceSet => resource_set::to_hub(obj),
            Kind::ClusterResourceSetBinding => resource_set_binding::to_hub(obj),
            Kind::ExtensionConfig => extension_config::to_hub(obj),
            Kind::MachineHealthCheck => machine_health_check::to_hub(obj, ctx),
            Kind::MachineDeployment => machine_deployment::MACHINE_DEPLOYMENT.spoke_to_hub(obj, ctx),
            Kind::MachineSet => machine_set::MACHINE_SET.spoke_to_hub(obj, ctx),
            Kind::MachinePool => machine_pool::MACHINE_POOL.spoke_to_hub(obj, ctx),
        }
    }

    /// Moves a hub object's fields to where the spoke has them, in place.
    pub(super) fn hub_to_spoke(
        self,
        obj: &mut Obj,
        ctx: &Ctx,
        versions: &dyn ContractVersions,
    ) -> Result<(), ConvertError> {
        match self {
            Kind::Cluster => cluster::from_hub(obj, ctx, versions),
            Kind::ClusterClass => cluster_class::from_hub(obj, ctx),
            Kind::ClusterResourceSet => resource_set::from_hub(obj),
            Kind::ClusterResourceSetBinding => resource_set_binding::from_hub(obj),
            Kind::ExtensionConfig => extension_config::from_hub(obj),
            Kind::MachineHealthCheck => machine_health_check::from_hub(obj, ctx),
            Kind::MachineDeployment => {
                machine_deployment::MACHINE_DEPLOYMENT.hub_to_spoke(obj, ctx, versions)
            }
            Kind::MachineSet => machine_set::MACHINE_SET.hub_to_spoke(obj, ctx, versions),
            Kind::MachinePool => machine_pool::MACHINE_POOL.hub_to_spoke(obj, ctx, versions),
        }
    }
}

/// `(group, version)` of an apiVersion; the core group is `""`.
pub(super) fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// The versions served for `group` when it is one of ours.
pub(super) fn served(group: &str) -> Option<&'static [&'static str]> {
    GROUPS
        .iter()
        .find(|(g, _)| *g == group)
        .map(|(_, versions)| *versions)
}
