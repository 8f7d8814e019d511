//! Every bound the server keeps on what clients may cost it, in one place, with the defaults
//! documented in docs/deployment.md ("Limits") and a `serve` flag for each.

use std::time::Duration;

/// The server's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// Largest request body read, in bytes: controller-runtime's 7 MiB, room for an UPDATE's
    /// object and oldObject at the API server's 3 MiB each. A larger one is answered 413 (the
    /// rest of its upload is not read).
    pub max_body_bytes: usize,
    /// Reviews evaluated at once; only these read and hold a body and its decoded objects, so
    /// they bound the server's memory (docs/deployment.md, "Limits", has the worst case).
    pub max_in_flight: usize,
    /// How long an admission review waits for one of those places before it is answered 429.
    pub queue_wait: Duration,
    /// How long a ConversionReview waits for one of those places before it is answered 429.
    /// Longer than an admission review's: the API server gives a conversion call its fixed
    /// 30 s, does not retry it, and fails the client's whole read or write when it fails, while
    /// a waiting review holds only its connection (bodies are read once a place is taken).
    pub conversion_queue_wait: Duration,
    /// How long a review's evaluation may run before it is answered with an error (kept under
    /// the API server's webhook timeout, so the operator reads our reason, not a timeout).
    pub deadline: Duration,
    /// Connections open at once on each listener; more are closed at once.
    pub max_connections: usize,
    /// Largest request header list, in bytes counted as HTTP/2 does (name, value and 32 per
    /// field); a larger one is answered 431 with the reason.
    pub max_header_bytes: usize,
    /// How long a client may take to send a request's headers.
    pub header_read_timeout: Duration,
    /// How long a connection may stay without reading a byte before it is closed.
    pub idle_timeout: Duration,
    /// How long a TLS handshake may take.
    pub handshake_timeout: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            max_body_bytes: 7 * 1024 * 1024,
            max_in_flight: 4,
            queue_wait: Duration::from_secs(2),
            conversion_queue_wait: Duration::from_secs(15),
            deadline: Duration::from_secs(9),
            max_connections: 512,
            max_header_bytes: 16 * 1024,
            header_read_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(60),
            handshake_timeout: Duration::from_secs(5),
        }
    }
}
