//! A ClusterClass as the store keeps it: the object plus what is compiled from it once.

use std::sync::OnceLock;

use crate::api::ClusterClass;
use crate::variables::CompiledVariables;

/// A ClusterClass and its variable schemas, compiled on first use and reused by every request
/// until the class is replaced (a new generation is a new entry).
#[derive(Debug)]
pub struct ClassEntry {
    /// The ClusterClass as stored.
    pub class: ClusterClass,
    variables: OnceLock<CompiledVariables>,
}

impl ClassEntry {
    /// Wraps a ClusterClass; nothing is compiled until [`ClassEntry::variables`] is called.
    pub fn new(class: ClusterClass) -> Self {
        Self {
            class,
            variables: OnceLock::new(),
        }
    }

    /// The compiled definitions of the class's `status.variables`.
    pub fn variables(&self) -> &CompiledVariables {
        let definitions = self
            .class
            .status
            .as_ref()
            .map(|s| s.variables.as_slice())
            .unwrap_or_default();
        self.variables
            .get_or_init(|| CompiledVariables::compile(definitions))
    }
}
