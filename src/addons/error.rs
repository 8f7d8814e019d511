//! Why a Secret or ConfigMap cannot be read as ClusterResourceSet resources.

/// Why a Secret or ConfigMap cannot be read as ClusterResourceSet resources. Messages name the
/// data key at fault, so a condition message can point the user at it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    /// The object is neither a Secret nor a ConfigMap.
    #[error("unsupported resource kind {0:?}: a ClusterResourceSet reads only Secrets and ConfigMaps")]
    UnsupportedKind(String),
    /// A Secret of another type: reading it would let any ClusterResourceSet copy any Secret of
    /// the namespace into workload clusters.
    #[error(
        "unsupported secret type {0:?}: a ClusterResourceSet reads only Secrets of type \"addons.cluster.x-k8s.io/resource-set\""
    )]
    WrongSecretType(String),
    /// The object has no `data`.
    #[error("failed to get data field from resource {0}")]
    NoData(String),
    /// A `data` value is not a string.
    #[error("data key {0:?}: the value is not a string")]
    NotAString(String),
    /// A Secret's `data` value is not base64.
    #[error("data key {0:?}: the value is not valid base64")]
    NotBase64(String),
    /// The data is larger than any object the API server stores.
    #[error("the data holds {size} bytes, more than the {max} a resource may hold")]
    TooLarge {
        /// Bytes of decoded data.
        size: usize,
        /// The most allowed.
        max: usize,
    },
    /// A document does not parse as YAML or JSON, or a JSON list does not.
    #[error("data key {key:?}, document {document}: {reason}")]
    Syntax {
        /// The data key.
        key: String,
        /// 1-based position of the document in the value.
        document: usize,
        /// The parser's error.
        reason: String,
    },
    /// A document is a list or scalar, not an object.
    #[error("data key {key:?}, document {document}: not an object")]
    NotAnObject {
        /// The data key.
        key: String,
        /// 1-based position of the document in the value.
        document: usize,
    },
    /// An object without a kind, or without a name (nor a generateName): it could not be
    /// created.
    #[error("data key {key:?}, document {document}: the object has no {missing}")]
    Unnamed {
        /// The data key.
        key: String,
        /// 1-based position of the document in the value.
        document: usize,
        /// `kind` or `metadata.name`.
        missing: &'static str,
    },
    /// More objects than one resource may create.
    #[error("the data holds more than {0} objects")]
    TooManyObjects(usize),
}
