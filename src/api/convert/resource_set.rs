//! ClusterResourceSet addons v1beta1 ↔ v1beta2: the spec is unchanged; only the status
//! conditions trade places (`api/addons/v1beta1/conversion.go`). No conversion-data.

use super::status::{conditions_from_hub, conditions_to_hub, with_status};
use super::value::{drop_empty, Obj};
use super::ConvertError;

/// A v1beta1 ClusterResourceSet → v1beta2, in place.
pub(super) fn to_hub(obj: &mut Obj) -> Result<(), ConvertError> {
    with_status(obj, |status| {
        conditions_to_hub(status, &[]);
        drop_empty(status, "v1beta2");
    });
    drop_empty(obj, "status");
    Ok(())
}

/// A v1beta2 ClusterResourceSet → v1beta1, in place.
pub(super) fn from_hub(obj: &mut Obj) -> Result<(), ConvertError> {
    with_status(obj, |status| conditions_from_hub(status, &[]));
    Ok(())
}
