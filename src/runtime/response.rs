//! What the client reads of every hook answer: its status and message, and how an answer of an
//! older shape is brought to the current one before it is decoded.

use serde_json::Value;

use crate::api::convert::variable_to_hub;
use crate::api::runtime::{
    DiscoverVariablesResponse, DiscoveryResponse, GeneratePatchesResponse, GenerateUpgradePlanResponse,
    LifecycleResponse, ResponseStatus, ValidateTopologyResponse, HOOKS_API_VERSION,
};
use crate::field::{truncated, MAX_RENDERED_DETAIL};

/// An extension's own text (a `Failure` answer's message) as our errors quote it: at most
/// [`MAX_RENDERED_DETAIL`] bytes, as admission echoes its input, cut with a marker.
pub(super) fn echoed(message: &str) -> String {
    truncated(message, MAX_RENDERED_DETAIL)
}

/// A hook's answer.
pub trait HookResponse {
    /// `Ok` for `status: Success`; the extension's message for `status: Failure`.
    fn success(&self) -> Result<(), &str>;

    /// Brings the JSON of an answer an older extension may shape differently to the current
    /// shape, before it is decoded; most hooks' answers need nothing.
    fn upgrade(_raw: &mut Value) {}
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

    /// Since Cluster API v1.13 the variables are v1beta2 `ClusterClassVariable`s
    /// (`deprecatedV1Beta1Metadata`, `required` a pointer); an extension built against an older
    /// release answers with v1beta1 ones (`metadata`), which are converted. A variable with no
    /// `metadata` reads the same in both shapes.
    fn upgrade(raw: &mut Value) {
        let variables = raw.get_mut("variables").and_then(Value::as_array_mut);
        for variable in variables.into_iter().flatten() {
            if variable.get("metadata").is_some() {
                variable_to_hub(variable);
            }
        }
    }
}

impl HookResponse for LifecycleResponse {
    fn success(&self) -> Result<(), &str> {
        outcome(self.status, &self.message)
    }
}

impl HookResponse for GenerateUpgradePlanResponse {
    fn success(&self) -> Result<(), &str> {
        outcome(self.status, &self.message)
    }
}

impl IgnorableResponse for LifecycleResponse {
    /// Success without `retryAfterSeconds`: an ignored handler holds nothing.
    fn ignored() -> Self {
        Self {
            api_version: HOOKS_API_VERSION.to_owned(),
            kind: String::new(),
            status: ResponseStatus::Success,
            message: String::new(),
            retry_after_seconds: 0,
        }
    }
}

impl IgnorableResponse for GenerateUpgradePlanResponse {
    /// Success without steps: the engine then finds no plan in the answer.
    fn ignored() -> Self {
        Self {
            api_version: HOOKS_API_VERSION.to_owned(),
            kind: "GenerateUpgradePlanResponse".to_owned(),
            status: ResponseStatus::Success,
            message: String::new(),
            control_plane_upgrades: Vec::new(),
            workers_upgrades: Vec::new(),
        }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_failure_message_is_echoed_in_part() {
        assert_eq!(echoed("short"), "short");
        let echo = echoed(&"x".repeat(20 << 20));
        assert!(echo.len() < MAX_RENDERED_DETAIL + 32);
        assert!(echo.ends_with(&format!("...({} more bytes)", (20 << 20) - MAX_RENDERED_DETAIL)));
    }

    #[test]
    fn a_v1beta1_shaped_discover_variables_answer_is_read() {
        let mut raw = json!({"status": "Success", "variables": [
            {"name": "old", "required": true, "metadata": {"labels": {"a": "b"}},
             "schema": {"openAPIV3Schema": {"type": "string"}}},
            {"name": "new", "required": false, "deprecatedV1Beta1Metadata": {"annotations": {"c": "d"}},
             "schema": {"openAPIV3Schema": {"type": "integer"}}}]});
        DiscoverVariablesResponse::upgrade(&mut raw);
        let response: DiscoverVariablesResponse = serde_json::from_value(raw).unwrap();
        let old = &response.variables[0];
        assert!(old.is_required());
        assert_eq!(
            old.deprecated_v1_beta1_metadata
                .labels
                .get("a")
                .map(String::as_str),
            Some("b")
        );
        let new = &response.variables[1];
        assert!(!new.is_required());
        assert_eq!(
            new.deprecated_v1_beta1_metadata
                .annotations
                .get("c")
                .map(String::as_str),
            Some("d")
        );
    }
}
