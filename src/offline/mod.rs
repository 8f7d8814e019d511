//! The offline API server: manifests applied through the same admission webhooks as `kubectl
//! apply` would send them to a real API server (defaulting, validation, status of the classes),
//! into a [`MemoryStore`](crate::store::MemoryStore). Objects of our kinds may be written in any
//! served version (v1beta1 or v1beta2, mixed); they are converted to v1beta2 first, as the API
//! server does through the conversion webhook ([`edge`]). It sits above admission and the
//! topology engine; `check`, `plan` and `serve --objects` use it.

pub mod apply;
pub mod current;
pub mod edge;
pub mod list_maps;
mod refusals;
pub mod schema_check;
pub mod strict;
pub mod yaml11_labels;
