//! The name a provider's CRD must have: `<plural of the lower-cased kind>.<group>`, as Cluster
//! API's `contract.CalculateCRDName` derives it (the plural as the `flect` library forms it).

/// The CRD name Cluster API looks a kind up by: `awsclusters.infrastructure.cluster.x-k8s.io`.
pub fn crd_name(group: &str, kind: &str) -> String {
    format!("{}.{group}", plural(&kind.to_ascii_lowercase()))
}

/// English words whose plural the suffix rules below would get wrong, as kinds may end in them.
const IRREGULAR: [(&str, &str); 8] = [
    ("index", "indices"),
    ("matrix", "matrices"),
    ("vertex", "vertices"),
    ("person", "people"),
    ("child", "children"),
    ("status", "statuses"),
    ("quiz", "quizzes"),
    ("data", "data"),
];

/// The plural of a lower-case word (the last word of a kind decides it).
fn plural(word: &str) -> String {
    if let Some((singular, plural)) = IRREGULAR.iter().find(|(s, _)| word.ends_with(s)) {
        return format!("{}{plural}", &word[..word.len() - singular.len()]);
    }
    let stem_before = |suffix: &str| &word[..word.len() - suffix.len()];
    if word.ends_with('y')
        && !word.ends_with("ay")
        && !word.ends_with("ey")
        && !word.ends_with("oy")
        && !word.ends_with("uy")
    {
        return format!("{}ies", stem_before("y"));
    }
    if ["s", "x", "z", "ch", "sh"].iter().any(|s| word.ends_with(s)) {
        return format!("{word}es");
    }
    format!("{word}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_kinds_take_their_plural_and_group() {
        let group = "infrastructure.cluster.x-k8s.io";
        assert_eq!(
            crd_name(group, "AWSCluster"),
            "awsclusters.infrastructure.cluster.x-k8s.io"
        );
        assert_eq!(
            crd_name(group, "DockerClusterTemplate"),
            "dockerclustertemplates.infrastructure.cluster.x-k8s.io"
        );
        assert_eq!(crd_name("x.io", "FooPolicy"), "foopolicies.x.io");
        assert_eq!(crd_name("x.io", "FooClass"), "fooclasses.x.io");
        assert_eq!(crd_name("x.io", "FooGateway"), "foogateways.x.io");
        assert_eq!(crd_name("x.io", "FooIndex"), "fooindices.x.io");
        assert_eq!(crd_name("x.io", "FooBox"), "fooboxes.x.io");
    }
}
