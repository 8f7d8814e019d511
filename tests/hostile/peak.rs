//! What a piece of work adds to the process's peak resident memory (Linux), for the hostile
//! memory tests. Each test runs alone in its own test binary, so no other test's allocations
//! land in its readings.

/// How much `run` raises the resident memory at its peak over what it was before, in KiB (what
/// the test's own setup left resident, such as the input it built, is not the work's); `None`
/// where it cannot be measured.
pub fn peak_of(run: impl FnOnce()) -> Option<u64> {
    let measured = reset_peak();
    let before = peak_rss_kib()?;
    run();
    peak_rss_kib()
        .filter(|_| measured)
        .map(|peak| peak.saturating_sub(before))
}

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
