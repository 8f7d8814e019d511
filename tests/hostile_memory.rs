//! The whole hostile catalogue through the admission entry point in one process, then the
//! hostile and the large legitimate ConversionReviews, one and four at once (`--max-in-flight`'s
//! default), alone in its test binary so that the process's peak resident memory is this run's:
//! one review must stay under the 128 MiB the server is budgeted for, four at once under the
//! share of the pod's limit docs/deployment.md ("Limits") gives the evaluations.

#[path = "hostile/conversion_inputs.rs"]
mod conversion_inputs;
#[path = "hostile/inputs.rs"]
mod inputs;

use capi_topology::admission;
use capi_topology::api::convert::review::review_bytes;
use capi_topology::api::convert::ContractVersions;

const PEAK_BUDGET_KIB: u64 = 128 * 1024;
/// What one conversion review may add to the process, and four at once (docs/deployment.md).
const CONVERSION_BUDGET_KIB: u64 = 64 * 1024;
const FOUR_AT_ONCE_BUDGET_KIB: u64 = 192 * 1024;

/// Resets the process's peak resident set to its current one (Linux `clear_refs`), so that the
/// next reading is the peak of what runs after; false where that is not possible.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The process's peak resident set (`VmHWM`), when the platform reports it.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Every provider kind is served at v1beta2.
struct AnyVersion;

impl ContractVersions for AnyVersion {
    fn version_of(&self, _group: &str, _kind: &str) -> Option<String> {
        Some("v1beta2".to_owned())
    }
}

/// How much `run` raises the resident memory at its peak over what it was before, in KiB
/// (what the test's own setup left resident is not the review's); `None` where it cannot be
/// measured.
fn peak_of(run: impl FnOnce()) -> Option<u64> {
    let measured = reset_peak();
    let before = peak_rss_kib()?;
    run();
    peak_rss_kib()
        .filter(|_| measured)
        .map(|peak| peak.saturating_sub(before))
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
fn the_worst_inputs_stay_within_the_memory_budget() {
    // Conversion first: the admission catalogue leaves the allocator holding memory it measured.
    conversion_reviews();
    admission_catalogue();
}

fn conversion_reviews() {
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
            let Some(peak) = peak_of(|| convert_at_once(body, copies, status)) else {
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

fn admission_catalogue() {
    let store = inputs::store();
    let mut worst = (0, "");
    for build in inputs::catalogue() {
        let case = build();
        let measured = reset_peak();
        let review = admission::review(case.path, &case.body, &store);
        let response = review.response.expect("every review gets a response");
        let allowed = case.expect == inputs::Expect::Allowed;
        assert_eq!(response.allowed, allowed, "{}", case.name);
        assert!(response.result.message.contains(case.message), "{}", case.name);
        drop(response);
        match (measured, peak_rss_kib()) {
            (true, Some(peak)) if peak > worst.0 => worst = (peak, case.name),
            (true, Some(_)) => {}
            _ => {
                eprintln!("peak memory cannot be measured on this platform");
                return;
            }
        }
    }
    let (peak, name) = worst;
    eprintln!("peak resident memory: {} MiB (case {name})", peak / 1024);
    assert!(
        peak < PEAK_BUDGET_KIB,
        "{name}: peak {peak} KiB over {PEAK_BUDGET_KIB} KiB"
    );
}
