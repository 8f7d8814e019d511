//! Field errors rendered as the API server renders an invalid object: a 422 `Status` with one
//! cause per field error.

use kube::core::response::{Status, StatusCause, StatusDetails};

use super::Kind;
use crate::field::FieldErrors;

/// The `Status` the API server returns for an invalid object, e.g.
/// `Cluster.cluster.x-k8s.io "c1" is invalid: spec.topology.version: Invalid value: ...`.
pub fn invalid(kind: Kind, name: &str, errors: &FieldErrors) -> Status {
    let name = &shown_name(name);
    let message = format!("{}.{} {name:?} is invalid: {errors}", kind.name(), kind.group());
    let message = crate::field::truncate(message, MAX_MESSAGE);
    let causes = errors
        .iter()
        .take(MAX_CAUSES)
        .map(|error| StatusCause {
            reason: error.kind.cause_type().to_owned(),
            message: error.body(),
            field: error.path.to_string(),
        })
        .collect();
    Status::failure(&message, "Invalid")
        .with_code(422)
        .with_details(StatusDetails {
            name: name.to_owned(),
            group: kind.group().to_owned(),
            kind: kind.name().to_owned(),
            uid: String::new(),
            causes,
            retry_after_seconds: 0,
        })
}

/// The `Status` for a forbidden operation on a `kind`, e.g. deleting a ClusterClass in use:
/// `ClusterClass.cluster.x-k8s.io "quick-start" is forbidden: <reason>`, code 403 (Cluster API
/// names the kind where the API server would name the resource).
pub fn forbidden(kind: Kind, name: &str, reason: &str) -> Status {
    let name = &shown_name(name);
    let message = format!("{}.{} {name:?} is forbidden: {reason}", kind.name(), kind.group());
    Status::failure(&message, "Forbidden")
        .with_code(403)
        .with_details(StatusDetails {
            name: name.to_owned(),
            group: kind.group().to_owned(),
            kind: kind.name().to_owned(),
            uid: String::new(),
            causes: Vec::new(),
            retry_after_seconds: 0,
        })
}

/// The `Status` for a request we cannot read: code 400, reason BadRequest.
pub fn bad_request(message: &str) -> Status {
    Status::failure(message, "BadRequest").with_code(400)
}

/// A name as a denial echoes it: no object name is longer than 253 bytes, so a longer one is an
/// attack or a mistake, and is cut rather than sent back whole.
fn shown_name(name: &str) -> String {
    crate::field::truncate(name.to_owned(), MAX_NAME_SHOWN)
}

/// The longest denial message; past it, the message says how much was left out.
const MAX_MESSAGE: usize = 32 * 1024;
/// The most causes one denial lists (its message holds every error, up to [`MAX_MESSAGE`]).
const MAX_CAUSES: usize = 100;

/// The longest object name a denial repeats (a DNS subdomain's limit).
const MAX_NAME_SHOWN: usize = 253;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::{FieldError, FieldPath};

    #[test]
    fn invalid_carries_message_code_and_causes() {
        let path = FieldPath::new("spec").children(&["topology", "version"]);
        let errors = FieldErrors::from(FieldError::invalid(
            &path,
            "1.x",
            "must be a valid semantic version",
        ));
        let status = invalid(Kind::Cluster, "c1", &errors);
        assert_eq!(
            status.message,
            r#"Cluster.cluster.x-k8s.io "c1" is invalid: spec.topology.version: Invalid value: "1.x": must be a valid semantic version"#
        );
        assert_eq!(status.code, 422);
        assert_eq!(status.reason, "Invalid");
        let details = status.details.expect("details");
        assert_eq!(details.kind, "Cluster");
        assert_eq!(details.group, "cluster.x-k8s.io");
        assert_eq!(details.causes.len(), 1);
        assert_eq!(details.causes[0].field, "spec.topology.version");
        assert_eq!(details.causes[0].reason, "FieldValueInvalid");
        assert_eq!(
            details.causes[0].message,
            r#"Invalid value: "1.x": must be a valid semantic version"#
        );
    }
}
