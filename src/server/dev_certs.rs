//! Development certificates: a CA and a serving certificate signed by it, for local runs, the
//! tests and the e2e suite (`capi-topology certs`). Production uses cert-manager.

use std::net::IpAddr;

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose, SanType,
};

use crate::api::names::subdomain_problems;

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
