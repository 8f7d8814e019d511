//! The output formats of `plan`, shared by its sections (the desired objects and the
//! ClusterResourceSet preview), which both stand above this file.

use clap::ValueEnum;

/// Output formats of `plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One Kubernetes `List` per Cluster, as YAML documents.
    Yaml,
    /// One Kubernetes `List` of every Cluster's objects, as one JSON document.
    Json,
    /// Created / changed (per field) / deleted objects against the current objects in the files, and what of an upgrade is held and why.
    Diff,
}
