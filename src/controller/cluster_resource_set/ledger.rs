//! What failed, kept in memory by the leader: resources that cannot be read (per set), and
//! applies that failed (per set, Cluster and resource, or per set and Cluster when the workload
//! cluster could not be reached), each with its own exponential backoff, so one broken Cluster
//! or resource never delays the others.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use crate::addons::condition::{Problem, SetProblems};
use crate::api::ResourceRef;

/// The first retry after a failure; each further failure doubles it, up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(120);

/// `(namespace, name)` of a ClusterResourceSet.
pub type SetKey = (String, String);

/// A failed apply: of one resource, or (`None`) of everything, the cluster being unreachable.
type RetryKey = (SetKey, String, Option<ResourceRef>);

#[derive(Debug)]
struct Retry {
    failures: u32,
    due: Instant,
    problem: Problem,
}

/// The delay before retrying after the `failures`-th consecutive failure (1 for the first).
fn retry_delay(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_RETRY.saturating_mul(1 << doublings).min(MAX_RETRY)
}

/// Failures of the ClusterResourceSets, by set.
#[derive(Debug, Default)]
pub struct Ledger {
    unreadable: HashMap<SetKey, BTreeMap<ResourceRef, Problem>>,
    retries: BTreeMap<RetryKey, Retry>,
}

impl Ledger {
    /// Records which resources of `set` cannot be read; whether that changed.
    pub fn set_unreadable(&mut self, set: &SetKey, problems: BTreeMap<ResourceRef, Problem>) -> bool {
        let before = self.unreadable.get(set);
        if before.map_or(problems.is_empty(), |b| *b == problems) {
            return false;
        }
        if problems.is_empty() {
            self.unreadable.remove(set);
        } else {
            self.unreadable.insert(set.clone(), problems);
        }
        true
    }

    /// Whether applying `resource` of `set` to `cluster` must wait for its retry.
    pub fn is_waiting(&self, set: &SetKey, cluster: &str, resource: &ResourceRef, now: Instant) -> bool {
        let waits = |resource: Option<&ResourceRef>| {
            self.retries
                .get(&(set.clone(), cluster.to_owned(), resource.cloned()))
                .is_some_and(|r| r.due > now)
        };
        waits(None) || waits(Some(resource))
    }

    /// Records a failed apply; the next attempt waits twice as long as the last.
    pub fn failed(
        &mut self,
        set: &SetKey,
        cluster: &str,
        resource: Option<&ResourceRef>,
        problem: Problem,
        now: Instant,
    ) {
        let key = (set.clone(), cluster.to_owned(), resource.cloned());
        let failures = self.retries.get(&key).map_or(0, |r| r.failures) + 1;
        let due = now + retry_delay(failures);
        self.retries.insert(
            key,
            Retry {
                failures,
                due,
                problem,
            },
        );
    }

    /// Records a successful apply (or connection, for `None`).
    pub fn succeeded(&mut self, set: &SetKey, cluster: &str, resource: Option<&ResourceRef>) {
        self.retries
            .remove(&(set.clone(), cluster.to_owned(), resource.cloned()));
    }

    /// When the next retry for the Cluster `namespace/cluster` is due, if one is.
    pub fn next_due(&self, namespace: &str, cluster: &str) -> Option<Instant> {
        self.retries
            .iter()
            .filter(|((set, c, _), _)| set.0 == namespace && c == cluster)
            .map(|(_, retry)| retry.due)
            .min()
    }

    /// What is wrong with `set`: its unreadable resources, and per Cluster what failed (the
    /// cluster being unreachable, or each resource it refused).
    pub fn problems(&self, set: &SetKey) -> SetProblems {
        let mut problems = SetProblems {
            resources: self.unreadable.get(set).cloned().unwrap_or_default(),
            clusters: BTreeMap::new(),
        };
        let mut by_cluster: BTreeMap<&str, Vec<(&Option<ResourceRef>, &Problem)>> = BTreeMap::new();
        for ((_, cluster, resource), retry) in self.retries.iter().filter(|((s, _, _), _)| s == set) {
            by_cluster
                .entry(cluster)
                .or_default()
                .push((resource, &retry.problem));
        }
        for (cluster, failures) in by_cluster {
            // An unreachable cluster (the `None` entry, sorted first) says it all.
            let problem = match failures.as_slice() {
                [(None, problem), ..] | [(_, problem)] => (*problem).clone(),
                many => Problem::new(
                    many[0].1.reason,
                    many.iter()
                        .map(|(resource, p)| match resource {
                            Some(r) => format!("{} {}: {}", r.kind, r.name, p.message),
                            None => p.message.clone(),
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            };
            problems.clusters.insert(cluster.to_owned(), problem);
        }
        problems
    }

    /// Forgets the failures of the Cluster `namespace/cluster` for every set but `keep` (all of
    /// them when the Cluster is gone); the sets whose problems changed.
    pub fn forget_cluster(&mut self, namespace: &str, cluster: &str, keep: &[SetKey]) -> Vec<SetKey> {
        let mut affected = Vec::new();
        self.retries.retain(|(set, c, _), _| {
            let forget = set.0 == namespace && c == cluster && !keep.contains(set);
            if forget && !affected.contains(set) {
                affected.push(set.clone());
            }
            !forget
        });
        affected
    }

    /// Forgets everything about a deleted set.
    pub fn forget_set(&mut self, set: &SetKey) {
        self.unreadable.remove(set);
        self.retries.retain(|(s, _, _), _| s != set);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addons::condition::reasons;

    fn set(name: &str) -> SetKey {
        ("ns".to_owned(), name.to_owned())
    }

    fn config_map(name: &str) -> ResourceRef {
        ResourceRef {
            name: name.to_owned(),
            kind: "ConfigMap".to_owned(),
        }
    }

    fn refused(message: &str) -> Problem {
        Problem::new(reasons::APPLY_FAILED, message)
    }

    #[test]
    fn retries_back_off_exponentially_up_to_a_cap() {
        assert_eq!(retry_delay(1), Duration::from_secs(1));
        assert_eq!(retry_delay(2), Duration::from_secs(2));
        assert_eq!(retry_delay(6), Duration::from_secs(32));
        assert_eq!(retry_delay(9), MAX_RETRY);
        assert_eq!(retry_delay(u32::MAX), MAX_RETRY);
    }

    #[test]
    fn a_failure_delays_only_its_cluster_and_resource() {
        let mut ledger = Ledger::default();
        let now = Instant::now();
        ledger.failed(&set("cni"), "c1", Some(&config_map("a")), refused("no"), now);
        assert!(ledger.is_waiting(&set("cni"), "c1", &config_map("a"), now));
        assert!(!ledger.is_waiting(&set("cni"), "c1", &config_map("b"), now));
        assert!(!ledger.is_waiting(&set("cni"), "c2", &config_map("a"), now));
        assert!(!ledger.is_waiting(&set("cni"), "c1", &config_map("a"), now + FIRST_RETRY));
        ledger.failed(&set("cni"), "c1", Some(&config_map("a")), refused("no"), now);
        assert_eq!(ledger.next_due("ns", "c1"), Some(now + 2 * FIRST_RETRY));
        ledger.failed(
            &set("cni"),
            "c2",
            None,
            Problem::new(reasons::REMOTE_CLUSTER_CLIENT_FAILED, "down"),
            now,
        );
        assert!(
            ledger.is_waiting(&set("cni"), "c2", &config_map("b"), now),
            "an unreachable cluster waits whole"
        );
        ledger.succeeded(&set("cni"), "c1", Some(&config_map("a")));
        assert_eq!(ledger.next_due("ns", "c1"), None);
    }

    #[test]
    fn problems_name_each_cluster_once() {
        let mut ledger = Ledger::default();
        let now = Instant::now();
        ledger.failed(
            &set("cni"),
            "c1",
            Some(&config_map("a")),
            refused("x refused"),
            now,
        );
        ledger.failed(
            &set("cni"),
            "c1",
            Some(&config_map("b")),
            refused("y refused"),
            now,
        );
        ledger.failed(
            &set("cni"),
            "c2",
            Some(&config_map("a")),
            refused("x refused"),
            now,
        );
        ledger.failed(
            &set("cni"),
            "c2",
            None,
            Problem::new(reasons::REMOTE_CLUSTER_CLIENT_FAILED, "down"),
            now,
        );
        ledger.failed(&set("other"), "c3", None, refused("elsewhere"), now);
        let problems = ledger.problems(&set("cni"));
        assert_eq!(
            problems.clusters["c1"].message,
            "ConfigMap a: x refused, ConfigMap b: y refused"
        );
        assert_eq!(problems.clusters["c2"].message, "down");
        assert_eq!(problems.clusters.len(), 2);
        assert!(ledger.set_unreadable(&set("cni"), BTreeMap::from([(config_map("z"), refused("gone"))])));
        assert!(!ledger.set_unreadable(&set("cni"), BTreeMap::from([(config_map("z"), refused("gone"))])));
        assert_eq!(ledger.problems(&set("cni")).resources.len(), 1);
        assert_eq!(ledger.forget_cluster("ns", "c2", &[]), [set("cni")]);
        assert_eq!(
            ledger.forget_cluster("ns", "c1", &[set("cni")]),
            Vec::<SetKey>::new()
        );
        ledger.forget_set(&set("cni"));
        assert!(ledger.problems(&set("cni")).is_empty());
        assert!(!ledger.problems(&set("other")).is_empty());
    }
}
