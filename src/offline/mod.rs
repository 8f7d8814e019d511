//! The offline API server: manifests applied through the same admission webhooks as `kubectl
//! apply` would send them to a real API server (defaulting, validation, status of the classes),
//! into a [`MemoryStore`](crate::store::MemoryStore). It sits above admission and the topology
//! engine; `check`, `plan` and `serve --objects` use it.

pub mod apply;
