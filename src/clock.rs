//! The wall clock, read only by the adapters (CLI, controllers) and handed to the engine as a value.

/// The current time as the API server writes timestamps (`2026-01-02T03:04:05Z`).
pub fn now_rfc3339() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The current time in Unix seconds.
pub fn now_unix() -> i64 {
    k8s_openapi::jiff::Timestamp::now().as_second()
}
