use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use super::*;

fn config(spec: &str) -> ExtensionConfig {
    serde_yaml_ng::from_str(&format!("metadata: {{name: ext1}}\nspec: {spec}")).unwrap()
}

fn errors(config: &ExtensionConfig) -> Vec<String> {
    validate(config).errors.iter().map(ToString::to_string).collect()
}

#[test]
fn defaults_the_selector_and_the_service_port_only() {
    let mut service = config("{clientConfig: {service: {name: s, namespace: n}}}");
    default(&mut service);
    assert_eq!(service.spec.namespace_selector, Some(LabelSelector::default()));
    assert_eq!(service.spec.client_config.service.unwrap().port, Some(443));
    let mut url =
        config("{clientConfig: {url: 'https://e.example.com'}, namespaceSelector: {matchLabels: {a: b}}}");
    let before = url.clone();
    default(&mut url);
    assert_eq!(url, before, "a set selector and a URL are kept");
}

#[test]
fn a_defaulted_config_passes() {
    for spec in [
        "{clientConfig: {url: 'https://ext.example.com:9443/prefix'}}",
        "{clientConfig: {service: {name: webhook-service, namespace: ext-system, path: /hooks}}}",
    ] {
        let mut config = config(spec);
        default(&mut config);
        assert_eq!(errors(&config), Vec::<String>::new(), "{spec}");
    }
}

#[test]
fn exactly_one_of_url_and_service() {
    let mut neither = config("{clientConfig: {}, namespaceSelector: {}}");
    assert_eq!(
        errors(&neither),
        ["spec.clientConfig: Required value: either url or service must be defined"]
    );
    neither.spec.client_config.url = Some("https://a.example.com".to_owned());
    neither.spec.client_config.service = Some(ServiceReference {
        name: "s".to_owned(),
        namespace: "n".to_owned(),
        ..ServiceReference::default()
    });
    assert_eq!(
        errors(&neither),
        ["spec.clientConfig: Forbidden: only one of url or service can be defined"]
    );
}

#[test]
fn the_url_must_parse_and_be_https() {
    let url = |url: &str| {
        config(&format!(
            "{{clientConfig: {{url: '{url}'}}, namespaceSelector: {{}}}}"
        ))
    };
    assert_eq!(
        errors(&url("http://ext.example.com")),
        [
            r#"spec.clientConfig.url: Invalid value: "http://ext.example.com": 'https' is the only allowed URL scheme, e.g. https://example.com"#
        ]
    );
    assert_eq!(
        errors(&url("ext.example.com")),
        [
            r#"spec.clientConfig.url: Invalid value: "ext.example.com": must be a valid URL, e.g. https://example.com: parse "ext.example.com": invalid URI for request"#
        ]
    );
    assert_eq!(
        errors(&url("https://ext.example.com:x")),
        [
            r#"spec.clientConfig.url: Invalid value: "https://ext.example.com:x": must be a valid URL, e.g. https://example.com: parse "https://ext.example.com:x": invalid port ":x" after host"#
        ]
    );
    let long = format!("https://e.example.com/{}", "a".repeat(MAX_URL));
    assert_eq!(
        errors(&url(&long))[0],
        "spec.clientConfig.url: Too long: may not be more than 512 bytes"
    );
}

#[test]
fn the_service_is_checked_field_by_field() {
    let bad = config(
        "{clientConfig: {service: {name: 1webhook, namespace: Ext.System, path: hooks, port: 0}}, namespaceSelector: {}}",
    );
    let label_1035 = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an \
        alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used \
        for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    let label_1123 =
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and \
        must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for \
        validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    assert_eq!(
        errors(&bad),
        [
            format!(r#"spec.clientConfig.service.name: Invalid value: "1webhook": {label_1035}"#),
            format!(r#"spec.clientConfig.service.namespace: Invalid value: "Ext.System": {label_1123}"#),
            r#"spec.clientConfig.service.path: Invalid value: "hooks": must be a valid URL path e.g. /path/to/hook: parse "hooks": invalid URI for request"#.to_owned(),
            r#"spec.clientConfig.service.path: Invalid value: "hooks": must start with "/" to be a valid URL path"#.to_owned(),
            "spec.clientConfig.service.port: Invalid value: 0: must be between 1 and 65535, inclusive".to_owned(),
        ]
    );
    let empty = config("{clientConfig: {service: {name: '', namespace: ''}}, namespaceSelector: {}}");
    let shown: Vec<String> = errors(&empty);
    assert_eq!(
        shown[0],
        "spec.clientConfig.service.name: Required value: must not be empty"
    );
    assert_eq!(shown.len(), 4, "Required, then the format, of each: {shown:?}");
}

#[test]
fn a_name_with_dots_is_not_a_label() {
    let mut dotted = config("{clientConfig: {url: 'https://e.example.com'}, namespaceSelector: {}}");
    dotted.metadata.name = Some("ext.example".to_owned());
    assert_eq!(
        errors(&dotted),
        [
            r#"metadata.name: Invalid value: "ext.example": ExtensionConfig name should be a valid DNS1123 label name: [must not contain dots]"#
        ]
    );
}

#[test]
fn the_ca_bundle_must_hold_a_certificate() {
    let certificate = crate::server::dev_certs::generate(&["localhost".to_owned()], &[], 1).unwrap();
    let bundle = |pem: &str| {
        let mut config = config("{clientConfig: {url: 'https://e.example.com'}, namespaceSelector: {}}");
        config.spec.client_config.ca_bundle = Some(STANDARD.encode(pem));
        config
    };
    assert_eq!(errors(&bundle(&certificate.ca_pem)), Vec::<String>::new());
    assert_eq!(
        errors(&bundle(&certificate.key_pem)),
        ["spec.clientConfig.caBundle: Invalid value: must be a PEM-encoded CA bundle holding at least one X.509 certificate"]
    );
    let mut not_base64 = bundle("");
    not_base64.spec.client_config.ca_bundle = Some("%%%".to_owned());
    assert_eq!(
        errors(&not_base64),
        [
            r#"spec.clientConfig.caBundle: Invalid value: "%%%": spec.clientConfig.caBundle in body must be of type byte: "%%%""#
        ]
    );
}

#[test]
fn the_namespace_selector_must_be_set_and_parse() {
    let unset = config("{clientConfig: {url: 'https://e.example.com'}}");
    assert_eq!(
        errors(&unset),
        ["spec.namespaceSelector: Required value: must be defined"]
    );
    let bad = config(
        "{clientConfig: {url: 'https://e.example.com'}, namespaceSelector: {matchExpressions: [{key: a, operator: Near}]}}",
    );
    assert_eq!(
        errors(&bad),
        [
            r#"spec.namespaceSelector: Invalid value: {"matchExpressions":[{"key":"a","operator":"Near"}]}: "Near" is not a valid label selector operator"#
        ]
    );
}
