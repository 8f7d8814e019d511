//! The label sets and label values of the server's metric families: each value a bounded enum
//! or a `'static` name, so no label can grow without bound.

use std::fmt::Write as _;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};

/// A webhook endpoint as a label value: its URL path. Only `'static` paths, the server's fixed
/// routes, are accepted, so the label stays bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WebhookLabel(pub &'static str);

impl EncodeLabelValue for WebhookLabel {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        encoder.write_str(self.0)
    }
}

/// What a webhook answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The object may pass (possibly with a patch).
    Allowed,
    /// The rules refused the object (422).
    Denied,
    /// The request could not be read or answered (400, timeout, unknown path).
    Error,
}

impl Verdict {
    /// The verdict as logged.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Denied => "denied",
            Self::Error => "error",
        }
    }
}

impl EncodeLabelValue for Verdict {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        encoder.write_str(self.as_str())
    }
}

/// Labels of the request counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct RequestLabels {
    /// The endpoint called.
    pub webhook: WebhookLabel,
    /// What it answered.
    pub verdict: Verdict,
}

/// Labels of the latency histogram.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct EndpointLabels {
    /// The endpoint called.
    pub webhook: WebhookLabel,
}

/// Labels of the cache size gauge: the watched kind, one of a set fixed at start-up.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct CacheLabels {
    /// `Kind.group` of the watched objects.
    pub resource: String,
}

/// Labels of the Runtime Extension metrics: the handler's registered name
/// (`<handler>.<ExtensionConfig>`), one of the few the cluster's ExtensionConfigs register.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct HandlerLabels {
    /// The handler called.
    pub handler: String,
}

/// A `'static` name as a label value (a lifecycle hook's from the catalog, a controller's): no
/// other name is accepted, so the label stays bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NameLabel(pub &'static str);

impl EncodeLabelValue for NameLabel {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        encoder.write_str(self.0)
    }
}

/// What a lifecycle hook call came to, for every handler of the hook together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookCallOutcome {
    /// The handlers let the Cluster proceed (or none serves it).
    Proceed,
    /// A handler asked to hold (a non-zero `retryAfterSeconds` of a blocking hook).
    Retry,
    /// A kept blocking answer stood: no handler was called.
    Cached,
    /// A call failed, or a handler answered `Failure`.
    Failed,
}

impl EncodeLabelValue for HookCallOutcome {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        encoder.write_str(match self {
            Self::Proceed => "proceed",
            Self::Retry => "retry",
            Self::Cached => "cached",
            Self::Failed => "failed",
        })
    }
}

/// Labels of the lifecycle hook call counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct HookCallLabels {
    /// The hook called.
    pub hook: NameLabel,
    /// What the call came to.
    pub outcome: HookCallOutcome,
}

/// Labels of the reconcile counter: the controller that reconciled, by its `'static` name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ControllerLabels {
    /// The controller (`topology`, `cluster-infrastructure`...).
    pub controller: NameLabel,
}

/// Labels of the lifecycle hook latency histogram.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct HookLabels {
    /// The hook called.
    pub hook: NameLabel,
}

/// Outcome of a certificate reload attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReloadResult {
    /// The new certificate is served.
    Success,
    /// The new files did not parse; the previous certificate is still served.
    Failure,
}

impl EncodeLabelValue for ReloadResult {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        encoder.write_str(match self {
            Self::Success => "success",
            Self::Failure => "failure",
        })
    }
}

/// Why the server refused or abandoned a request before the rules answered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rejection {
    /// The body was over the limit (413).
    BodyTooLarge,
    /// Every in-flight place stayed taken for the queue wait (429).
    Overloaded,
    /// The evaluation ran past the deadline.
    DeadlineExceeded,
    /// The evaluation panicked (a bug; the process lives on).
    Panicked,
    /// A connection arrived while every connection slot was taken.
    ConnectionLimit,
    /// The request's header list was over the limit (431).
    HeadersTooLarge,
}

impl Rejection {
    /// The reason as a label value and in logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BodyTooLarge => "body_too_large",
            Self::Overloaded => "overloaded",
            Self::DeadlineExceeded => "deadline_exceeded",
            Self::Panicked => "panicked",
            Self::ConnectionLimit => "connection_limit",
            Self::HeadersTooLarge => "headers_too_large",
        }
    }
}

impl EncodeLabelValue for Rejection {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        encoder.write_str(self.as_str())
    }
}

/// Labels of the rejection counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct RejectionLabels {
    /// Why.
    pub reason: Rejection,
}

/// Labels of the certificate reload counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ReloadLabels {
    /// Whether the reload took effect.
    pub result: ReloadResult,
}
