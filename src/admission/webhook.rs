//! The admission endpoints and the URL paths the API server calls them on.

use std::fmt;
use std::str::FromStr;

use crate::api::class_rollout::{ROLLOUT_GROUP, ROLLOUT_KIND, ROLLOUT_VERSION};

/// Which kind a webhook admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// cluster.x-k8s.io Cluster.
    Cluster,
    /// cluster.x-k8s.io ClusterClass.
    ClusterClass,
    /// addons.cluster.x-k8s.io ClusterResourceSet.
    ClusterResourceSet,
    /// addons.cluster.x-k8s.io ClusterResourceSetBinding (validated only).
    ClusterResourceSetBinding,
    /// runtime.cluster.x-k8s.io ExtensionConfig (cluster-scoped).
    ExtensionConfig,
    /// rollout.capi-topology.io ClusterClassRollout, our own API (validated only; one version).
    ClusterClassRollout,
}

impl Kind {
    /// The API group the kind belongs to.
    pub fn group(self) -> &'static str {
        match self {
            Self::Cluster | Self::ClusterClass => crate::api::crd::GROUP,
            Self::ClusterResourceSet | Self::ClusterResourceSetBinding => crate::api::ADDONS_GROUP,
            Self::ExtensionConfig => crate::api::runtime::RUNTIME_GROUP,
            Self::ClusterClassRollout => ROLLOUT_GROUP,
        }
    }

    /// The API version the rules read the kind in: the hub, v1beta2 (our own API: its only one).
    pub fn version(self) -> &'static str {
        match self {
            Self::ClusterClassRollout => ROLLOUT_VERSION,
            _ => crate::api::HUB_VERSION,
        }
    }

    /// The older served version a client may still send (`v1beta1`; `v1alpha1` for
    /// ExtensionConfig); `None` for a kind served in one version.
    pub fn spoke_version(self) -> Option<&'static str> {
        match self {
            Self::ExtensionConfig => Some(crate::api::runtime::v1alpha1::VERSION),
            Self::ClusterClassRollout => None,
            _ => Some("v1beta1"),
        }
    }

    /// Whether `version` is one the kind is served in.
    pub fn serves(self, version: &str) -> bool {
        version == self.version() || self.spoke_version() == Some(version)
    }

    /// The served versions, as an error lists them (`v1beta2 or v1beta1`).
    pub fn served_versions(self) -> String {
        let group = self.group();
        match self.spoke_version() {
            Some(spoke) => format!("{group}/{} or {group}/{spoke}", self.version()),
            None => format!("{group}/{}", self.version()),
        }
    }

    /// Whether objects of the kind live in a namespace.
    pub fn namespaced(self) -> bool {
        self != Self::ExtensionConfig
    }

    /// The resource (plural) the API server names it by.
    pub fn resource(self) -> &'static str {
        match self {
            Self::Cluster => "clusters",
            Self::ClusterClass => "clusterclasses",
            Self::ClusterResourceSet => "clusterresourcesets",
            Self::ClusterResourceSetBinding => "clusterresourcesetbindings",
            Self::ExtensionConfig => "extensionconfigs",
            Self::ClusterClassRollout => "clusterclassrollouts",
        }
    }

    /// The kind's name as it appears in `kind:`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cluster => "Cluster",
            Self::ClusterClass => "ClusterClass",
            Self::ClusterResourceSet => "ClusterResourceSet",
            Self::ClusterResourceSetBinding => "ClusterResourceSetBinding",
            Self::ExtensionConfig => "ExtensionConfig",
            Self::ClusterClassRollout => ROLLOUT_KIND,
        }
    }
}

/// One admission endpoint: a kind, whether it defaults (mutating) or validates, and whether it
/// is served at the path of the older version (kept so clients registered there keep working
/// during the migration; the same rules answer at both paths).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Webhook {
    /// The kind admitted.
    pub kind: Kind,
    /// True for the mutating (defaulting) endpoint.
    pub mutating: bool,
    /// True for the endpoint at the v1beta1 (ExtensionConfig: v1alpha1) path.
    pub spoke: bool,
}

impl Webhook {
    /// Every endpoint. Positions only ever grow at the end: the fuzz seeds select an endpoint by
    /// index. First the v1beta1 (v1alpha1) paths as Cluster API v1.10 served them, then the
    /// v1beta2 paths of Cluster API v1.14, which has no ClusterClass defaulting webhook (the
    /// v1beta1 one is kept and changes nothing). ClusterResourceSetBinding has no defaulting.
    /// Last our own ClusterClassRollout's, validating only, at its one version.
    pub const ALL: [Webhook; 18] = [
        Webhook {
            kind: Kind::Cluster,
            mutating: true,
            spoke: true,
        },
        Webhook {
            kind: Kind::ClusterClass,
            mutating: true,
            spoke: true,
        },
        Webhook {
            kind: Kind::Cluster,
            mutating: false,
            spoke: true,
        },
        Webhook {
            kind: Kind::ClusterClass,
            mutating: false,
            spoke: true,
        },
        Webhook {
            kind: Kind::ClusterResourceSet,
            mutating: true,
            spoke: true,
        },
        Webhook {
            kind: Kind::ClusterResourceSet,
            mutating: false,
            spoke: true,
        },
        Webhook {
            kind: Kind::ClusterResourceSetBinding,
            mutating: false,
            spoke: true,
        },
        Webhook {
            kind: Kind::ExtensionConfig,
            mutating: true,
            spoke: true,
        },
        Webhook {
            kind: Kind::ExtensionConfig,
            mutating: false,
            spoke: true,
        },
        Webhook {
            kind: Kind::Cluster,
            mutating: true,
            spoke: false,
        },
        Webhook {
            kind: Kind::Cluster,
            mutating: false,
            spoke: false,
        },
        Webhook {
            kind: Kind::ClusterClass,
            mutating: false,
            spoke: false,
        },
        Webhook {
            kind: Kind::ClusterResourceSet,
            mutating: true,
            spoke: false,
        },
        Webhook {
            kind: Kind::ClusterResourceSet,
            mutating: false,
            spoke: false,
        },
        Webhook {
            kind: Kind::ClusterResourceSetBinding,
            mutating: false,
            spoke: false,
        },
        Webhook {
            kind: Kind::ExtensionConfig,
            mutating: true,
            spoke: false,
        },
        Webhook {
            kind: Kind::ExtensionConfig,
            mutating: false,
            spoke: false,
        },
        Webhook {
            kind: Kind::ClusterClassRollout,
            mutating: false,
            spoke: false,
        },
    ];

    /// The v1beta2 endpoints of `kind`, mutating first (the order the API server calls them in).
    pub fn of_kind(kind: Kind) -> impl Iterator<Item = Webhook> {
        Self::ALL.into_iter().filter(move |w| w.kind == kind && !w.spoke)
    }

    /// The URL path, as in Cluster API's webhook configuration (v1.14 for the v1beta2 ones;
    /// ClusterClass defaulting exists only at its v1beta1 path).
    pub fn path(self) -> &'static str {
        if self.spoke || (self.kind == Kind::ClusterClass && self.mutating) {
            return self.spoke_path();
        }
        match (self.kind, self.mutating) {
            (Kind::Cluster, true) => "/mutate-cluster-x-k8s-io-v1beta2-cluster",
            (Kind::Cluster, false) => "/validate-cluster-x-k8s-io-v1beta2-cluster",
            (Kind::ClusterClass, _) => "/validate-cluster-x-k8s-io-v1beta2-clusterclass",
            (Kind::ClusterResourceSet, true) => "/mutate-addons-cluster-x-k8s-io-v1beta2-clusterresourceset",
            (Kind::ClusterResourceSet, false) => {
                "/validate-addons-cluster-x-k8s-io-v1beta2-clusterresourceset"
            }
            (Kind::ClusterResourceSetBinding, _) => {
                "/validate-addons-cluster-x-k8s-io-v1beta2-clusterresourcesetbinding"
            }
            (Kind::ExtensionConfig, true) => "/mutate-runtime-cluster-x-k8s-io-v1beta2-extensionconfig",
            (Kind::ExtensionConfig, false) => "/validate-runtime-cluster-x-k8s-io-v1beta2-extensionconfig",
            (Kind::ClusterClassRollout, _) => {
                "/validate-rollout-capi-topology-io-v1alpha1-clusterclassrollout"
            }
        }
    }

    fn spoke_path(self) -> &'static str {
        match (self.kind, self.mutating) {
            (Kind::Cluster, true) => "/mutate-cluster-x-k8s-io-v1beta1-cluster",
            (Kind::Cluster, false) => "/validate-cluster-x-k8s-io-v1beta1-cluster",
            (Kind::ClusterClass, true) => "/mutate-cluster-x-k8s-io-v1beta1-clusterclass",
            (Kind::ClusterClass, false) => "/validate-cluster-x-k8s-io-v1beta1-clusterclass",
            (Kind::ClusterResourceSet, true) => "/mutate-addons-cluster-x-k8s-io-v1beta1-clusterresourceset",
            (Kind::ClusterResourceSet, false) => {
                "/validate-addons-cluster-x-k8s-io-v1beta1-clusterresourceset"
            }
            (Kind::ClusterResourceSetBinding, _) => {
                "/validate-addons-cluster-x-k8s-io-v1beta1-clusterresourcesetbinding"
            }
            (Kind::ExtensionConfig, true) => "/mutate-runtime-cluster-x-k8s-io-v1alpha1-extensionconfig",
            (Kind::ExtensionConfig, false) => "/validate-runtime-cluster-x-k8s-io-v1alpha1-extensionconfig",
            // Served in one version: no spoke endpoint exists.
            (Kind::ClusterClassRollout, _) => {
                "/validate-rollout-capi-topology-io-v1alpha1-clusterclassrollout"
            }
        }
    }

    /// The webhook's name in the webhook configuration, as the API server quotes it in a denial
    /// (`admission webhook "validation.cluster.cluster.x-k8s.io" denied the request: ...`).
    pub fn configuration_name(self) -> &'static str {
        match (self.kind, self.mutating) {
            (Kind::Cluster, true) => "default.cluster.cluster.x-k8s.io",
            (Kind::Cluster, false) => "validation.cluster.cluster.x-k8s.io",
            (Kind::ClusterClass, true) => "default.clusterclass.cluster.x-k8s.io",
            (Kind::ClusterClass, false) => "validation.clusterclass.cluster.x-k8s.io",
            (Kind::ClusterResourceSet, true) => "default.clusterresourceset.addons.cluster.x-k8s.io",
            (Kind::ClusterResourceSet, false) => "validation.clusterresourceset.addons.cluster.x-k8s.io",
            (Kind::ClusterResourceSetBinding, _) => {
                "validation.clusterresourcesetbinding.addons.cluster.x-k8s.io"
            }
            // Sic: Cluster API names its defaulting webhook with `addons` in it.
            (Kind::ExtensionConfig, true) => "default.extensionconfig.runtime.addons.cluster.x-k8s.io",
            (Kind::ExtensionConfig, false) => "validation.extensionconfig.runtime.cluster.x-k8s.io",
            (Kind::ClusterClassRollout, _) => "validation.clusterclassrollout.rollout.capi-topology.io",
        }
    }

    /// The endpoint served at `path`, if any.
    pub fn from_path(path: &str) -> Option<Webhook> {
        Self::ALL.into_iter().find(|w| w.path() == path)
    }
}

impl fmt::Display for Webhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.path())
    }
}

/// Error for a path that names no webhook.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown webhook path {0:?}; expected one of: {paths}", paths = Webhook::ALL.map(Webhook::path).join(", "))]
pub struct UnknownWebhook(pub String);

impl FromStr for Webhook {
    type Err = UnknownWebhook;
    fn from_str(path: &str) -> Result<Self, Self::Err> {
        Self::from_path(path).ok_or_else(|| UnknownWebhook(path.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip() {
        for webhook in Webhook::ALL {
            assert_eq!(webhook.path().parse::<Webhook>(), Ok(webhook));
        }
        let err = "/mutate-pods".parse::<Webhook>().unwrap_err();
        assert!(err
            .to_string()
            .starts_with(r#"unknown webhook path "/mutate-pods"; expected one of: /mutate-cluster"#));
    }

    #[test]
    fn a_binding_has_only_a_validating_endpoint() {
        let binding: Vec<Webhook> = Webhook::of_kind(Kind::ClusterResourceSetBinding).collect();
        assert_eq!(
            binding,
            [Webhook {
                kind: Kind::ClusterResourceSetBinding,
                mutating: false,
                spoke: false,
            }]
        );
        let set: Vec<bool> = Webhook::of_kind(Kind::ClusterResourceSet)
            .map(|w| w.mutating)
            .collect();
        assert_eq!(set, [true, false]);
        let class: Vec<bool> = Webhook::of_kind(Kind::ClusterClass).map(|w| w.mutating).collect();
        assert_eq!(class, [false], "v1.14 has no ClusterClass defaulting webhook");
    }

    #[test]
    fn v1beta1_paths_keep_their_positions_and_v1beta2_ones_follow() {
        assert_eq!(Webhook::ALL[0].path(), "/mutate-cluster-x-k8s-io-v1beta1-cluster");
        assert_eq!(
            Webhook::ALL[1].path(),
            "/mutate-cluster-x-k8s-io-v1beta1-clusterclass"
        );
        assert_eq!(
            Webhook::ALL[8].path(),
            "/validate-runtime-cluster-x-k8s-io-v1alpha1-extensionconfig"
        );
        let hub: Vec<&str> = Webhook::ALL[9..].iter().map(|w| w.path()).collect();
        assert_eq!(
            hub,
            [
                "/mutate-cluster-x-k8s-io-v1beta2-cluster",
                "/validate-cluster-x-k8s-io-v1beta2-cluster",
                "/validate-cluster-x-k8s-io-v1beta2-clusterclass",
                "/mutate-addons-cluster-x-k8s-io-v1beta2-clusterresourceset",
                "/validate-addons-cluster-x-k8s-io-v1beta2-clusterresourceset",
                "/validate-addons-cluster-x-k8s-io-v1beta2-clusterresourcesetbinding",
                "/mutate-runtime-cluster-x-k8s-io-v1beta2-extensionconfig",
                "/validate-runtime-cluster-x-k8s-io-v1beta2-extensionconfig",
                "/validate-rollout-capi-topology-io-v1alpha1-clusterclassrollout",
            ]
        );
    }
}
