//! The whole hostile catalogue through the admission entry point in one process, alone in its
//! test binary so that the process's peak resident memory is this run's: it must stay under the
//! 128 MiB the server is budgeted for (its pod limit is 256 Mi).

#[path = "hostile/inputs.rs"]
mod inputs;

use capi_topology::admission;

const PEAK_BUDGET_KIB: u64 = 128 * 1024;

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

#[test]
fn the_worst_inputs_stay_within_the_memory_budget() {
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
