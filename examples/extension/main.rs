//! A topology mutation Runtime Extension in Rust, on capi-topology's hook types: the same
//! extension as the Go one the tests run (`tests/e2e/extension`, built with Cluster API's
//! Runtime SDK). See README.md beside this file to build, run and register it.
//!
//! `cargo run --example extension -- --cert-dir DIR [--host 0.0.0.0] [--port 9443]`

mod handlers;
mod server;

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;

/// Serves GeneratePatches, ValidateTopology and DiscoverVariables over HTTPS.
#[derive(Debug, Parser)]
struct Args {
    /// Directory holding tls.crt and tls.key.
    #[arg(long)]
    cert_dir: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on (the Runtime SDK's default).
    #[arg(long, default_value_t = 9443)]
    port: u16,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = Args::parse();
    let read = |file: &str| {
        let path = args.cert_dir.join(file);
        std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))
    };
    let tls = server::tls_config(&read("tls.crt")?, &read("tls.key")?).map_err(anyhow::Error::msg)?;
    let address = format!("{}:{}", args.host, args.port);
    let listener = TcpListener::bind(&address).with_context(|| format!("cannot listen on {address}"))?;
    tracing::info!(%address, "serving Runtime Extension hooks");
    tokio::select! {
        served = server::serve(listener, tls, Arc::new(AtomicUsize::new(0))) => served?,
        _ = tokio::signal::ctrl_c() => tracing::info!("stopping"),
    }
    Ok(())
}
