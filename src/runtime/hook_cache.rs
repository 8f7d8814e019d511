//! Blocking answers of lifecycle hooks, per Cluster and hook, until their `retryAfterSeconds`
//! pass (Cluster API v1.14's hook cache): while one is kept, the hook is not called again for
//! that Cluster and the kept answer stands, with the seconds that remain.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::topology::hooks::LifecycleHook;

/// How many blocking answers are kept: one per Cluster and blocking hook held now, so 16,384
/// covers thousands of Clusters held at once; an entry is a key and a message (a few hundred
/// bytes), a few MiB at most.
pub const CAPACITY: usize = 16_384;

/// A Cluster (`namespace/name`) and one of its hooks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HookKey {
    cluster: String,
    hook: LifecycleHook,
}

impl HookKey {
    /// The key of `hook` for the Cluster `namespace/name`.
    pub fn new(namespace: &str, name: &str, hook: LifecycleHook) -> Self {
        Self {
            cluster: format!("{namespace}/{name}"),
            hook,
        }
    }
}

/// A kept blocking answer.
#[derive(Debug, Clone)]
struct Held {
    until: Instant,
    message: String,
}

/// The blocking answers, bounded by [`CAPACITY`]; the time is passed in, so tests choose it.
#[derive(Debug)]
pub struct HookCache {
    capacity: usize,
    held: Mutex<HashMap<HookKey, Held>>,
}

impl Default for HookCache {
    fn default() -> Self {
        Self::new(CAPACITY)
    }
}

impl HookCache {
    /// A cache of at most `capacity` answers.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            held: Mutex::default(),
        }
    }

    /// The kept answer of `key` still holding at `now`: the time left and its message. An answer
    /// whose time has passed is dropped.
    pub fn get(&self, key: &HookKey, now: Instant) -> Option<(Duration, String)> {
        let mut held = self.lock();
        let entry = held.get(key)?;
        if entry.until <= now {
            held.remove(key);
            return None;
        }
        Some((entry.until - now, entry.message.clone()))
    }

    /// Keeps an answer of `key` holding until `until`. When the cache is full, answers whose time
    /// has passed go first, then the one that ends soonest.
    pub fn put(&self, key: HookKey, until: Instant, message: String, now: Instant) {
        if self.capacity == 0 {
            return;
        }
        let mut held = self.lock();
        if !held.contains_key(&key) && held.len() >= self.capacity {
            held.retain(|_, entry| entry.until > now);
            if held.len() >= self.capacity {
                let soonest = held
                    .iter()
                    .min_by_key(|(_, entry)| entry.until)
                    .map(|(key, _)| key.clone());
                if let Some(soonest) = soonest {
                    held.remove(&soonest);
                }
            }
        }
        held.insert(key, Held { until, message });
    }

    /// Forgets the answer of `key` (the hook let the Cluster proceed).
    pub fn remove(&self, key: &HookKey) {
        self.lock().remove(key);
    }

    /// How many answers are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<HookKey, Held>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> HookKey {
        HookKey::new("default", name, LifecycleHook::BeforeClusterUpgrade)
    }

    #[test]
    fn an_answer_holds_until_its_time_passes() {
        let cache = HookCache::new(4);
        let start = Instant::now();
        cache.put(key("a"), start + Duration::from_secs(30), "wait".into(), start);
        assert_eq!(
            cache.get(&key("a"), start + Duration::from_secs(10)),
            Some((Duration::from_secs(20), "wait".to_owned()))
        );
        assert_eq!(cache.get(&key("b"), start), None);
        let other_hook = HookKey::new("default", "a", LifecycleHook::BeforeClusterDelete);
        assert_eq!(cache.get(&other_hook, start), None, "kept per hook");
        assert_eq!(cache.get(&key("a"), start + Duration::from_secs(30)), None);
        assert_eq!(cache.len(), 0, "a passed answer is dropped");
        cache.put(key("a"), start + Duration::from_secs(5), String::new(), start);
        cache.remove(&key("a"));
        assert_eq!(cache.get(&key("a"), start), None);
    }

    #[test]
    fn a_full_cache_drops_passed_answers_then_the_one_ending_soonest() {
        let cache = HookCache::new(2);
        let now = Instant::now();
        let at = |seconds| now + Duration::from_secs(seconds);
        cache.put(key("a"), at(10), String::new(), now);
        cache.put(key("b"), at(20), String::new(), now);
        cache.put(key("c"), at(30), String::new(), now);
        assert_eq!(cache.len(), 2);
        assert!(cache.get(&key("a"), now).is_none(), "the soonest went");
        cache.put(key("d"), at(40), String::new(), at(25));
        assert!(cache.get(&key("b"), now).is_none(), "a passed answer went first");
        assert!(cache.get(&key("c"), now).is_some());
        assert!(cache.get(&key("d"), now).is_some());
        cache.put(key("d"), at(50), "again".into(), now);
        assert_eq!(cache.len(), 2, "replacing an answer takes no second place");
    }
}
