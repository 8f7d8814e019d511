//! `capi-topology certs`: a development CA and a serving certificate signed by it, for running the
//! webhook server locally and in the end-to-end suite. Production uses cert-manager.

use std::fs;
use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose, SanType,
};

use crate::admission::cluster::metadata::subdomain_problems;

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
    /// Validity of both certificates, in days.
    #[arg(long, value_name = "DAYS", default_value_t = 365)]
    pub days: u32,
}

/// A CA certificate and a serving certificate and key signed by it, PEM-encoded.
#[derive(Debug)]
pub struct DevCertificates {
    /// The CA certificate: the webhook configurations' `caBundle`.
    pub ca_pem: String,
    /// The serving certificate.
    pub cert_pem: String,
    /// The serving certificate's private key (PKCS#8).
    pub key_pem: String,
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
    eprintln!(
        "wrote ca.crt, tls.crt and tls.key to {} (valid {} days)",
        args.out.display(),
        args.days
    );
    Ok(ExitCode::SUCCESS)
}

/// Generates a CA and a serving certificate for `dns` names and `ips`, valid for `days`.
pub fn generate(dns: &[String], ips: &[IpAddr], days: u32) -> Result<DevCertificates> {
    let now = time::OffsetDateTime::now_utc();
    let not_after = now + time::Duration::days(i64::from(days));

    let mut ca_params = CertificateParams::default();
    ca_params.distinguished_name = name("capi-topology development CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca_params.not_before = now;
    ca_params.not_after = not_after;
    let ca_key = KeyPair::generate().context("cannot generate the CA key")?;
    let ca_cert = ca_params
        .self_signed(&ca_key)
        .context("cannot sign the CA certificate")?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut params = CertificateParams::default();
    params.distinguished_name = name(dns.first().map_or("capi-topology", String::as_str));
    params.subject_alt_names = dns
        .iter()
        .map(|name| {
            let host = name.strip_prefix("*.").unwrap_or(name);
            let problems = subdomain_problems(host);
            anyhow::ensure!(problems.is_empty(), "--dns {name:?}: {}", problems.join("; "));
            Ok(SanType::DnsName(name.clone().try_into()?))
        })
        .chain(ips.iter().map(|ip| Ok(SanType::IpAddress(*ip))))
        .collect::<Result<_>>()?;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.not_before = now;
    params.not_after = not_after;
    let key = KeyPair::generate().context("cannot generate the serving key")?;
    let cert = params
        .signed_by(&key, &issuer)
        .context("cannot sign the serving certificate")?;
    Ok(DevCertificates {
        ca_pem: ca_cert.pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

fn name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serving_certificate_is_signed_by_the_ca_and_names_every_subject() {
        let ips = ["127.0.0.1".parse().unwrap()];
        let certs = generate(&["localhost".to_owned()], &ips, 1).unwrap();
        let (_, ca) = x509_parser::pem::parse_x509_pem(certs.ca_pem.as_bytes()).unwrap();
        let ca = ca.parse_x509().unwrap();
        let (_, serving) = x509_parser::pem::parse_x509_pem(certs.cert_pem.as_bytes()).unwrap();
        let serving = serving.parse_x509().unwrap();
        assert!(ca.is_ca());
        assert_eq!(serving.issuer(), ca.subject());
        serving.verify_signature(Some(ca.public_key())).unwrap();
        let names = serving
            .subject_alternative_name()
            .unwrap()
            .unwrap()
            .value
            .general_names
            .clone();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(certs.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
    }

    #[test]
    fn a_name_that_is_not_a_dns_name_is_refused() {
        let err = generate(&["bad name\u{0}".to_owned()], &[], 1).unwrap_err();
        assert!(format!("{err:#}").contains("--dns"), "{err:#}");
    }
}
