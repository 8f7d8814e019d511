//! External patches: the seam through which runtime extensions generate and validate patches.
//! The engine builds each hook's request and applies its answer; an implementation only carries
//! the request to the extension and its answer back (`runtime/` does it over HTTPS).

use crate::api::runtime::{
    GeneratePatchesRequest, GeneratePatchesResponse, ValidateTopologyRequest, ValidateTopologyResponse,
};

/// Calls the Runtime Extension handlers a ClusterClass's external patches name
/// (`<handler>.<ExtensionConfig>`). An `Ok` answer is a successful one: a failed call, or an
/// answer with `status: Failure`, is an `Err` saying why (the extension's message included).
pub trait ExternalPatches {
    /// Calls the GeneratePatches handler `extension` for a Cluster in `namespace`.
    fn generate(
        &self,
        extension: &str,
        namespace: &str,
        request: &GeneratePatchesRequest,
    ) -> Result<GeneratePatchesResponse, String>;
    /// Calls the ValidateTopology handler `extension` for a Cluster in `namespace`.
    fn validate(
        &self,
        extension: &str,
        namespace: &str,
        request: &ValidateTopologyRequest,
    ) -> Result<ValidateTopologyResponse, String>;
}

/// No Runtime Extensions: a class with external patches cannot be planned.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoExternalPatches;

/// Why a call to `extension` cannot be made when no Runtime Extension client is set up.
pub fn unavailable(extension: &str) -> String {
    format!("failed to call extension handler {extension:?}: no Runtime Extension client is set up")
}

impl ExternalPatches for NoExternalPatches {
    fn generate(
        &self,
        extension: &str,
        _namespace: &str,
        _request: &GeneratePatchesRequest,
    ) -> Result<GeneratePatchesResponse, String> {
        Err(unavailable(extension))
    }

    fn validate(
        &self,
        extension: &str,
        _namespace: &str,
        _request: &ValidateTopologyRequest,
    ) -> Result<ValidateTopologyResponse, String> {
        Err(unavailable(extension))
    }
}
