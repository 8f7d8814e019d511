//! Kubernetes events (events.k8s.io/v1) about the objects the controllers reconcile, with
//! repeats folded into a series as kube's `Recorder` does, at a bounded cost per event.
//!
//! kube's `Recorder` sweeps its whole cache of recent events on every publish, under a write
//! lock: with the 15 events a new Cluster's topology records, creating 2,000 Clusters made that
//! cache 30,000 events long and the sweeps quadratic. Here the cache is swept at most once per
//! [`SWEEP_EVERY`] and holds at most [`MAX_CACHED`] events (past that it starts afresh: a repeat
//! then opens a new series instead of continuing one).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use kube::runtime::events::{Event, EventType, Reporter};
use kube::{Client, Resource};

/// How long a repeat continues the series of an earlier event.
const SERIES_TTL: Duration = Duration::from_secs(300);
/// How often expired events are dropped from the cache.
const SWEEP_EVERY: Duration = Duration::from_secs(30);
/// Events cached at most.
const MAX_CACHED: usize = 4096;

/// What makes two events the same: what they are about and what they say.
type EventKey = (String, String, String, String, String, String);

/// Publishes events for one controller (the reporter).
pub struct EventRecorder {
    client: Client,
    reporter: Reporter,
    cache: Mutex<Cache>,
}

/// What a repeat needs of the event it continues: its name and how many it counts so far (the
/// whole event as written was ~1 KiB each, 14 MB at 1,000 Clusters).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Recorded {
    name: String,
    count: i32,
}

#[derive(Default)]
struct Cache {
    events: HashMap<EventKey, (Recorded, Instant)>,
    swept: Option<Instant>,
}

impl Cache {
    /// Drops expired events (at most once per [`SWEEP_EVERY`]) and everything once full.
    fn make_room(&mut self, now: Instant) {
        if self.swept.is_none_or(|at| now.duration_since(at) >= SWEEP_EVERY) {
            self.events
                .retain(|_, (_, seen)| now.duration_since(*seen) < SERIES_TTL);
            self.swept = Some(now);
        }
        if self.events.len() >= MAX_CACHED {
            self.events.clear();
        }
    }

    /// The earlier event of this key still in its series, if any.
    fn repeat_of(&self, key: &EventKey, now: Instant) -> Option<Recorded> {
        self.events
            .get(key)
            .filter(|(_, seen)| now.duration_since(*seen) < SERIES_TTL)
            .map(|(event, _)| event.clone())
    }
}

impl EventRecorder {
    /// A recorder writing through `client` as `reporter`.
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Self {
            client,
            reporter,
            cache: Mutex::default(),
        }
    }

    /// Records a `Reconcile` event of `type_` on `object` (of `resource`); a failure to record
    /// is only logged.
    pub async fn reconciled(
        &self,
        (object, resource): (&DynamicObject, &ApiResource),
        type_: EventType,
        reason: &str,
        note: &str,
    ) {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note.to_owned()),
            action: "Reconcile".to_owned(),
            secondary: None,
        };
        if let Err(err) = self.publish(&event, &object.object_ref(resource)).await {
            tracing::debug!(error = %err, "event not recorded");
        }
    }

    /// Records `event` about the object `reference` names: a new event, or the next of a series
    /// when the same was recorded within [`SERIES_TTL`].
    pub async fn publish(&self, event: &Event, reference: &ObjectReference) -> Result<(), kube::Error> {
        let key = key_of(event, reference);
        let now = Instant::now();
        let earlier = {
            let mut cache = self
                .cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            cache.make_room(now);
            cache.repeat_of(&key, now)
        };
        let namespace = reference
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned());
        let events: Api<K8sEvent> = Api::namespaced(self.client.clone(), &namespace);
        let written = match earlier {
            Some(repeat) => {
                // Only the series changes: the patch carries nothing else.
                let count = repeat.count + 1;
                let series = EventSeries {
                    count,
                    last_observed_time: MicroTime(Timestamp::now()),
                };
                let patch = serde_json::json!({ "series": series });
                events
                    .patch(&repeat.name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await?;
                Recorded { count, ..repeat }
            }
            None => {
                let fresh = self.new_event(event, reference);
                events.create(&PostParams::default(), &fresh).await?;
                Recorded {
                    name: fresh.metadata.name.unwrap_or_default(),
                    count: 1,
                }
            }
        };
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .events
            .insert(key, (written, now));
        Ok(())
    }

    fn new_event(&self, event: &Event, reference: &ObjectReference) -> K8sEvent {
        let now = Timestamp::now();
        let instance = self
            .reporter
            .instance
            .clone()
            .unwrap_or_else(|| self.reporter.controller.clone());
        K8sEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(reference.clone()),
            note: event.note.clone(),
            metadata: ObjectMeta {
                namespace: reference.namespace.clone(),
                name: Some(format!(
                    "{}.{:x}",
                    reference.name.as_ref().unwrap_or(&self.reporter.controller),
                    now.as_nanosecond()
                )),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(self.reporter.controller.clone()),
            reporting_instance: Some(instance),
            type_: Some(type_name(&event.type_).to_owned()),
            related: event.secondary.clone(),
            ..K8sEvent::default()
        }
    }
}

fn type_name(type_: &EventType) -> &'static str {
    match type_ {
        EventType::Normal => "Normal",
        EventType::Warning => "Warning",
    }
}

fn key_of(event: &Event, reference: &ObjectReference) -> EventKey {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    (
        type_name(&event.type_).to_owned(),
        event.reason.clone(),
        event.note.clone().unwrap_or_default(),
        text(&reference.namespace),
        text(&reference.name),
        text(&reference.uid),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cached(cache: &mut Cache, name: &str, seen: Instant) {
        let key = (
            "Normal".to_owned(),
            "TopologyCreate".to_owned(),
            String::new(),
            "ns".to_owned(),
            name.to_owned(),
            String::new(),
        );
        let recorded = Recorded {
            name: name.to_owned(),
            count: 1,
        };
        cache.events.insert(key, (recorded, seen));
    }

    #[test]
    fn expired_events_go_at_the_next_sweep_only() {
        let start = Instant::now();
        let ten = Duration::from_secs(10);
        let mut cache = Cache::default();
        cached(&mut cache, "old", start);
        let key = cache.events.keys().next().cloned().unwrap();
        cache.make_room(start + SERIES_TTL - ten);
        assert_eq!(cache.events.len(), 1, "not expired yet");
        assert!(cache.repeat_of(&key, start + SERIES_TTL - ten).is_some());
        // Expired, but swept 11 s ago: nothing is looked at; a repeat opens a new series.
        cache.make_room(start + SERIES_TTL + Duration::from_secs(1));
        assert_eq!(cache.events.len(), 1);
        assert!(cache
            .repeat_of(&key, start + SERIES_TTL + Duration::from_secs(1))
            .is_none());
        cache.make_room(start + SERIES_TTL - ten + SWEEP_EVERY);
        assert!(cache.events.is_empty(), "the next sweep drops it");
    }

    #[test]
    fn the_cache_never_holds_more_than_its_cap() {
        let now = Instant::now();
        let mut cache = Cache::default();
        for i in 0..MAX_CACHED {
            cached(&mut cache, &format!("c{i}"), now);
        }
        cache.make_room(now);
        assert!(cache.events.is_empty());
    }
}
