//! Per-server backoff: after a call to an Extension server fails in transport (refused, reset,
//! timed out), further calls to any handler of that server fail at once, without the network,
//! until a window has passed. A dead extension so costs the Clusters that need it one timeout per
//! window, and the reconciles of every other Cluster nothing.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The first window after a failure.
pub const FIRST_WINDOW: Duration = Duration::from_secs(1);
/// The longest window: an extension that comes back is called again within five minutes.
pub const MAX_WINDOW: Duration = Duration::from_secs(300);

/// One failing server: how often it failed in a row, until when it is not called, and why.
#[derive(Debug, Clone)]
struct Failing {
    failures: u32,
    until: Instant,
    error: String,
}

/// The failing servers, by ExtensionConfig name.
#[derive(Debug, Default)]
pub struct ServerBackoff {
    failing: Mutex<HashMap<String, Failing>>,
}

impl ServerBackoff {
    /// `Err` with the error that opened the window while the server of `config` is not to be
    /// called at `now`: the same text on every call, so conditions built from it stay still.
    pub fn check(&self, config: &str, now: Instant) -> Result<(), String> {
        match self.lock().get(config) {
            Some(failing) if now < failing.until => Err(failing.error.clone()),
            _ => Ok(()),
        }
    }

    /// Records a failed call to the server of `config` at `now`, saying `error`: the next
    /// window is twice the last one, from [`FIRST_WINDOW`] up to [`MAX_WINDOW`].
    pub fn failed(&self, config: &str, error: &str, now: Instant) {
        let mut failing = self.lock();
        let entry = failing.entry(config.to_owned()).or_insert_with(|| Failing {
            failures: 0,
            until: now,
            error: String::new(),
        });
        entry.failures = entry.failures.saturating_add(1);
        entry.until = now + window(entry.failures);
        error.clone_into(&mut entry.error);
    }

    /// Forgets the failures of the server of `config`: a call succeeded.
    pub fn succeeded(&self, config: &str) {
        self.lock().remove(config);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Failing>> {
        self.failing.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The window after `failures` failures in a row.
fn window(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_WINDOW.saturating_mul(1 << doublings).min(MAX_WINDOW)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_fails_further_calls_fast_with_the_same_text() {
        let backoff = ServerBackoff::default();
        let start = Instant::now();
        assert_eq!(backoff.check("ext", start), Ok(()));
        backoff.failed("ext", "http call failed: refused", start);
        for offset in [0, 500, 999] {
            assert_eq!(
                backoff.check("ext", start + Duration::from_millis(offset)),
                Err("http call failed: refused".to_owned())
            );
        }
        assert_eq!(backoff.check("other", start), Ok(()));
        assert_eq!(backoff.check("ext", start + FIRST_WINDOW), Ok(()));
    }

    #[test]
    fn windows_double_up_to_the_cap_and_a_success_resets_them() {
        let backoff = ServerBackoff::default();
        let start = Instant::now();
        backoff.failed("ext", "down", start);
        backoff.failed("ext", "down", start);
        backoff.failed("ext", "down", start);
        assert!(backoff
            .check("ext", start + Duration::from_millis(3_999))
            .is_err());
        assert!(backoff.check("ext", start + Duration::from_secs(4)).is_ok());
        for _ in 0..40 {
            backoff.failed("ext", "down", start);
        }
        assert!(backoff
            .check("ext", start + MAX_WINDOW - Duration::from_millis(1))
            .is_err());
        assert!(backoff.check("ext", start + MAX_WINDOW).is_ok());
        backoff.succeeded("ext");
        backoff.failed("ext", "down again", start);
        assert_eq!(
            backoff.check("ext", start),
            Err("down again".to_owned()),
            "the window opens with the newest failure's text"
        );
        assert!(backoff.check("ext", start + FIRST_WINDOW).is_ok());
    }
}
