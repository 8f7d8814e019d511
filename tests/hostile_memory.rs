//! The whole hostile catalogue through the admission entry point, alone in its test binary:
//! what one review adds to the process's peak resident memory, over what the test held before
//! it (the input it built among it), must fit in the 128 MiB the server is budgeted for beside
//! what the server holds at rest. The conversion reviews are measured in their own binary
//! (`hostile_memory_conversion.rs`).

#[path = "hostile/inputs.rs"]
mod inputs;
#[path = "hostile/peak.rs"]
mod peak;

use capi_topology::admission;
use peak::measured;

/// The server's memory budget, and what it holds at rest of it (docs/deployment.md, "Limits"):
/// one review may add the difference.
const PEAK_BUDGET_KIB: u64 = 128 * 1024;
const AT_REST_KIB: u64 = 30 * 1024;

#[test]
fn the_worst_inputs_stay_within_the_memory_budget() {
    let store = inputs::store();
    let mut worst = (0, "");
    for build in inputs::catalogue() {
        let case = build();
        let (review, peak) = measured(|| admission::review(case.path, &case.body, &store));
        let response = review.response.expect("every review gets a response");
        let allowed = case.expect == inputs::Expect::Allowed;
        assert_eq!(response.allowed, allowed, "{}", case.name);
        assert!(response.result.message.contains(case.message), "{}", case.name);
        let Some(added) = peak.map(|p| p.added()) else {
            eprintln!("peak memory cannot be measured on this platform");
            return;
        };
        if added > worst.0 {
            worst = (added, case.name);
        }
    }
    let (added, name) = worst;
    eprintln!(
        "the most one review added to the peak resident memory: {} MiB (case {name})",
        added / 1024
    );
    let budget = PEAK_BUDGET_KIB - AT_REST_KIB;
    assert!(added < budget, "{name}: added {added} KiB, over {budget} KiB");
}
