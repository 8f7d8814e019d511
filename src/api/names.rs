//! Kubernetes' rules for names, label keys and label values (apimachinery's validation
//! package): why a string is not a qualified name, a label value, an RFC 1123 subdomain or label,
//! or an RFC 1035 label, in the API server's words. Admission, label selectors, the runtime
//! registry and the dev certificates check names with them.

/// Longest name part of a qualified name, and longest label value.
const NAME_MAX: usize = 63;
/// Longest DNS-1123 subdomain (the prefix of a qualified name).
const SUBDOMAIN_MAX: usize = 253;

const QUALIFIED_NAME_FORMAT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start \
     and end with an alphanumeric character";
const QUALIFIED_NAME_EXAMPLES: &[&str] = &["MyName", "my.name", "123-abc"];
const SUBDOMAIN_FORMAT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const SUBDOMAIN_RULE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
     characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FORMAT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_RULE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric \
     characters or '-', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FORMAT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_RULE: &str = "a DNS-1035 label must consist of lower case alphanumeric characters \
     or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_VALUE_FORMAT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_RULE: &str = "a valid label must be an empty string or consist of alphanumeric \
     characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// Why `value` is not a qualified name (`[prefix/]name`, e.g. `example.com/MyName`), a label key:
/// worded as apimachinery v0.36 (Cluster API v1.14's) `content.IsLabelKey` words it: "a valid
/// label key" where older releases said "a qualified name" for a key with more than one `/`, and
/// lengths in bytes.
pub fn qualified_name_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                problems.push("prefix part must be non-empty".to_owned());
            } else {
                problems.extend(
                    subdomain_problems_in(prefix, "bytes")
                        .into_iter()
                        .map(|p| format!("prefix part {p}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
            "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            format_problem(
                QUALIFIED_NAME_RULE,
                QUALIFIED_NAME_FORMAT,
                QUALIFIED_NAME_EXAMPLES
            )
        )]
        }
    };
    if name.is_empty() {
        problems.push("name part must be non-empty".to_owned());
    } else if name.len() > NAME_MAX {
        problems.push(format!("name part must be no more than {NAME_MAX} bytes"));
    }
    if !is_qualified_name_part(name) {
        problems.push(format!(
            "name part {}",
            format_problem(
                QUALIFIED_NAME_RULE,
                QUALIFIED_NAME_FORMAT,
                QUALIFIED_NAME_EXAMPLES
            )
        ));
    }
    problems
}

/// Why `value` is not a valid label value (apimachinery v0.36's `content.IsLabelValue`: lengths
/// in bytes).
pub fn label_value_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > NAME_MAX {
        problems.push(format!("must be no more than {NAME_MAX} bytes"));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        problems.push(format_problem(
            LABEL_VALUE_RULE,
            LABEL_VALUE_FORMAT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    problems
}

/// Why `value` is not a lowercase RFC 1123 subdomain, in the API server's words
/// (`validation.IsDNS1123Subdomain`, lengths in characters).
pub fn subdomain_problems(value: &str) -> Vec<String> {
    subdomain_problems_in(value, "characters")
}

/// [`subdomain_problems`] with the length measured in `unit`: apimachinery v0.36's `content`
/// package (label key prefixes) says "bytes" where `validation` says "characters".
fn subdomain_problems_in(value: &str, unit: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > SUBDOMAIN_MAX {
        problems.push(format!("must be no more than {SUBDOMAIN_MAX} {unit}"));
    }
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        let edge = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        edge(bytes.first())
            && edge(bytes.last())
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    };
    if !value.split('.').all(label_ok) {
        problems.push(format_problem(SUBDOMAIN_RULE, SUBDOMAIN_FORMAT, &["example.com"]));
    }
    problems
}

/// Why `value` is not a lowercase RFC 1123 label (a namespace's or an ExtensionConfig's name),
/// in the API server's words (`IsDNS1123Label`).
pub fn dns1123_label_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > NAME_MAX {
        problems.push(format!("must be no more than {NAME_MAX} characters"));
    }
    let lower_alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if !is_dns_label(value, lower_alnum) {
        // A valid subdomain that is not a label has dots, the length being checked already.
        if value.contains('.') && value.split('.').all(|label| is_dns_label(label, lower_alnum)) {
            problems.push("must not contain dots".to_owned());
        } else {
            problems.push(format_problem(
                DNS1123_LABEL_RULE,
                DNS1123_LABEL_FORMAT,
                &["my-name", "123-abc"],
            ));
        }
    }
    problems
}

/// Why `value` is not an RFC 1035 label (a Service's name), in the API server's words
/// (`IsDNS1035Label`).
pub fn dns1035_label_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > NAME_MAX {
        problems.push(format!("must be no more than {NAME_MAX} characters"));
    }
    if !is_dns_label(value, u8::is_ascii_lowercase) {
        problems.push(format_problem(
            DNS1035_LABEL_RULE,
            DNS1035_LABEL_FORMAT,
            &["my-name", "abc-123"],
        ));
    }
    problems
}

/// Lower-case alphanumerics and `-`, starting with a byte `first` accepts and ending with an
/// alphanumeric.
fn is_dns_label(value: &str, first: fn(&u8) -> bool) -> bool {
    let bytes = value.as_bytes();
    let lower_alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    bytes.first().is_some_and(|b| first(b) && lower_alnum(b))
        && bytes.last().is_some_and(lower_alnum)
        && bytes.iter().all(|b| lower_alnum(b) || *b == b'-')
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, the whole of `value`.
fn is_qualified_name_part(value: &str) -> bool {
    let bytes = value.as_bytes();
    let edge = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    edge(bytes.first())
        && edge(bytes.last())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// A format rule with examples, as Kubernetes words it.
fn format_problem(rule: &str, format: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{rule} (e.g. {}regex used for validation is '{format}')",
        examples.join(" or ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
        with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
        '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

    #[test]
    fn empty_key_has_two_problems() {
        assert_eq!(
            qualified_name_problems(""),
            vec![
                "name part must be non-empty".to_owned(),
                format!("name part {NAME_RULE}")
            ]
        );
    }

    #[test]
    fn prefix_must_be_a_lowercase_subdomain() {
        assert_eq!(
            qualified_name_problems("Example.com/x"),
            vec!["prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
                  '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used \
                  for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_owned()]
        );
        assert_eq!(
            qualified_name_problems("/x"),
            vec!["prefix part must be non-empty".to_owned()]
        );
    }

    #[test]
    fn two_slashes_are_one_problem() {
        assert_eq!(
            qualified_name_problems("a/b/c"),
            vec![format!(
                "a valid label key {NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )]
        );
    }

    #[test]
    fn long_name_and_value() {
        let long = "a".repeat(64);
        assert_eq!(
            qualified_name_problems(&long),
            vec!["name part must be no more than 63 bytes".to_owned()]
        );
        assert_eq!(
            label_value_problems(&long),
            vec!["must be no more than 63 bytes".to_owned()]
        );
    }
}
