//! The hostile and the large legitimate ConversionReviews, one and four at once
//! (`--max-in-flight`'s default), alone in their test binary: what each adds to the process's
//! peak resident memory must stay under the share of the pod's limit docs/deployment.md
//! ("Limits") gives the evaluations.

#[path = "hostile/conversion_inputs.rs"]
mod conversion_inputs;
#[path = "hostile/peak.rs"]
mod peak;

use capi_topology::api::convert::review::review_bytes;
use capi_topology::api::convert::ContractVersions;
use peak::measured;

/// What one conversion review may add to the process, and four at once (docs/deployment.md).
const CONVERSION_BUDGET_KIB: u64 = 64 * 1024;
const FOUR_AT_ONCE_BUDGET_KIB: u64 = 192 * 1024;

/// Every provider kind is served at v1beta2.
struct AnyVersion;

impl ContractVersions for AnyVersion {
    fn version_of(&self, _group: &str, _kind: &str) -> Option<String> {
        Some("v1beta2".to_owned())
    }
}

/// Runs `copies` conversions of `body` at once; each must answer `status`.
fn convert_at_once(body: &[u8], copies: usize, status: &str) {
    std::thread::scope(|scope| {
        for _ in 0..copies {
            scope.spawn(|| {
                let answer = review_bytes(body, &AnyVersion);
                assert_eq!(
                    answer.failure.is_none(),
                    status == "Success",
                    "{:?}",
                    answer.failure
                );
            });
        }
    });
}

/// One test, so that no other runs beside a measurement.
#[test]
fn conversion_reviews_stay_within_the_memory_budget() {
    let cases = [
        (
            "2 MiB of empty arrays",
            conversion_inputs::empty_arrays(2 << 20),
            "Failure",
        ),
        (
            "7 MiB of empty arrays",
            conversion_inputs::empty_arrays(7 << 20),
            "Failure",
        ),
        (
            "10,000 small Clusters",
            conversion_inputs::small_clusters(10_000),
            "Success",
        ),
    ];
    for (name, body, status) in &cases {
        for (copies, budget) in [(1, CONVERSION_BUDGET_KIB), (4, FOUR_AT_ONCE_BUDGET_KIB)] {
            let Some(peak) = measured(|| convert_at_once(body, copies, status))
                .1
                .map(|p| p.added())
            else {
                eprintln!("peak memory cannot be measured on this platform");
                return;
            };
            eprintln!(
                "{name}, {copies} at once: peak resident memory {} MiB",
                peak / 1024
            );
            assert!(
                peak < budget,
                "{name}, {copies} at once: peak {peak} KiB over {budget} KiB"
            );
        }
    }
}
