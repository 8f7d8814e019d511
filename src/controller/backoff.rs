//! Per-object retry backoff for a controller: consecutive failures counted by object key, each
//! doubling the delay before the next attempt, up to a cap; a success forgets the count.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Consecutive failures per object (`namespace/name`), and the delays they lead to.
#[derive(Debug)]
pub struct Backoff {
    first: Duration,
    max: Duration,
    failures: Mutex<HashMap<String, u32>>,
}

impl Backoff {
    /// Retries after `first`, doubling per further failure, never longer than `max`.
    pub fn new(first: Duration, max: Duration) -> Self {
        Self {
            first,
            max,
            failures: Mutex::default(),
        }
    }

    /// Counts a failure of `key`; the failures so far and the delay before its next attempt.
    pub fn failed(&self, key: &str) -> (u32, Duration) {
        let failures = {
            let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
            let count = failures.entry(key.to_owned()).or_default();
            *count = count.saturating_add(1);
            *count
        };
        (failures, self.delay(failures))
    }

    /// Forgets the failures of `key` (it succeeded).
    pub fn succeeded(&self, key: &str) {
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }

    /// The delay after the `failures`-th consecutive failure (1 for the first).
    fn delay(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(16);
        self.first.saturating_mul(1 << doublings).min(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_exponentially_up_to_a_cap() {
        let backoff = Backoff::new(Duration::from_secs(2), Duration::from_secs(300));
        assert_eq!(backoff.delay(1), Duration::from_secs(2));
        assert_eq!(backoff.delay(2), Duration::from_secs(4));
        assert_eq!(backoff.delay(5), Duration::from_secs(32));
        assert_eq!(backoff.delay(9), Duration::from_secs(300));
        assert_eq!(backoff.delay(u32::MAX), Duration::from_secs(300));
    }

    #[test]
    fn a_success_starts_over() {
        let backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
        assert_eq!(backoff.failed("ns/a"), (1, Duration::from_secs(1)));
        assert_eq!(backoff.failed("ns/a"), (2, Duration::from_secs(2)));
        assert_eq!(backoff.failed("ns/b"), (1, Duration::from_secs(1)));
        backoff.succeeded("ns/a");
        assert_eq!(backoff.failed("ns/a"), (1, Duration::from_secs(1)));
    }
}
