//! The serving certificate: rustls configuration (HTTP/2 and HTTP/1.1 by ALPN) whose certificate
//! is swapped atomically when the files in the certificate directory change.
//!
//! Kubernetes mounts a Secret as `tls.crt -> ..data/tls.crt` and rotates it by re-pointing the
//! `..data` symlink, which inode watches on the files miss. So the directory is polled: the
//! identity (inode, size, mtime) of the files the names *resolve* to is compared every few
//! seconds, and a change reloads both. A pair that does not parse, or whose key does not match the
//! certificate (a writer caught halfway), keeps the previous certificate in service.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;
use tokio_util::sync::CancellationToken;

use crate::metrics::{Metrics, ReloadResult};

/// File name of the serving certificate chain (PEM) in the certificate directory.
pub const CERT_FILE: &str = "tls.crt";
/// File name of the private key (PEM, PKCS#8, PKCS#1 or SEC1) in the certificate directory.
pub const KEY_FILE: &str = "tls.key";

/// Why a certificate could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The certificate file holds no PEM certificate.
    #[error("{0}: no PEM certificate")]
    NoCertificate(PathBuf),
    /// The key file holds no usable PEM private key.
    #[error("{path}: {reason}")]
    Key {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// rustls refused the pair (unsupported key, key not matching the certificate).
    #[error("certificate and key in {dir}: {source}")]
    Rustls {
        /// The certificate directory.
        dir: PathBuf,
        /// The rustls error.
        source: rustls::Error,
    },
}

/// Device, inode, size and modification time of one file.
type FileIdentity = (u64, u64, u64, Option<SystemTime>);

/// What identifies the content of the files without reading them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint(Vec<Option<FileIdentity>>);

impl Fingerprint {
    fn of(paths: &[PathBuf]) -> Self {
        Self(
            paths
                .iter()
                .map(|path| {
                    // `metadata` follows symlinks: a swapped `..data` link yields the new file.
                    let meta = std::fs::metadata(path).ok()?;
                    Some((inode(&meta).0, inode(&meta).1, meta.len(), meta.modified().ok()))
                })
                .collect(),
        )
    }
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn inode(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// The certificate in service, reloaded from a directory; a rustls [`ResolvesServerCert`] that
/// every handshake asks, so a swap takes effect on the next connection without a restart.
pub struct ReloadingCert {
    dir: PathBuf,
    provider: Arc<CryptoProvider>,
    current: ArcSwap<CertifiedKey>,
    seen: Mutex<Fingerprint>,
    /// The served certificate's validity period, in Unix seconds.
    validity: Mutex<Option<Validity>>,
    /// Whether the served certificate was valid when last checked (to log changes once).
    was_valid: Mutex<Option<bool>>,
    metrics: Option<Metrics>,
}

/// A certificate's notBefore and notAfter, in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    /// notBefore.
    pub not_before: i64,
    /// notAfter.
    pub not_after: i64,
}

impl fmt::Debug for ReloadingCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReloadingCert")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl ReloadingCert {
    /// Loads `tls.crt` and `tls.key` from `dir`; failing here fails start-up.
    pub fn load(dir: &Path, metrics: Option<Metrics>) -> Result<Arc<Self>, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let seen = Fingerprint::of(&files(dir));
        let (key, validity) = load_pair(dir, &provider)?;
        if let Some(metrics) = &metrics {
            metrics.record_certificate(ReloadResult::Success, validity.map(|v| v.not_after));
        }
        let cert = Arc::new(Self {
            dir: dir.to_owned(),
            provider,
            current: ArcSwap::from_pointee(key),
            seen: Mutex::new(seen),
            validity: Mutex::new(validity),
            was_valid: Mutex::new(None),
            metrics,
        });
        cert.check_validity(crate::clock::now_unix());
        Ok(cert)
    }

    /// Logs at ERROR, once per change, when the served certificate is expired or not yet valid
    /// at `now` (Unix seconds), and exports whether it is valid; returns whether it is.
    pub fn check_validity(&self, now: i64) -> bool {
        let validity = self.validity.lock().ok().and_then(|v| *v);
        let valid = validity.is_none_or(|v| v.not_before <= now && now <= v.not_after);
        if let Some(metrics) = &self.metrics {
            metrics.set_certificate_valid(valid);
        }
        let changed = self
            .was_valid
            .lock()
            .map(|mut was| was.replace(valid) != Some(valid))
            .unwrap_or(false);
        if changed && !valid {
            if let Some(v) = validity {
                let state = if now < v.not_before {
                    "is not valid yet"
                } else {
                    "has expired"
                };
                tracing::error!(
                    dir = %self.dir.display(),
                    not_before = v.not_before,
                    not_after = v.not_after,
                    "the serving certificate {state}: the API server will refuse every webhook call until it is renewed"
                );
            }
        } else if changed && validity.is_some() {
            tracing::info!(dir = %self.dir.display(), "the serving certificate is within its validity period");
        }
        valid
    }

    /// The certificate chain in service now (leaf first).
    pub fn current_chain(&self) -> Vec<CertificateDer<'static>> {
        self.current.load().cert.clone()
    }

    /// Reloads the pair if the files changed since last looked at. Returns true when a new
    /// certificate is in service; a pair that fails to load is logged and the old one kept.
    pub fn reload_if_changed(&self) -> bool {
        let now = Fingerprint::of(&files(&self.dir));
        {
            let Ok(mut seen) = self.seen.lock() else {
                return false;
            };
            if *seen == now {
                return false;
            }
            // Remember even a failing state: a half-written pair changes again when finished.
            *seen = now;
        }
        match load_pair(&self.dir, &self.provider) {
            Ok((key, validity)) => {
                self.current.store(Arc::new(key));
                if let Ok(mut served) = self.validity.lock() {
                    *served = validity;
                }
                self.record(ReloadResult::Success, validity.map(|v| v.not_after));
                tracing::info!(dir = %self.dir.display(), "serving certificate reloaded");
                true
            }
            Err(err) => {
                self.record(ReloadResult::Failure, None);
                tracing::warn!(error = %err, "new serving certificate not loaded; keeping the previous one");
                false
            }
        }
    }

    fn record(&self, result: ReloadResult, not_after: Option<i64>) {
        if let Some(metrics) = &self.metrics {
            metrics.record_certificate(result, not_after);
        }
    }

    /// A rustls server configuration serving this certificate, offering HTTP/2 and HTTP/1.1.
    pub fn server_config(self: &Arc<Self>) -> Result<Arc<ServerConfig>, TlsError> {
        let mut config = ServerConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|source| TlsError::Rustls {
                dir: self.dir.clone(),
                source,
            })?
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }

    /// Polls the directory every `period` until `shutdown` is cancelled.
    pub fn watch(
        self: Arc<Self>,
        period: Duration,
        shutdown: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(period);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    _ = ticks.tick() => {
                        self.reload_if_changed();
                        self.check_validity(crate::clock::now_unix());
                    }
                }
            }
        })
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.load_full())
    }
}

fn files(dir: &Path) -> [PathBuf; 2] {
    [dir.join(CERT_FILE), dir.join(KEY_FILE)]
}

/// Reads and checks the pair in `dir`; also returns the leaf's validity period.
fn load_pair(dir: &Path, provider: &CryptoProvider) -> Result<(CertifiedKey, Option<Validity>), TlsError> {
    let [cert_path, key_path] = files(dir);
    let read = |path: &PathBuf| {
        std::fs::read(path).map_err(|source| TlsError::Read {
            path: path.clone(),
            source,
        })
    };
    let cert_pem = read(&cert_path)?;
    let key_pem = read(&key_path)?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .filter_map(Result::ok)
        .collect();
    let Some(leaf) = chain.first() else {
        return Err(TlsError::NoCertificate(cert_path));
    };
    let validity = validity(leaf);
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|err| TlsError::Key {
        path: key_path,
        reason: err.to_string(),
    })?;
    let certified = CertifiedKey::from_der(chain, key, provider).map_err(|source| TlsError::Rustls {
        dir: dir.to_owned(),
        source,
    })?;
    Ok((certified, validity))
}

/// The certificate's validity period in Unix seconds.
pub fn validity(cert: &CertificateDer<'_>) -> Option<Validity> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).ok()?;
    Some(Validity {
        not_before: parsed.validity().not_before.timestamp(),
        not_after: parsed.validity().not_after.timestamp(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_is_checked_against_the_clock_given() {
        // A directory of this test's own: created only if absent, never shared with another run.
        let nanos = std::time::UNIX_EPOCH.elapsed().unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!(
            "capi-topology-tls-validity-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir(&dir).unwrap();
        let certs = crate::server::dev_certs::generate(&["localhost".to_owned()], &[], 1).unwrap();
        std::fs::write(dir.join(CERT_FILE), &certs.cert_pem).unwrap();
        std::fs::write(dir.join(KEY_FILE), &certs.key_pem).unwrap();
        let cert = ReloadingCert::load(&dir, None).unwrap();
        let validity = cert.validity.lock().unwrap().expect("a parsed validity");
        assert!(cert.check_validity(validity.not_before + 60));
        assert!(!cert.check_validity(validity.not_after + 1));
        assert!(!cert.check_validity(validity.not_before - 3_600));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
