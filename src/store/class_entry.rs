//! A ClusterClass as the store keeps it: the object plus what is compiled from it once.

use crate::api::ClusterClass;

/// A ClusterClass and what is compiled from it, reused by every request until the class is
/// replaced (a new generation is a new entry).
#[derive(Debug)]
pub struct ClassEntry {
    /// The ClusterClass as stored.
    pub class: ClusterClass,
}

impl ClassEntry {
    /// Wraps a ClusterClass.
    pub fn new(class: ClusterClass) -> Self {
        Self { class }
    }
}
