//! `capi-topology certs`: a development CA and a serving certificate signed by it, for running the
//! webhook server locally and in the end-to-end suite. Production uses cert-manager.

use std::fs;
use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use super::terminal::eprint_line;
use crate::server::dev_certs::generate;

/// Arguments of `certs`.
#[derive(Debug, Args)]
pub struct CertsArgs {
    /// Directory to write `ca.crt`, `tls.crt` and `tls.key` into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// DNS names of the serving certificate (e.g. `capi-topology-webhook.capi-topology-system.svc`).
    #[arg(long = "dns", value_name = "NAME")]
    pub dns: Vec<String>,
    /// IP addresses of the serving certificate.
    #[arg(long = "ip", value_name = "IP")]
    pub ips: Vec<IpAddr>,
    /// Validity of both certificates, in days (1 to 3650).
    #[arg(long, value_name = "DAYS", default_value_t = 365, value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub days: u32,
}

/// Writes a fresh CA and serving certificate into `--out`.
pub fn run(args: &CertsArgs) -> Result<ExitCode> {
    anyhow::ensure!(
        !args.dns.is_empty() || !args.ips.is_empty(),
        "give the serving certificate at least one --dns name or --ip"
    );
    let certificates = generate(&args.dns, &args.ips, args.days)?;
    fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    write(&args.out.join("ca.crt"), &certificates.ca_pem, false)?;
    write(&args.out.join("tls.crt"), &certificates.cert_pem, false)?;
    write(&args.out.join("tls.key"), &certificates.key_pem, true)?;
    eprint_line(&format!(
        "wrote ca.crt, tls.crt and tls.key to {} (valid {} days)",
        args.out.display(),
        args.days
    ));
    Ok(ExitCode::SUCCESS)
}

/// Writes `text` to `path` atomically (temporary file, then rename), private keys with mode 0600.
fn write(path: &Path, text: &str, private: bool) -> Result<()> {
    let temporary = path.with_extension("tmp");
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options
        .open(&temporary)
        .with_context(|| format!("cannot write {}", temporary.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", temporary.display()))?;
    fs::rename(&temporary, path).with_context(|| format!("cannot write {}", path.display()))
}
