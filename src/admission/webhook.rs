//! The four admission endpoints and the URL paths the API server calls them on.

use std::fmt;
use std::str::FromStr;

/// Which kind a webhook admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// cluster.x-k8s.io/v1beta1 Cluster.
    Cluster,
    /// cluster.x-k8s.io/v1beta1 ClusterClass.
    ClusterClass,
}

impl Kind {
    /// The resource (plural) the API server names it by.
    pub fn resource(self) -> &'static str {
        match self {
            Self::Cluster => "clusters",
            Self::ClusterClass => "clusterclasses",
        }
    }

    /// The kind's name as it appears in `kind:`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cluster => "Cluster",
            Self::ClusterClass => "ClusterClass",
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
    /// Every endpoint, mutating ones first.
    pub const ALL: [Webhook; 4] = [
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
    ];

    /// The URL path, as in Cluster API's webhook configuration.
    pub fn path(self) -> &'static str {
        match (self.kind, self.mutating) {
            (Kind::Cluster, true) => "/mutate-cluster-x-k8s-io-v1beta1-cluster",
            (Kind::Cluster, false) => "/validate-cluster-x-k8s-io-v1beta1-cluster",
            (Kind::ClusterClass, true) => "/mutate-cluster-x-k8s-io-v1beta1-clusterclass",
            (Kind::ClusterClass, false) => "/validate-cluster-x-k8s-io-v1beta1-clusterclass",
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
}
