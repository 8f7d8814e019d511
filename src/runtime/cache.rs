//! The answers of deterministic hooks, by request. GeneratePatches and ValidateTopology handlers
//! must answer the same request the same way (the Runtime SDK's contract for topology mutation),
//! so a successful answer stands for every later identical request: a settled Cluster's resync
//! then calls no extension at all. Cluster API caches only the lifecycle hooks; this goes further.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// How many answers are kept: each settled Cluster holds one per external patch handler
/// (GeneratePatches, ValidateTopology), so 1,024 covers some hundreds of Clusters with a couple
/// of external patches each; answers are JSON patches of a few KiB, a few MiB in all.
pub const CAPACITY: usize = 1024;
/// How long an answer is kept after it was received (a use does not extend it): longer than the
/// topology controller's 10-minute resync, so a settled Cluster's resync finds its answers, and
/// short enough that a redeployed extension's new answers reach every Cluster within the half hour.
pub const TIME_TO_LIVE: Duration = Duration::from_secs(30 * 60);

/// What a request is known by: a SHA-256 of the handler's name and the request's JSON (settings
/// included), so requests differing in anything the extension sees are different keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey([u8; 32]);

impl CacheKey {
    /// The key of `request` (as sent, with its settings) to the handler `name`.
    pub fn new(name: &str, request: &Value) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(request.to_string().as_bytes());
        Self(hasher.finalize().into())
    }
}

/// One kept answer.
#[derive(Debug)]
struct Entry {
    answer: Value,
    received: Instant,
    /// Its place in the order of use.
    used: u64,
}

/// The answers, and the order they were last used in (the least recently used goes first).
#[derive(Debug, Default)]
struct Entries {
    answers: HashMap<CacheKey, Entry>,
    by_use: BTreeMap<u64, CacheKey>,
    uses: u64,
}

/// A bounded cache of hook answers with expiry; the time is passed in, so tests choose it.
#[derive(Debug)]
pub struct ResponseCache {
    capacity: usize,
    time_to_live: Duration,
    entries: Mutex<Entries>,
}

impl Default for ResponseCache {
    fn default() -> Self {
        Self::new(CAPACITY, TIME_TO_LIVE)
    }
}

impl ResponseCache {
    /// A cache of at most `capacity` answers, each kept for `time_to_live`.
    pub fn new(capacity: usize, time_to_live: Duration) -> Self {
        Self {
            capacity,
            time_to_live,
            entries: Mutex::default(),
        }
    }

    /// The answer kept for `key` if it is still fresh at `now`.
    pub fn get(&self, key: &CacheKey, now: Instant) -> Option<Value> {
        let mut entries = self.lock();
        let Entries {
            answers,
            by_use,
            uses,
        } = &mut *entries;
        let entry = answers.get_mut(key)?;
        if now.saturating_duration_since(entry.received) >= self.time_to_live {
            by_use.remove(&entry.used);
            answers.remove(key);
            return None;
        }
        by_use.remove(&entry.used);
        *uses += 1;
        entry.used = *uses;
        by_use.insert(*uses, *key);
        Some(entry.answer.clone())
    }

    /// Keeps `answer` for `key`, received at `now`, dropping the least recently used answer
    /// when the cache is full.
    pub fn put(&self, key: CacheKey, answer: Value, now: Instant) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.lock();
        let Entries {
            answers,
            by_use,
            uses,
        } = &mut *entries;
        if let Some(old) = answers.remove(&key) {
            by_use.remove(&old.used);
        }
        while answers.len() >= self.capacity {
            let Some((_, oldest)) = by_use.pop_first() else {
                break;
            };
            answers.remove(&oldest);
        }
        *uses += 1;
        by_use.insert(*uses, key);
        answers.insert(
            key,
            Entry {
                answer,
                received: now,
                used: *uses,
            },
        );
    }

    /// How many answers are kept.
    pub fn len(&self) -> usize {
        self.lock().answers.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(n: u32) -> CacheKey {
        CacheKey::new("generate.ext", &json!({ "n": n }))
    }

    #[test]
    fn an_answer_is_found_by_its_request_until_it_expires() {
        let cache = ResponseCache::new(8, Duration::from_secs(60));
        let start = Instant::now();
        assert_eq!(cache.get(&key(1), start), None);
        cache.put(key(1), json!({"items": []}), start);
        assert_eq!(cache.get(&key(2), start), None);
        assert_eq!(
            cache.get(&key(1), start + Duration::from_secs(59)),
            Some(json!({"items": []}))
        );
        assert_eq!(
            cache.get(&key(1), start + Duration::from_secs(60)),
            None,
            "a use does not extend an answer's life"
        );
        assert_eq!(cache.len(), 0, "an expired answer is dropped");
    }

    #[test]
    fn a_full_cache_drops_the_least_recently_used_answer() {
        let cache = ResponseCache::new(2, Duration::from_secs(60));
        let now = Instant::now();
        cache.put(key(1), json!(1), now);
        cache.put(key(2), json!(2), now);
        assert!(cache.get(&key(1), now).is_some());
        cache.put(key(3), json!(3), now);
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(&key(2), now), None);
        assert_eq!(cache.get(&key(1), now), Some(json!(1)));
        assert_eq!(cache.get(&key(3), now), Some(json!(3)));
        cache.put(key(3), json!("again"), now);
        assert_eq!(cache.len(), 2, "replacing an answer takes no second place");
        assert_eq!(cache.get(&key(3), now), Some(json!("again")));
    }

    #[test]
    fn the_key_covers_the_handler_and_every_setting() {
        let request = |value: &str| json!({"settings": {"region": value}, "items": []});
        assert_eq!(
            CacheKey::new("generate.ext", &request("a")),
            CacheKey::new("generate.ext", &request("a"))
        );
        assert_ne!(
            CacheKey::new("generate.ext", &request("a")),
            CacheKey::new("generate.ext", &request("b"))
        );
        assert_ne!(
            CacheKey::new("generate.ext", &request("a")),
            CacheKey::new("generate.other", &request("a"))
        );
    }
}
