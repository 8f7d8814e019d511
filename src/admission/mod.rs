//! The webhooks' rules, pure: an AdmissionReview in, an AdmissionReview out.

mod admitted;
pub mod class_rollout;
pub mod cluster;
pub mod cluster_class;
pub mod cluster_resource_set;
pub mod cluster_resource_set_binding;
mod diff;
mod edge;
pub mod extension_config;
mod go_printed;
pub mod health_check;
pub mod object_meta;
pub mod request;
mod review;
pub mod spoke_patch;
pub mod status;
pub mod taints;
pub mod webhook;
mod wire;
mod wire_request;

pub use request::admit_value;
pub use review::{review, MAX_BODY_BYTES};
pub use webhook::{Kind, Webhook};
pub use wire::encode_review;

use crate::field::FieldErrors;

/// What a webhook's rules decided about one object: field errors deny, warnings are shown either way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Errors that deny the request; empty when it may pass.
    pub errors: FieldErrors,
    /// Warnings returned to the client (kubectl prints them) whether or not the request passes.
    pub warnings: Vec<String>,
}

impl Outcome {
    /// An outcome with these errors and no warnings.
    pub fn from_errors(errors: FieldErrors) -> Self {
        Self {
            errors,
            warnings: Vec::new(),
        }
    }

    /// Adds the errors and warnings of `other`.
    pub fn merge(&mut self, other: Outcome) {
        self.errors.extend(other.errors);
        self.warnings.extend(other.warnings);
    }
}
