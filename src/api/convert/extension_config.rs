//! ExtensionConfig runtime v1alpha1 ↔ v1beta2 (`api/runtime/v1alpha1/conversion.go`): status
//! conditions trade places; v1beta2 drops the empty strings, the empty `service` and the zero
//! `timeoutSeconds` that v1alpha1's pointers could carry. No conversion-data.

use serde_json::Value;

use super::status::{conditions_from_hub, conditions_to_hub, with_status};
use super::value::{at, drop_empty, each, is_empty, Obj};
use super::ConvertError;

/// A v1alpha1 ExtensionConfig → v1beta2, in place.
pub(super) fn to_hub(obj: &mut Obj) -> Result<(), ConvertError> {
    drop_empty_client_config(obj);
    with_status(obj, |status| {
        conditions_to_hub(status, &[]);
        drop_empty(status, "v1beta2");
        let _ = each(status, "handlers", |handler| {
            drop_empty(handler, "failurePolicy");
            if handler.get("timeoutSeconds").is_some_and(Value::is_null) {
                handler.remove("timeoutSeconds");
            }
            Ok::<_, ()>(())
        });
    });
    drop_empty(obj, "status");
    Ok(())
}

/// A v1beta2 ExtensionConfig → v1alpha1, in place.
pub(super) fn from_hub(obj: &mut Obj) -> Result<(), ConvertError> {
    drop_empty_client_config(obj);
    with_status(obj, |status| {
        conditions_from_hub(status, &[]);
        let _ = each(status, "handlers", |handler| {
            if handler.get("timeoutSeconds").and_then(Value::as_i64) == Some(0) {
                handler.remove("timeoutSeconds");
            }
            if handler.get("failurePolicy").is_some_and(is_empty) {
                handler.remove("failurePolicy");
            }
            Ok::<_, ()>(())
        });
    });
    Ok(())
}

/// The empty `url`, service `path` and `service` of `spec.clientConfig` dropped: v1alpha1's
/// pointers could carry them, v1beta2 omits them, and neither means anything by them.
fn drop_empty_client_config(obj: &mut Obj) {
    if let Some(client) = at(obj, &["spec", "clientConfig"]) {
        drop_empty(client, "url");
        if let Some(service) = at(client, &["service"]) {
            drop_empty(service, "path");
        }
        drop_empty(client, "service");
    }
}
