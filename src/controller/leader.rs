//! Leader election over a `coordination.k8s.io` Lease, so that of several replicas exactly one
//! reconciles. The holder renews the Lease; another replica takes it over only once it has not
//! been renewed for its whole duration. Writes use the Lease's resourceVersion, so two replicas
//! racing for it cannot both win.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, PostParams};
use kube::Client;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long a Lease holds without renewal.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// How often the holder renews, and how often a candidate retries.
const RETRY_PERIOD: Duration = Duration::from_secs(2);

/// One candidate for the Lease `name` in `namespace`.
#[derive(Clone)]
pub struct LeaderElector {
    api: Api<Lease>,
    name: String,
    identity: String,
}

impl LeaderElector {
    /// A candidate named `identity` (the pod name) for the Lease `namespace/name`.
    pub fn new(client: Client, namespace: &str, name: &str, identity: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            name: name.to_owned(),
            identity: identity.to_owned(),
        }
    }

    /// Waits until this candidate holds the Lease, then keeps renewing it; `None` when
    /// `shutdown` came first.
    pub async fn lead(self, shutdown: &CancellationToken) -> Option<Leadership> {
        if !self.acquire(shutdown).await {
            return None;
        }
        let lost = CancellationToken::new();
        let stop = shutdown.child_token();
        let holder = tokio::spawn({
            let (shutdown, lost) = (shutdown.clone(), lost.clone());
            async move { self.hold(shutdown, lost).await }
        });
        let stopper = tokio::spawn({
            let (lost, stop) = (lost.clone(), stop.clone());
            async move {
                lost.cancelled().await;
                stop.cancel();
            }
        });
        Some(Leadership {
            stop,
            lost,
            holder,
            stopper,
        })
    }

    /// Waits until this candidate holds the Lease; false when `shutdown` came first.
    async fn acquire(&self, shutdown: &CancellationToken) -> bool {
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => {
                    tracing::info!(lease = %self.name, identity = %self.identity, "leading");
                    return true;
                }
                Ok(false) => {}
                Err(err) => tracing::warn!(error = %err, "cannot read or write the leader Lease"),
            }
            tokio::select! {
                () = shutdown.cancelled() => return false,
                () = tokio::time::sleep(RETRY_PERIOD) => {}
            }
        }
    }

    /// Renews the Lease until `shutdown` (then releases it) or until it could not be renewed for
    /// [`LEASE_DURATION`] (then cancels `lost`: another replica may lead by now).
    async fn hold(&self, shutdown: CancellationToken, lost: CancellationToken) {
        let mut last_renewal = tokio::time::Instant::now();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => {
                    self.release().await;
                    return;
                }
                () = tokio::time::sleep(RETRY_PERIOD) => {}
            }
            match self.try_acquire_or_renew().await {
                Ok(true) => last_renewal = tokio::time::Instant::now(),
                Ok(false) => {
                    tracing::error!(lease = %self.name, "leadership lost to another replica");
                    lost.cancel();
                    return;
                }
                Err(err) => {
                    tracing::warn!(error = %err, "cannot renew the leader Lease");
                    if last_renewal.elapsed() >= LEASE_DURATION {
                        tracing::error!(lease = %self.name, "leadership lost: the Lease expired");
                        lost.cancel();
                        return;
                    }
                }
            }
        }
    }

    /// Takes the Lease when it is free, expired or ours; true when we hold it afterwards.
    async fn try_acquire_or_renew(&self) -> Result<bool, kube::Error> {
        let now = Timestamp::now();
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.spec(now, now, 0)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(err) => Err(err),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let ours = spec.holder_identity.as_deref() == Some(self.identity.as_str());
        if !ours && !expired(&spec, now) {
            return Ok(false);
        }
        let acquired = if ours {
            spec.acquire_time.map_or(now, |t| t.0)
        } else {
            now
        };
        let transitions = spec.lease_transitions.unwrap_or(0) + i32::from(!ours);
        lease.spec = Some(self.spec(acquired, now, transitions));
        // The resourceVersion read above makes this a compare-and-swap.
        match self.api.replace(&self.name, &PostParams::default(), &lease).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// Gives the Lease up on shutdown, so another replica takes over at once.
    async fn release(&self) {
        let Ok(Some(mut lease)) = self.api.get_opt(&self.name).await else {
            return;
        };
        let Some(spec) = lease.spec.as_mut() else {
            return;
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.renew_time = None;
        if let Err(err) = self.api.replace(&self.name, &PostParams::default(), &lease).await {
            tracing::warn!(error = %err, "cannot release the leader Lease");
        } else {
            tracing::info!(lease = %self.name, "leadership released");
        }
    }

    fn spec(&self, acquired: Timestamp, renewed: Timestamp, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: i32::try_from(LEASE_DURATION.as_secs()).ok(),
            acquire_time: Some(MicroTime(acquired)),
            renew_time: Some(MicroTime(renewed)),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }
}

/// The Lease held, renewed in the background.
pub struct Leadership {
    stop: CancellationToken,
    lost: CancellationToken,
    holder: JoinHandle<()>,
    stopper: JoinHandle<()>,
}

impl Leadership {
    /// Cancelled on shutdown or when the Lease is lost: what the controllers stop on.
    pub fn stop(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Once the controllers stopped: waits for the Lease to be released on shutdown; an error
    /// when it was lost (the process should exit, as another replica may lead now).
    pub async fn finish(self) -> anyhow::Result<()> {
        self.stopper.abort();
        let _ = self.holder.await;
        anyhow::ensure!(
            !self.lost.is_cancelled(),
            "leadership lost; exiting so another replica can lead"
        );
        Ok(())
    }
}

/// True when nobody holds the Lease or its holder has not renewed it for its duration.
fn expired(spec: &LeaseSpec, now: Timestamp) -> bool {
    if spec.holder_identity.as_deref().unwrap_or_default().is_empty() {
        return true;
    }
    let Some(renewed) = &spec.renew_time else {
        return true;
    };
    let duration = SignedDuration::from_secs(i64::from(spec.lease_duration_seconds.unwrap_or(0)));
    renewed.0 + duration < now
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(holder: Option<&str>, renewed_seconds_ago: i64, duration: i32) -> (LeaseSpec, Timestamp) {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let spec = LeaseSpec {
            holder_identity: holder.map(str::to_owned),
            renew_time: Some(MicroTime(now - SignedDuration::from_secs(renewed_seconds_ago))),
            lease_duration_seconds: Some(duration),
            ..LeaseSpec::default()
        };
        (spec, now)
    }

    #[test]
    fn a_lease_is_free_when_unheld_or_not_renewed_for_its_duration() {
        let (held, now) = spec(Some("pod-a"), 5, 15);
        assert!(!expired(&held, now));
        let (stale, now) = spec(Some("pod-a"), 16, 15);
        assert!(expired(&stale, now));
        let (released, now) = spec(None, 1, 15);
        assert!(expired(&released, now));
    }
}
