//! Which API version of a provider's kind Cluster API uses: the CRD lists, in the label
//! `cluster.x-k8s.io/<contract>`, the versions that implement that contract (`v1beta1_v1beta2`);
//! the newest of them, in Kubernetes' version order, is the one read and written. Cluster API
//! v1.14 speaks contract v1beta2 and still accepts providers of contract v1beta1: the v1beta2
//! label is looked at first, then the v1beta1 one.

use std::cmp::Ordering;
use std::collections::BTreeMap;

/// The contract this implementation speaks.
pub const CONTRACT: &str = "v1beta2";

/// The label on a provider CRD naming the versions that implement [`CONTRACT`].
pub const CONTRACT_LABEL: &str = "cluster.x-k8s.io/v1beta2";

/// The contracts accepted, newest first: [`CONTRACT`], and v1beta1, which it is temporarily
/// compatible with.
pub const COMPATIBLE_CONTRACTS: [&str; 2] = [CONTRACT, "v1beta1"];

/// The contract a provider CRD implements and the versions its label lists for it, as written:
/// the first of [`COMPATIBLE_CONTRACTS`] with a non-empty label; `None` without any.
pub fn contract_versions(labels: &BTreeMap<String, String>) -> Option<(&'static str, Vec<&str>)> {
    COMPATIBLE_CONTRACTS.iter().find_map(|contract| {
        let listed = labels.get(&format!("cluster.x-k8s.io/{contract}"))?;
        let versions: Vec<&str> = listed.split('_').filter(|v| !v.is_empty()).collect();
        (!versions.is_empty()).then_some((*contract, versions))
    })
}

/// The contract a provider CRD implements and the newest version its label lists for it, or why
/// there is none.
pub fn contract_and_version(
    crd_name: &str,
    labels: &BTreeMap<String, String>,
) -> Result<(&'static str, String), String> {
    let (contract, versions) = contract_versions(labels).ok_or_else(|| {
        format!(
            "cannot find any versions matching contract versions {COMPATIBLE_CONTRACTS:?} for CRD \
             {crd_name} as contract version label(s) are either missing or empty"
        )
    })?;
    let newest = versions
        .into_iter()
        .max_by(|a, b| compare_versions(a, b))
        .unwrap_or_default()
        .to_owned();
    Ok((contract, newest))
}

/// The contract, of [`COMPATIBLE_CONTRACTS`] and the newest first, whose label lists `version`:
/// the contract that version of the provider's kind implements.
pub fn contract_of_version(labels: &BTreeMap<String, String>, version: &str) -> Option<&'static str> {
    COMPATIBLE_CONTRACTS.iter().copied().find(|contract| {
        labels
            .get(&format!("cluster.x-k8s.io/{contract}"))
            .is_some_and(|listed| listed.split('_').any(|v| v == version))
    })
}

/// The newest version the labels list for the contract the CRD implements, or why there is none.
pub fn newest_for_contract(crd_name: &str, labels: &BTreeMap<String, String>) -> Result<String, String> {
    contract_and_version(crd_name, labels).map(|(_, version)| version)
}

/// Kubernetes' order of API versions: GA above beta above alpha, then by major and minor
/// number (`v1beta2` > `v1beta1` > `v1alpha4`, `v2` > `v1`); strings of another shape sort below
/// all of those, alphabetically.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    match (parse(a), parse(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => Ordering::Greater,
        (None, Some(_)) => Ordering::Less,
        (None, None) => a.cmp(b),
    }
}

/// `(stability, major, minor)`: stability 2 for GA, 1 for beta, 0 for alpha.
fn parse(version: &str) -> Option<(u8, u64, u64)> {
    let rest = version.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let major: u64 = rest[..digits].parse().ok()?;
    if major == 0 {
        return None;
    }
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((2, major, 0));
    }
    let (stability, minor) = if let Some(minor) = tail.strip_prefix("beta") {
        (1, minor)
    } else {
        (0, tail.strip_prefix("alpha")?)
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stability, major, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(value: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(CONTRACT_LABEL.to_owned(), value.to_owned())])
    }

    fn v1beta1_labels(value: &str) -> BTreeMap<String, String> {
        BTreeMap::from([("cluster.x-k8s.io/v1beta1".to_owned(), value.to_owned())])
    }

    #[test]
    fn the_v1beta2_label_is_read_before_the_v1beta1_one() {
        let mut both = v1beta1_labels("v1beta1");
        both.insert(CONTRACT_LABEL.to_owned(), "v1beta2".to_owned());
        assert_eq!(
            contract_and_version("x", &both).unwrap(),
            ("v1beta2", "v1beta2".to_owned())
        );
        assert_eq!(
            contract_and_version("x", &v1beta1_labels("v1alpha4_v1beta1")).unwrap(),
            ("v1beta1", "v1beta1".to_owned())
        );
        // An empty v1beta2 label does not hide the v1beta1 one.
        let mut empty = v1beta1_labels("v1beta1");
        empty.insert(CONTRACT_LABEL.to_owned(), String::new());
        assert_eq!(newest_for_contract("x", &empty).unwrap(), "v1beta1");
    }

    #[test]
    fn a_version_implements_the_newest_contract_that_lists_it() {
        let mut both = v1beta1_labels("v1alpha4_v1beta1");
        both.insert(CONTRACT_LABEL.to_owned(), "v1beta1_v1beta2".to_owned());
        assert_eq!(contract_of_version(&both, "v1beta2"), Some("v1beta2"));
        assert_eq!(contract_of_version(&both, "v1beta1"), Some("v1beta2"));
        assert_eq!(contract_of_version(&both, "v1alpha4"), Some("v1beta1"));
        assert_eq!(contract_of_version(&both, "v1alpha3"), None);
        assert_eq!(contract_of_version(&BTreeMap::new(), "v1beta1"), None);
    }

    #[test]
    fn versions_sort_as_kubernetes_sorts_them() {
        let mut versions = vec![
            "v1",
            "foo",
            "v1beta1",
            "v2alpha1",
            "v1alpha4",
            "v1beta2",
            "v11alpha2",
            "v2",
        ];
        versions.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            versions,
            [
                "foo",
                "v1alpha4",
                "v2alpha1",
                "v11alpha2",
                "v1beta1",
                "v1beta2",
                "v1",
                "v2"
            ]
        );
    }

    #[test]
    fn the_newest_listed_version_is_used() {
        assert_eq!(
            newest_for_contract("x", &labels("v1beta1_v1beta2")).unwrap(),
            "v1beta2"
        );
        assert_eq!(
            newest_for_contract("x", &labels("v1alpha7_v1beta1")).unwrap(),
            "v1beta1"
        );
        assert_eq!(newest_for_contract("x", &labels("v1beta1")).unwrap(), "v1beta1");
    }

    #[test]
    fn a_missing_or_empty_label_is_explained() {
        let err = newest_for_contract("awsclusters.x", &BTreeMap::new()).unwrap_err();
        assert!(
            err.contains("awsclusters.x") && err.contains("v1beta2") && err.contains("v1beta1"),
            "{err}"
        );
        assert!(newest_for_contract("x", &labels("")).is_err());
    }
}
