//! The answer as bytes on the wire, encoded the way the API server's own types encode it: the
//! JSONPatch as a base64 string (Go's `[]byte`), where kube's serde derive writes an array of
//! numbers four times the size.

use std::collections::HashMap;

use base64::Engine;
use kube::core::admission::AdmissionReview;
use kube::core::{DynamicObject, Status};
use serde::Serialize;

/// `admission.k8s.io/v1` AdmissionReview carrying only the response.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireReview<'a> {
    api_version: &'a str,
    kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<WireResponse<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse<'a> {
    uid: &'a str,
    allowed: bool,
    status: &'a Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    patch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    patch_type: Option<&'static str>,
    #[serde(skip_serializing_if = "HashMap::is_empty")]
    audit_annotations: &'a HashMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warnings: Option<&'a [String]>,
}

/// The JSON body answering an AdmissionReview.
pub fn encode_review(review: &AdmissionReview<DynamicObject>) -> serde_json::Result<Vec<u8>> {
    let response = review.response.as_ref().map(|response| WireResponse {
        uid: &response.uid,
        allowed: response.allowed,
        status: &response.result,
        patch: response
            .patch
            .as_ref()
            .map(|patch| base64::engine::general_purpose::STANDARD.encode(patch)),
        patch_type: response.patch.as_ref().map(|_| "JSONPatch"),
        audit_annotations: &response.audit_annotations,
        warnings: response.warnings.as_deref(),
    });
    serde_json::to_vec(&WireReview {
        api_version: &review.types.api_version,
        kind: &review.types.kind,
        response,
    })
}

#[cfg(test)]
mod tests {
    use kube::core::admission::AdmissionResponse;
    use serde_json::{json, Value};

    use super::*;

    fn review(response: AdmissionResponse) -> AdmissionReview<DynamicObject> {
        response.into_review()
    }

    #[test]
    fn a_patch_is_base64_json_patch_and_everything_else_is_as_kube_writes_it() {
        let mut response = AdmissionResponse::invalid("unused")
            .with_patch(json_patch::Patch(Vec::new()))
            .unwrap();
        response.uid = "u1".to_owned();
        response.allowed = true;
        response.warnings = Some(vec!["careful".to_owned()]);
        let review = review(response);
        let ours: Value = serde_json::from_slice(&encode_review(&review).unwrap()).unwrap();
        let mut kube: Value = serde_json::to_value(&review).unwrap();
        assert_eq!(ours["response"]["patch"], json!("W10="), "base64 of `[]`");
        assert_eq!(ours["response"]["patchType"], "JSONPatch");
        kube["response"]["patch"] = ours["response"]["patch"].clone();
        assert_eq!(ours, kube);
    }

    #[test]
    fn a_response_without_patch_has_no_patch_fields() {
        let mut response = AdmissionResponse::invalid("no");
        response.uid = "u2".to_owned();
        let ours: Value = serde_json::from_slice(&encode_review(&review(response)).unwrap()).unwrap();
        assert!(ours["response"].get("patch").is_none());
        assert!(ours["response"].get("patchType").is_none());
        assert_eq!(ours["response"]["allowed"], false);
        assert_eq!(ours["apiVersion"], "admission.k8s.io/v1");
    }
}
