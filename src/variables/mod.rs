//! ClusterClass variables: schemas compiled once, definitions checked, Cluster values defaulted
//! and validated (OpenAPI keywords, formats, CEL rules), and the reconciled `status.variables`.

pub mod cel;
mod default_errors;
mod defaulting;
mod definitions;
mod formats;
mod go_json;
pub mod limits;
mod patterns;
mod schema;
mod status;
mod structural;
mod values;
mod walk;

pub use defaulting::DefaultsPatch;
pub use definitions::validate_definitions;
pub use schema::{CompileError, Schema};
pub use status::status_variables;
pub use values::CompiledVariables;
