//! Runtime Extensions: the HTTPS client of an Extension server, the registry of the handlers
//! discovery finds, and the engine's external-patch seam implemented over both, with a backoff
//! per failing server and a cache of the deterministic hooks' answers; the lifecycle hooks'
//! seam implemented over them, keeping a blocking answer until its time passes.

mod backoff;
mod cache;
mod client;
mod extensions;
mod hook_cache;
mod lifecycle;
mod registry;
mod response;

pub use client::{CallError, ExtensionClient};
pub use extensions::{NamespaceLabels, NamespaceLookup, RuntimeExtensions};
pub use registry::{discover_config, Registration, Registry, SharedRegistry};
pub use response::{HookResponse, IgnorableResponse};
