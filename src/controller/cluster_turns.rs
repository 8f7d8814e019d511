//! One reconcile of a Cluster at a time across this replica's controllers that write it (the
//! topology controller and the Cluster infrastructure controller).
//!
//! Both write `status.deprecated.v1beta1.conditions`, a list that v1.14.0's CRD declares atomic,
//! so each status write is a merge patch guarded by the resourceVersion it was computed from.
//! Two controllers reconciling the same Cluster at once each compute from the same copy and the
//! second write is refused with 409 Conflict (one status patch in four at 2,000 Clusters). Taking
//! turns per Cluster, and reading the Cluster from the watch cache (which keeps what this
//! replica wrote) once the turn is taken, bases every write on the newest copy: a conflict is
//! left only when another process wrote the Cluster in between.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{Mutex as TurnLock, OwnedMutexGuard};

/// A Cluster's namespace and name.
type ClusterKey = (String, String);

/// Turns per Cluster, shared by the controllers of one replica (cheap to clone).
#[derive(Clone, Default)]
pub struct ClusterTurns {
    /// The lock of each Cluster someone holds or waits for; an entry goes with its last turn.
    locks: Arc<Mutex<HashMap<ClusterKey, Arc<TurnLock<()>>>>>,
}

/// A Cluster's turn: other controllers wait for it until it is dropped.
pub struct Turn {
    guard: Option<OwnedMutexGuard<()>>,
    key: ClusterKey,
    locks: Arc<Mutex<HashMap<ClusterKey, Arc<TurnLock<()>>>>>,
}

impl ClusterTurns {
    /// Waits until no other controller of this replica reconciles the Cluster, then holds it.
    pub async fn take(&self, namespace: &str, name: &str) -> Turn {
        let key = (namespace.to_owned(), name.to_owned());
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(locks.entry(key.clone()).or_default())
        };
        Turn {
            guard: Some(lock.lock_owned().await),
            key,
            locks: Arc::clone(&self.locks),
        }
    }

    /// How many Clusters have an entry (held or waited for).
    #[cfg(test)]
    fn entries(&self) -> usize {
        self.locks.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
        self.guard = None;
        // Only the map holds the lock now: nobody waits for this Cluster (a waiter clones the
        // lock under the map's mutex, held here).
        if locks
            .get(&self.key)
            .is_some_and(|lock| Arc::strong_count(lock) == 1)
        {
            locks.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_second_turn_on_the_same_cluster_waits_for_the_first() {
        let turns = ClusterTurns::default();
        let first = turns.take("default", "dev").await;
        let waiting = tokio::spawn({
            let turns = turns.clone();
            async move { turns.take("default", "dev").await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "the second turn waits");
        let _other = tokio::time::timeout(Duration::from_secs(5), turns.take("default", "prod"))
            .await
            .expect("another Cluster does not wait");
        drop(first);
        let second = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the second turn comes once the first ends")
            .expect("no panic");
        drop(second);
    }

    #[tokio::test]
    async fn a_cluster_nobody_reconciles_keeps_no_entry() {
        let turns = ClusterTurns::default();
        let first = turns.take("default", "dev").await;
        let waiting = tokio::spawn({
            let turns = turns.clone();
            async move { drop(turns.take("default", "dev").await) }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(first);
        assert_eq!(turns.entries(), 1, "kept while another waits");
        waiting.await.expect("no panic");
        assert_eq!(turns.entries(), 0);
    }
}
