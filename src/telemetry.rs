//! Logging: the tracing subscriber, as text for people or JSON for log pipelines, filtered by
//! `RUST_LOG` or a level given on the command line.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// The filter directive (`--log-level` or `RUST_LOG`) does not parse.
    #[error("invalid log filter: {0}")]
    Filter(#[from] tracing_subscriber::filter::ParseError),
    /// A global subscriber is already installed.
    #[error("cannot install the log subscriber: {0}")]
    Install(String),
}

/// Installs the global subscriber writing to stderr. `RUST_LOG`, when set, wins over `level`
/// (`info`, `debug`, or any `EnvFilter` directive). Each admission review logs one line with
/// every field (uid, kind, namespace/name, operation, verdict, code, latency); lines logged
/// while a review runs carry its span and the fields recorded so far.
pub fn init(format: LogFormat, level: &str) -> Result<(), TelemetryError> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.trim().is_empty() => EnvFilter::try_new(directives)?,
        _ => EnvFilter::try_new(level)?,
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
    installed.map_err(|err| TelemetryError::Install(err.to_string()))
}
