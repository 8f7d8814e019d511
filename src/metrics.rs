//! Prometheus metrics of the server: one [`Registry`] built at start-up and passed around, the
//! typed metric families registered in it. Every label is a bounded enum.

use std::sync::atomic::AtomicU64;
use std::time::Instant;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::metrics_rollout::RolloutMetrics;

mod labels;

pub use labels::{
    CacheLabels, ControllerLabels, EndpointLabels, HandlerLabels, HookCallLabels, HookCallOutcome,
    HookLabels, NameLabel, Rejection, RejectionLabels, ReloadLabels, ReloadResult, RequestLabels, Verdict,
    WebhookLabel,
};

/// The prefix of every metric name.
pub const PREFIX: &str = "capi_topology";

/// Every metric family the server updates.
#[derive(Debug, Clone)]
pub struct Metrics {
    requests: Family<RequestLabels, Counter>,
    latency: Family<EndpointLabels, Histogram>,
    cache_objects: Family<CacheLabels, Gauge>,
    certificate_expiry: Gauge<f64, AtomicU64>,
    certificate_reloads: Family<ReloadLabels, Counter>,
    certificate_valid: Gauge,
    rejections: Family<RejectionLabels, Counter>,
    in_flight: Gauge,
    extension_calls: Family<HandlerLabels, Counter>,
    extension_errors: Family<HandlerLabels, Counter>,
    extension_latency: Family<HandlerLabels, Histogram>,
    extension_cache_hits: Family<HandlerLabels, Counter>,
    hook_calls: Family<HookCallLabels, Counter>,
    hook_latency: Family<HookLabels, Histogram>,
    reconciles: Family<ControllerLabels, Counter>,
    rollouts: RolloutMetrics,
}

impl Metrics {
    /// Creates the metric families and registers them in `registry` under [`PREFIX`].
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            requests: Family::default(),
            // 100 µs .. ~13 s: admission takes microseconds to milliseconds; the upper buckets
            // reach past the API server's 10 s webhook timeout, so stalls show where they end.
            latency: Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.0001, 2.0, 18))),
            cache_objects: Family::default(),
            certificate_expiry: Gauge::default(),
            certificate_reloads: Family::default(),
            certificate_valid: Gauge::default(),
            rejections: Family::default(),
            in_flight: Gauge::default(),
            extension_calls: Family::default(),
            extension_errors: Family::default(),
            // 250 µs .. ~33 s: a loopback call takes a millisecond or less; the upper buckets
            // reach past the 30 s a handler's timeout may be.
            extension_latency: Family::new_with_constructor(|| {
                Histogram::new(exponential_buckets(0.00025, 2.0, 18))
            }),
            extension_cache_hits: Family::default(),
            hook_calls: Family::default(),
            // As the handler calls': a hook call is one call per handler of the hook.
            hook_latency: Family::new_with_constructor(|| {
                Histogram::new(exponential_buckets(0.00025, 2.0, 18))
            }),
            reconciles: Family::default(),
            rollouts: RolloutMetrics::default(),
        };
        let registry = registry.sub_registry_with_prefix(PREFIX);
        let metrics = Self {
            rollouts: RolloutMetrics::register(registry),
            ..metrics
        };
        registry.register(
            "webhook_requests",
            "Admission reviews answered, by webhook path and verdict",
            metrics.requests.clone(),
        );
        registry.register(
            "webhook_request_duration_seconds",
            "Time to answer an admission review, body read to response",
            metrics.latency.clone(),
        );
        registry.register(
            "cache_objects",
            "Objects held in the watch caches, by resource",
            metrics.cache_objects.clone(),
        );
        registry.register(
            "certificate_expiration_timestamp_seconds",
            "Unix time at which the served certificate expires",
            metrics.certificate_expiry.clone(),
        );
        registry.register(
            "certificate_valid",
            "1 while the served certificate is within its validity period, 0 when it is expired or not yet valid",
            metrics.certificate_valid.clone(),
        );
        registry.register(
            "webhook_in_flight",
            "Admission reviews being evaluated now (at most --max-in-flight)",
            metrics.in_flight.clone(),
        );
        registry.register(
            "rejections",
            "Requests refused or abandoned before the rules answered, by reason",
            metrics.rejections.clone(),
        );
        registry.register(
            "certificate_reloads",
            "Attempts to load a changed serving certificate, by result",
            metrics.certificate_reloads.clone(),
        );
        registry.register(
            "extension_calls",
            "Runtime Extension handler calls sent over the network, by handler",
            metrics.extension_calls.clone(),
        );
        registry.register(
            "extension_errors",
            "Runtime Extension handler calls that failed or got a Failure answer, by handler",
            metrics.extension_errors.clone(),
        );
        registry.register(
            "extension_call_duration_seconds",
            "Time of a Runtime Extension handler call, request sent to answer read",
            metrics.extension_latency.clone(),
        );
        registry.register(
            "extension_cache_hits",
            "Runtime Extension handler calls answered from the response cache, by handler",
            metrics.extension_cache_hits.clone(),
        );
        registry.register(
            "lifecycle_hook_calls",
            "Lifecycle hook calls for a Cluster, every handler of the hook together, by hook and outcome",
            metrics.hook_calls.clone(),
        );
        registry.register(
            "lifecycle_hook_call_duration_seconds",
            "Time of a lifecycle hook call that reached its handlers, first request sent to last answer read",
            metrics.hook_latency.clone(),
        );
        registry.register(
            "reconciles",
            "Reconciles run, by controller (controller-runtime's controller_runtime_reconcile_total)",
            metrics.reconciles.clone(),
        );
        metrics
    }

    /// Counts one reconcile by `controller`.
    pub fn record_reconcile(&self, controller: &'static str) {
        self.reconciles
            .get_or_create(&ControllerLabels {
                controller: NameLabel(controller),
            })
            .inc();
    }

    /// The metrics of ClusterClass rollouts in waves.
    pub fn rollouts(&self) -> &RolloutMetrics {
        &self.rollouts
    }

    /// Records one call of the lifecycle hook `hook` for a Cluster and what it came to; `elapsed`
    /// when its handlers were called (not for a kept answer).
    pub fn record_lifecycle_hook(
        &self,
        hook: &'static str,
        outcome: HookCallOutcome,
        elapsed: Option<std::time::Duration>,
    ) {
        let hook = NameLabel(hook);
        self.hook_calls
            .get_or_create(&HookCallLabels { hook, outcome })
            .inc();
        if let Some(elapsed) = elapsed {
            self.hook_latency
                .get_or_create(&HookLabels { hook })
                .observe(elapsed.as_secs_f64());
        }
    }

    /// Records one call to the Runtime Extension handler `handler` that took `elapsed`, and
    /// whether it brought a successful answer.
    pub fn record_extension_call(&self, handler: &str, elapsed: std::time::Duration, succeeded: bool) {
        let labels = HandlerLabels {
            handler: handler.to_owned(),
        };
        self.extension_calls.get_or_create(&labels).inc();
        if !succeeded {
            self.extension_errors.get_or_create(&labels).inc();
        }
        self.extension_latency
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Records one call to the handler `handler` answered from the response cache.
    pub fn record_extension_cache_hit(&self, handler: &str) {
        self.extension_cache_hits
            .get_or_create(&HandlerLabels {
                handler: handler.to_owned(),
            })
            .inc();
    }

    /// Starts timing one review on the endpoint at `path`; the review is counted when [`ReviewMeasurer::finish`]
    /// is called or, as an error, when the measurer is dropped unfinished (a timeout, a panic).
    pub fn measure_review(&self, path: &'static str) -> ReviewMeasurer<'_> {
        ReviewMeasurer {
            metrics: self,
            webhook: WebhookLabel(path),
            start: Instant::now(),
            verdict: None,
        }
    }

    /// Counts one request refused or abandoned for `reason`.
    pub fn reject(&self, reason: Rejection) {
        self.rejections.get_or_create(&RejectionLabels { reason }).inc();
    }

    /// Counts one review as being evaluated until the returned guard is dropped.
    pub fn evaluating(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(self.in_flight.clone())
    }

    /// Records whether the served certificate is valid now.
    pub fn set_certificate_valid(&self, valid: bool) {
        self.certificate_valid.set(i64::from(valid));
    }

    /// Sets the number of cached objects of `resource` (`Kind.group`).
    pub fn set_cache_objects(&self, resource: &str, count: usize) {
        let labels = CacheLabels {
            resource: resource.to_owned(),
        };
        self.cache_objects
            .get_or_create(&labels)
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    /// Records a certificate reload attempt; on success, `not_after` is the new certificate's
    /// expiry in Unix seconds.
    pub fn record_certificate(&self, result: ReloadResult, not_after: Option<i64>) {
        self.certificate_reloads
            .get_or_create(&ReloadLabels { result })
            .inc();
        if let Some(not_after) = not_after {
            // Unix seconds fit an f64 exactly for the next hundreds of millions of years.
            #[allow(clippy::cast_precision_loss)]
            self.certificate_expiry.set(not_after as f64);
        }
    }
}

/// One review being evaluated; the in-flight gauge goes down when it is dropped.
#[derive(Debug)]
pub struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Times one review; records latency and verdict once, when dropped.
#[derive(Debug)]
pub struct ReviewMeasurer<'a> {
    metrics: &'a Metrics,
    webhook: WebhookLabel,
    start: Instant,
    verdict: Option<Verdict>,
}

impl ReviewMeasurer<'_> {
    /// Sets the verdict and returns the time elapsed so far.
    pub fn finish(&mut self, verdict: Verdict) -> std::time::Duration {
        self.verdict = Some(verdict);
        self.start.elapsed()
    }
}

impl Drop for ReviewMeasurer<'_> {
    fn drop(&mut self) {
        let labels = RequestLabels {
            webhook: self.webhook,
            verdict: self.verdict.unwrap_or(Verdict::Error),
        };
        self.metrics.requests.get_or_create(&labels).inc();
        self.metrics
            .latency
            .get_or_create(&EndpointLabels {
                webhook: self.webhook,
            })
            .observe(self.start.elapsed().as_secs_f64());
    }
}

/// The registry in Prometheus' text exposition format.
pub fn encode(registry: &Registry) -> Result<String, std::fmt::Error> {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry)?;
    Ok(text)
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
