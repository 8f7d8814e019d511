//! The `/convert` decision, pure: a `ConversionReview` (apiextensions.k8s.io/v1) in, the review
//! with its `response` out. Every object is converted to `request.desiredAPIVersion`; one
//! failure fails the whole review, as the API server expects (`result.status: Failure` and a
//! message naming the object).

use serde_json::{json, Value};

use super::{convert, ContractVersions};

/// The apiVersion of a ConversionReview this answers.
pub const REVIEW_API_VERSION: &str = "apiextensions.k8s.io/v1";

/// Answers the ConversionReview in `body`; an unreadable body gets a `Failure` response with an
/// empty uid.
pub fn review_bytes(body: &[u8], versions: &dyn ContractVersions) -> Value {
    match serde_json::from_slice::<Value>(body) {
        Ok(review) => review_value(&review, versions),
        Err(err) => respond("", Err(format!("cannot read the ConversionReview: {err}"))),
    }
}

/// Answers a parsed ConversionReview.
pub fn review_value(review: &Value, versions: &dyn ContractVersions) -> Value {
    let Some(request) = review.get("request").filter(|r| r.is_object()) else {
        return respond("", Err("the ConversionReview has no request".into()));
    };
    let uid = request.get("uid").and_then(Value::as_str).unwrap_or("");
    let Some(desired) = request
        .get("desiredAPIVersion")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
    else {
        return respond(
            uid,
            Err("the ConversionReview request has no desiredAPIVersion".into()),
        );
    };
    let objects = request
        .get("objects")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let converted = objects
        .iter()
        .map(|object| convert(object.clone(), desired, versions).map_err(|err| err.to_string()))
        .collect::<Result<Vec<_>, _>>();
    respond(uid, converted)
}

fn respond(uid: &str, converted: Result<Vec<Value>, String>) -> Value {
    let response = match converted {
        Ok(objects) => json!({
            "uid": uid,
            "convertedObjects": objects,
            "result": { "status": "Success" },
        }),
        Err(message) => json!({
            "uid": uid,
            "convertedObjects": [],
            "result": { "status": "Failure", "message": message },
        }),
    };
    json!({
        "apiVersion": REVIEW_API_VERSION,
        "kind": "ConversionReview",
        "response": response,
    })
}
