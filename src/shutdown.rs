//! One shutdown signal for every task: SIGTERM or SIGINT cancels a [`CancellationToken`] that the
//! servers and watchers all hold, so they stop accepting work and finish what is in flight.

use tokio_util::sync::CancellationToken;

/// A token cancelled on the first SIGTERM or SIGINT. Call once, inside the tokio runtime.
pub fn on_signal() -> std::io::Result<CancellationToken> {
    let token = CancellationToken::new();
    #[cfg(unix)]
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let cancel = token.clone();
    tokio::spawn(async move {
        #[cfg(unix)]
        let signal = tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = tokio::signal::ctrl_c() => "SIGINT",
            () = cancel.cancelled() => return,
        };
        #[cfg(not(unix))]
        let signal = tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            () = cancel.cancelled() => return,
        };
        tracing::info!(
            signal,
            "shutting down: no new connections, finishing requests in flight"
        );
        cancel.cancel();
    });
    Ok(token)
}
