//! Patches we did not write (the answers of GeneratePatches extensions: RFC 6902 JSON patches and
//! RFC 7386 merge patches), applied within bounds checked *while* applying: how many operations,
//! how large and how deep the patched object may grow, and how much work (values measured,
//! copied or shifted) one answer may cost. Going over a bound is an error naming the bound,
//! never an allocation failure or a stall.

mod budget;
mod json_patch;
mod measure;
mod merge;
mod scan;

pub use budget::{Bound, Budget};
pub use json_patch::{apply_json_patch, JsonPatch};
pub use measure::{check_object_size, measure, Size};
pub use merge::apply_merge_patch;
pub use scan::check_values;

/// The most operations one JSON patch may have: the API server's own limit on a JSON patch.
pub const MAX_OPERATIONS: usize = 10_000;

/// The largest object, serialised as compact JSON: etcd's default request limit (1.5 MiB), past
/// which the API server cannot store an object, so a larger one is refused before it is applied
/// or shown.
pub const MAX_OBJECT_BYTES: usize = 3 << 19;

/// The most values (scalars, arrays and objects) a patched object, or a patch, may hold.
pub const MAX_VALUES: usize = 1 << 19;

/// The deepest nesting of arrays and objects a patched object may reach (serde_json reads no
/// deeper than 128, so a deeper object could not be read back).
pub const MAX_DEPTH: usize = 100;

/// The work one GeneratePatches answer may cost, in units of one value measured, copied,
/// compared or shifted in an array (about a second's work at worst; a legitimate answer costs
/// thousands).
pub const WORK_BUDGET: u64 = 10_000_000;
