//! The process's peak resident memory around a piece of work (Linux), for the hostile tests
//! that bound memory. A test that reads it runs alone in its binary or process, so no other
//! test's allocations land in its readings.

/// The process's resident memory, in KiB: when the work started, and at its peak during it.
pub struct Peak {
    before: u64,
    /// The peak resident set (`VmHWM`) during the work, the process's whole.
    pub peak: u64,
}

impl Peak {
    /// What the work added to the resident memory at its peak (what the test's own setup left
    /// resident, such as the input it built, is not the work's). Not every test binary that
    /// includes this file reads it.
    #[allow(dead_code)]
    pub fn added(&self) -> u64 {
        self.peak.saturating_sub(self.before)
    }
}

/// Runs `work` with the process's peak resident set reset to its current one first (Linux
/// `clear_refs`); its result, and the readings where the platform gives them.
pub fn measured<T>(work: impl FnOnce() -> T) -> (T, Option<Peak>) {
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = peak_rss_kib();
    let result = work();
    let readings = match (reset, before, peak_rss_kib()) {
        (true, Some(before), Some(peak)) => Some(Peak { before, peak }),
        _ => None,
    };
    (result, readings)
}

/// The process's peak resident set (`VmHWM`), when the platform reports it.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
