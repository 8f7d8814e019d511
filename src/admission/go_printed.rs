//! Typed values printed as Go's `%#v` prints them, which is how the API server shows a struct
//! value in a field error (`Invalid value: v1.LabelSelector{MatchLabels:...}`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

/// A `metav1.LabelSelector` as `%#v` prints it: absent fields as typed nils, map keys sorted.
pub fn label_selector(selector: &LabelSelector) -> String {
    let expressions = match &selector.match_expressions {
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
        Some(list) => {
            let items: Vec<String> = list.iter().map(requirement).collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}",
        string_map(selector.match_labels.as_ref())
    )
}

fn requirement(requirement: &LabelSelectorRequirement) -> String {
    format!(
        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
        quoted(&requirement.key),
        quoted(&requirement.operator),
        string_list(requirement.values.as_deref())
    )
}

fn string_map(map: Option<&BTreeMap<String, String>>) -> String {
    let Some(map) = map else {
        return "map[string]string(nil)".to_owned();
    };
    let entries: Vec<String> = map
        .iter()
        .map(|(key, value)| format!("{}:{}", quoted(key), quoted(value)))
        .collect();
    format!("map[string]string{{{}}}", entries.join(", "))
}

fn string_list(list: Option<&[String]>) -> String {
    let Some(list) = list else {
        return "[]string(nil)".to_owned();
    };
    let items: Vec<String> = list.iter().map(|item| quoted(item)).collect();
    format!("[]string{{{}}}", items.join(", "))
}

/// A string as Go's `%q` prints it, for the printable text selectors hold.
fn quoted(text: &str) -> String {
    format!("{text:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selector(yaml: &str) -> LabelSelector {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    #[test]
    fn selectors_print_as_go_prints_them() {
        assert_eq!(
            label_selector(&selector("{}")),
            "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
        );
        assert_eq!(
            label_selector(&selector("{matchLabels: {'cni plugin': calico, a: b}}")),
            r#"v1.LabelSelector{MatchLabels:map[string]string{"a":"b", "cni plugin":"calico"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"#
        );
        assert_eq!(
            label_selector(&selector(
                "{matchLabels: {}, matchExpressions: [{key: cni, operator: Near, values: [calico, x]}, {key: k, operator: Exists}]}"
            )),
            r#"v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"cni", Operator:"Near", Values:[]string{"calico", "x"}}, v1.LabelSelectorRequirement{Key:"k", Operator:"Exists", Values:[]string(nil)}}}"#
        );
    }
}
