//! The ExtensionConfig webhooks: defaulting (`namespaceSelector` to `{}`, which selects every
//! namespace; a Service's port to 443) and validation (a DNS-label name, exactly one of `url`
//! and `service`, an `https` URL that parses as Go parses it, a Service's name, namespace, path
//! and port, a selector that parses, and a CA bundle that holds a certificate). Worded as
//! Cluster API's webhook words them; the CRD schema's length limits are checked too, so an
//! offline `check` refuses what the API server would.

mod request_uri;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::Outcome;
use crate::api::names::{dns1035_label_problems, dns1123_label_problems};
use crate::api::runtime::{
    ClientConfig, ExtensionConfig, ServiceReference, DEFAULT_SERVICE_PORT, MAX_CA_BUNDLE, MAX_URL,
};
use crate::api::selector::Selector;
use crate::field::{ErrorType, FieldError, FieldErrors, FieldPath};

/// Mutating webhook: an unset namespace selector selects every namespace, and a Service
/// without a port is reached on 443.
pub fn default(config: &mut ExtensionConfig) {
    let spec = &mut config.spec;
    spec.namespace_selector.get_or_insert_with(LabelSelector::default);
    if let Some(service) = &mut spec.client_config.service {
        service.port.get_or_insert(DEFAULT_SERVICE_PORT);
    }
}

/// Validating webhook, the same for create and update: nothing is immutable.
pub fn validate(config: &ExtensionConfig) -> Outcome {
    let mut errors = FieldErrors::new();
    let problems = dns1123_label_problems(config.name());
    if !problems.is_empty() {
        errors.push(FieldError::invalid(
            &FieldPath::new("metadata").child("name"),
            config.name(),
            format!(
                "ExtensionConfig name should be a valid DNS1123 label name: [{}]",
                problems.join(" ")
            ),
        ));
    }
    let spec = FieldPath::new("spec");
    errors.extend(validate_client_config(
        &config.spec.client_config,
        &spec.child("clientConfig"),
    ));
    errors.extend(validate_namespace_selector(
        config.spec.namespace_selector.as_ref(),
        &spec.child("namespaceSelector"),
    ));
    Outcome::from_errors(errors)
}

fn validate_client_config(client: &ClientConfig, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    match (&client.url, &client.service) {
        (None, None) => errors.push(FieldError::required(
            path,
            "either url or service must be defined",
        )),
        (Some(_), Some(_)) => errors.push(FieldError::forbidden(
            path,
            "only one of url or service can be defined",
        )),
        _ => {}
    }
    if let Some(url) = &client.url {
        errors.extend(validate_url(url, &path.child("url")));
    }
    if let Some(service) = &client.service {
        errors.extend(validate_service(service, &path.child("service")));
    }
    if let Some(bundle) = &client.ca_bundle {
        errors.extend(validate_ca_bundle(bundle, &path.child("caBundle")));
    }
    errors
}

fn validate_url(url: &str, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    if url.len() > MAX_URL {
        errors.push(FieldError::too_long(path, MAX_URL));
    }
    match request_uri::scheme_of(url) {
        Err(err) => errors.push(FieldError::invalid(
            path,
            url,
            format!("must be a valid URL, e.g. https://example.com: {err}"),
        )),
        Ok(scheme) if scheme != "https" => errors.push(FieldError::invalid(
            path,
            url,
            "'https' is the only allowed URL scheme, e.g. https://example.com",
        )),
        Ok(_) => {}
    }
    errors
}

fn validate_service(service: &ServiceReference, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let name = path.child("name");
    if service.name.is_empty() {
        errors.push(FieldError::required(&name, "must not be empty"));
    }
    for problem in dns1035_label_problems(&service.name) {
        errors.push(FieldError::invalid(&name, service.name.as_str(), problem));
    }
    let namespace = path.child("namespace");
    if service.namespace.is_empty() {
        errors.push(FieldError::required(&namespace, "must not be empty"));
    }
    for problem in dns1123_label_problems(&service.namespace) {
        errors.push(FieldError::invalid(
            &namespace,
            service.namespace.as_str(),
            problem,
        ));
    }
    if let Some(url_path) = &service.path {
        let at = path.child("path");
        if url_path.len() > MAX_URL {
            errors.push(FieldError::too_long(&at, MAX_URL));
        }
        if let Err(err) = request_uri::scheme_of(url_path) {
            errors.push(FieldError::invalid(
                &at,
                url_path.as_str(),
                format!("must be a valid URL path e.g. /path/to/hook: {err}"),
            ));
        }
        if !url_path.starts_with('/') {
            errors.push(FieldError::invalid(
                &at,
                url_path.as_str(),
                "must start with \"/\" to be a valid URL path",
            ));
        }
    }
    if let Some(port) = service.port.filter(|port| !(1..=65535).contains(port)) {
        errors.push(FieldError::invalid(
            &path.child("port"),
            port,
            "must be between 1 and 65535, inclusive",
        ));
    }
    errors
}

/// The CA bundle must be base64 (the CRD's `format: byte`) of PEM text holding at least one
/// X.509 certificate, the least a TLS client can trust.
fn validate_ca_bundle(bundle: &str, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    if bundle.len() > MAX_CA_BUNDLE {
        errors.push(FieldError::too_long(path, MAX_CA_BUNDLE));
        return errors;
    }
    let Ok(pem) = STANDARD.decode(bundle) else {
        errors.push(FieldError::invalid(
            path,
            bundle,
            format!("{path} in body must be of type byte: {bundle:?}"),
        ));
        return errors;
    };
    let has_certificate = x509_parser::pem::Pem::iter_from_buffer(&pem)
        .map_while(Result::ok)
        .any(|block| block.label == "CERTIFICATE" && block.parse_x509().is_ok());
    if !has_certificate {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path,
            None,
            "must be a PEM-encoded CA bundle holding at least one X.509 certificate",
        ));
    }
    errors
}

fn validate_namespace_selector(selector: Option<&LabelSelector>, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let Some(selector) = selector else {
        errors.push(FieldError::required(path, "must be defined"));
        return errors;
    };
    if let Err(err) = Selector::parse(selector) {
        let value = serde_json::to_value(selector).unwrap_or_default();
        errors.push(FieldError::invalid(path, value, err.to_string()));
    }
    errors
}

#[cfg(test)]
mod tests;
