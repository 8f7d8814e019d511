//! The admission endpoints and the URL paths the API server calls them on.

use std::fmt;
use std::str::FromStr;

/// Which kind a webhook admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// cluster.x-k8s.io/v1beta1 Cluster.
    Cluster,
    /// cluster.x-k8s.io/v1beta1 ClusterClass.
    ClusterClass,
    /// addons.cluster.x-k8s.io/v1beta1 ClusterResourceSet.
    ClusterResourceSet,
    /// addons.cluster.x-k8s.io/v1beta1 ClusterResourceSetBinding (validated only).
    ClusterResourceSetBinding,
    /// runtime.cluster.x-k8s.io/v1alpha1 ExtensionConfig (cluster-scoped).
    ExtensionConfig,
}

impl Kind {
    /// The API group the kind belongs to.
    pub fn group(self) -> &'static str {
        match self {
            Self::Cluster | Self::ClusterClass => crate::api::crd::GROUP,
            Self::ClusterResourceSet | Self::ClusterResourceSetBinding => crate::api::ADDONS_GROUP,
            Self::ExtensionConfig => crate::api::runtime::RUNTIME_GROUP,
        }
    }

    /// The API version the kind is admitted in.
    pub fn version(self) -> &'static str {
        match self {
            Self::ExtensionConfig => crate::api::runtime::RUNTIME_VERSION,
            _ => crate::api::crd::VERSION,
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
        }
    }
}

/// One admission endpoint: a kind and whether it defaults (mutating) or validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Webhook {
    /// The kind admitted.
    pub kind: Kind,
    /// True for the mutating (defaulting) endpoint.
    pub mutating: bool,
}

impl Webhook {
    /// Every endpoint: Cluster and ClusterClass (mutating, then validating), then the addons
    /// kinds. Positions only ever grow at the end: the fuzz seeds select an endpoint by index.
    /// ClusterResourceSetBinding has no defaulting, as in Cluster API.
    pub const ALL: [Webhook; 9] = [
        Webhook {
            kind: Kind::Cluster,
            mutating: true,
        },
        Webhook {
            kind: Kind::ClusterClass,
            mutating: true,
        },
        Webhook {
            kind: Kind::Cluster,
            mutating: false,
        },
        Webhook {
            kind: Kind::ClusterClass,
            mutating: false,
        },
        Webhook {
            kind: Kind::ClusterResourceSet,
            mutating: true,
        },
        Webhook {
            kind: Kind::ClusterResourceSet,
            mutating: false,
        },
        Webhook {
            kind: Kind::ClusterResourceSetBinding,
            mutating: false,
        },
        Webhook {
            kind: Kind::ExtensionConfig,
            mutating: true,
        },
        Webhook {
            kind: Kind::ExtensionConfig,
            mutating: false,
        },
    ];

    /// The endpoints of `kind`, mutating first (the order the API server calls them in).
    pub fn of_kind(kind: Kind) -> impl Iterator<Item = Webhook> {
        Self::ALL.into_iter().filter(move |w| w.kind == kind)
    }

    /// The URL path, as in Cluster API's webhook configuration.
    pub fn path(self) -> &'static str {
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
                mutating: false
            }]
        );
        let set: Vec<bool> = Webhook::of_kind(Kind::ClusterResourceSet)
            .map(|w| w.mutating)
            .collect();
        assert_eq!(set, [true, false]);
    }
}
