//! CA injection as Cluster API does it: an ExtensionConfig annotated
//! `runtime.cluster.x-k8s.io/inject-ca-from-secret: <namespace>/<name>` gets the `ca.crt` entry
//! of that Secret as its `spec.clientConfig.caBundle`.

use serde_json::Value;

/// The annotation naming the Secret whose CA an ExtensionConfig trusts.
pub const INJECT_CA_FROM_SECRET_ANNOTATION: &str = "runtime.cluster.x-k8s.io/inject-ca-from-secret";
/// The Secret entry holding the CA.
pub const CA_KEY: &str = "ca.crt";

/// The Secret a config's annotation names, as (annotation value, namespace, name); `None` when it
/// has no annotation, an error when the value is not `<namespace>/<name>`.
pub fn ca_secret(config: &Value) -> Option<Result<(String, String, String), String>> {
    let raw = config
        .pointer("/metadata/annotations")?
        .get(INJECT_CA_FROM_SECRET_ANNOTATION)?
        .as_str()
        .unwrap_or_default();
    Some(match raw.split_once('/') {
        Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() => {
            Ok((raw.to_owned(), namespace.to_owned(), name.to_owned()))
        }
        _ => Err(format!(
            "failed to reconcile caBundle: secret name {raw:?} must be in the form <namespace>/<name>"
        )),
    })
}

/// The caBundle (base64, as the API carries both) that the Secret `secret` (as JSON, named
/// `raw` in the annotation) gives, or why it gives none.
pub fn injected_ca(raw: &str, secret: &Value) -> Result<String, String> {
    secret
        .pointer("/data")
        .and_then(|data| data.get(CA_KEY))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| {
            format!("failed to reconcile caBundle: secret {raw} does not contain a {CA_KEY:?} entry")
        })
}

/// The patch that gives `config` the caBundle `ca`, if it does not have it yet.
pub fn ca_patch(config: &Value, ca: &str) -> Option<Value> {
    let current = config
        .pointer("/spec/clientConfig/caBundle")
        .and_then(Value::as_str);
    (current != Some(ca)).then(|| serde_json::json!({"spec": {"clientConfig": {"caBundle": ca}}}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn annotated(value: &str) -> Value {
        json!({"metadata": {"name": "ext", "annotations": {INJECT_CA_FROM_SECRET_ANNOTATION: value}}})
    }

    #[test]
    fn the_annotation_names_a_namespaced_secret() {
        assert!(ca_secret(&json!({"metadata": {"name": "ext"}})).is_none());
        assert_eq!(
            ca_secret(&annotated("ns/ca")).unwrap().unwrap(),
            ("ns/ca".to_owned(), "ns".to_owned(), "ca".to_owned())
        );
        for bad in ["ca", "/ca", "ns/"] {
            assert_eq!(
                ca_secret(&annotated(bad)).unwrap().unwrap_err(),
                format!("failed to reconcile caBundle: secret name {bad:?} must be in the form <namespace>/<name>")
            );
        }
    }

    #[test]
    fn the_ca_comes_from_the_ca_crt_entry_and_is_patched_only_when_it_differs() {
        let secret = json!({"data": {"ca.crt": "Q0E=", "tls.crt": "eA=="}});
        assert_eq!(injected_ca("ns/ca", &secret).unwrap(), "Q0E=");
        assert_eq!(
            injected_ca("ns/ca", &json!({"data": {"tls.crt": "eA=="}})).unwrap_err(),
            "failed to reconcile caBundle: secret ns/ca does not contain a \"ca.crt\" entry"
        );
        let config = json!({"spec": {"clientConfig": {"caBundle": "Q0E="}}});
        assert_eq!(ca_patch(&config, "Q0E="), None);
        assert_eq!(
            ca_patch(&config, "TkVX").unwrap(),
            json!({"spec": {"clientConfig": {"caBundle": "TkVX"}}})
        );
    }
}
