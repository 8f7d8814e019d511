//! What the client reads of every hook answer: its status and message.

use crate::api::runtime::{
    DiscoverVariablesResponse, DiscoveryResponse, GeneratePatchesResponse, ResponseStatus,
    ValidateTopologyResponse, HOOKS_API_VERSION,
};

/// A hook's answer.
pub trait HookResponse {
    /// `Ok` for `status: Success`; the extension's message for `status: Failure`.
    fn success(&self) -> Result<(), &str>;
}

/// The answer of a hook whose handlers may be ignored when a call fails (`failurePolicy: Ignore`).
pub trait IgnorableResponse: HookResponse {
    /// What an ignored call stands for: success, and nothing else.
    fn ignored() -> Self;
}

fn outcome(status: ResponseStatus, message: &str) -> Result<(), &str> {
    match status {
        ResponseStatus::Success => Ok(()),
        ResponseStatus::Failure => Err(message),
    }
}

impl HookResponse for DiscoveryResponse {
    fn success(&self) -> Result<(), &str> {
        outcome(self.status, &self.message)
    }
}

impl HookResponse for GeneratePatchesResponse {
    fn success(&self) -> Result<(), &str> {
        outcome(self.status, &self.message)
    }
}

impl HookResponse for ValidateTopologyResponse {
    fn success(&self) -> Result<(), &str> {
        outcome(self.status, &self.message)
    }
}

impl HookResponse for DiscoverVariablesResponse {
    fn success(&self) -> Result<(), &str> {
        outcome(self.status, &self.message)
    }
}

impl IgnorableResponse for DiscoverVariablesResponse {
    fn ignored() -> Self {
        Self {
            api_version: HOOKS_API_VERSION.to_owned(),
            kind: "DiscoverVariablesResponse".to_owned(),
            status: ResponseStatus::Success,
            message: String::new(),
            variables: Vec::new(),
        }
    }
}

impl IgnorableResponse for GeneratePatchesResponse {
    fn ignored() -> Self {
        Self {
            api_version: HOOKS_API_VERSION.to_owned(),
            kind: "GeneratePatchesResponse".to_owned(),
            status: ResponseStatus::Success,
            message: String::new(),
            items: Vec::new(),
        }
    }
}

impl IgnorableResponse for ValidateTopologyResponse {
    fn ignored() -> Self {
        Self {
            api_version: HOOKS_API_VERSION.to_owned(),
            kind: "ValidateTopologyResponse".to_owned(),
            status: ResponseStatus::Success,
            message: String::new(),
        }
    }
}
