//! The served runtime.cluster.x-k8s.io/v1alpha1 spoke of ExtensionConfig: the schema source of
//! that version in the generated CRD; `api::convert` translates it to and from the v1beta2 hub.

mod extension_config;

pub use extension_config::*;
