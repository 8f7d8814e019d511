//! Patch engine: rendering and applying ClusterClass patches.

pub mod bounded;
pub mod builtin_reads;
pub mod external;
pub mod hook_requests;
pub mod inline;
pub mod kept;
pub mod pointer_ops;
pub mod selector;
pub mod template;
pub mod variable_path;
