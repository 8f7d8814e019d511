//! Kubernetes versions as Cluster API reads them: tolerant parsing (`v1.30`, `1.30.0+rke2r1`)
//! and ordering that also weighs build metadata.

use std::cmp::Ordering;

use semver::Version;

/// How two versions relate when build metadata counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionOrder {
    /// The first is older.
    Less,
    /// Same version and same build metadata.
    Equal,
    /// The first is newer.
    Greater,
    /// Same precedence but two different textual build identifiers: not ordered.
    Different,
}

/// Parses like Go's `semver.ParseTolerant`: surrounding spaces and one leading `v` dropped,
/// leading zeros removed, a missing minor or patch number taken as 0.
pub fn parse_tolerant(text: &str) -> Option<Version> {
    let trimmed = text.trim();
    let trimmed = trimmed.strip_prefix('v').unwrap_or(trimmed);
    let mut parts: Vec<String> = trimmed.splitn(3, '.').map(strip_leading_zeros).collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return None;
        }
        parts.resize(3, "0".to_owned());
    }
    Version::parse(&parts.join(".")).ok()
}

/// `007` -> `7`, `00` -> `0`; other text unchanged.
fn strip_leading_zeros(part: &str) -> String {
    if part.len() < 2 {
        return part.to_owned();
    }
    let stripped = part.trim_start_matches('0');
    if stripped.starts_with(|c: char| c.is_ascii_digit()) {
        stripped.to_owned()
    } else {
        format!("0{stripped}")
    }
}

/// Compares by semantic-version precedence, then by build identifiers one by one: numeric ones
/// by value and before textual ones, and a longer list after its prefix.
pub fn compare_with_build(a: &Version, b: &Version) -> VersionOrder {
    match a.cmp_precedence(b) {
        Ordering::Less => return VersionOrder::Less,
        Ordering::Greater => return VersionOrder::Greater,
        Ordering::Equal => {}
    }
    let (left, right) = (build_identifiers(a), build_identifiers(b));
    for (l, r) in left.iter().zip(&right) {
        let order = l.compare(r);
        if order != VersionOrder::Equal {
            return order;
        }
    }
    match left.len().cmp(&right.len()) {
        Ordering::Less => VersionOrder::Less,
        Ordering::Equal => VersionOrder::Equal,
        Ordering::Greater => VersionOrder::Greater,
    }
}

/// The dot-separated parts of a version's build metadata.
fn build_identifiers(version: &Version) -> Vec<BuildIdentifier<'_>> {
    if version.build.is_empty() {
        Vec::new()
    } else {
        version
            .build
            .as_str()
            .split('.')
            .map(BuildIdentifier::new)
            .collect()
    }
}

/// One dot-separated part of build metadata.
enum BuildIdentifier<'a> {
    Number(u64),
    Text(&'a str),
}

impl<'a> BuildIdentifier<'a> {
    fn new(text: &'a str) -> Self {
        if text.bytes().all(|b| b.is_ascii_digit()) {
            // Go ignores the overflow error and keeps 0.
            Self::Number(text.parse().unwrap_or(0))
        } else {
            Self::Text(text)
        }
    }

    fn compare(&self, other: &Self) -> VersionOrder {
        match (self, other) {
            (Self::Number(_), Self::Text(_)) => VersionOrder::Less,
            (Self::Text(_), Self::Number(_)) => VersionOrder::Greater,
            (Self::Number(x), Self::Number(y)) => match x.cmp(y) {
                Ordering::Less => VersionOrder::Less,
                Ordering::Equal => VersionOrder::Equal,
                Ordering::Greater => VersionOrder::Greater,
            },
            (Self::Text(x), Self::Text(y)) if x == y => VersionOrder::Equal,
            (Self::Text(_), Self::Text(_)) => VersionOrder::Different,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        parse_tolerant(text).unwrap_or_else(|| panic!("{text} should parse"))
    }

    #[test]
    fn parses_leniently() {
        assert_eq!(v("v1.30.2"), Version::new(1, 30, 2));
        assert_eq!(v(" 1.30 "), Version::new(1, 30, 0));
        assert_eq!(v("v1"), Version::new(1, 0, 0));
        assert_eq!(v("v01.030.00"), Version::new(1, 30, 0));
        assert_eq!(v("1.30.0+rke2r1").build.as_str(), "rke2r1");
        assert_eq!(parse_tolerant("1.30+build"), None);
        assert_eq!(parse_tolerant("one.two.three"), None);
        assert_eq!(parse_tolerant(""), None);
    }

    #[test]
    fn orders_by_precedence_then_build() {
        use VersionOrder::*;
        let cases = [
            ("v1.30.0", "v1.31.0", Less),
            ("v1.31.0", "v1.30.5", Greater),
            ("v1.31.0-rc.1", "v1.31.0", Less),
            ("v1.31.0", "v1.31.0", Equal),
            ("v1.31.0+1", "v1.31.0+2", Less),
            ("v1.31.0+10", "v1.31.0+9", Greater),
            ("v1.31.0+1", "v1.31.0+abc", Less),
            ("v1.31.0+abc", "v1.31.0+1", Greater),
            ("v1.31.0+abc", "v1.31.0+abc", Equal),
            ("v1.31.0+abc", "v1.31.0+abd", Different),
            ("v1.31.0", "v1.31.0+abc", Less),
            ("v1.31.0+abc.1", "v1.31.0+abc", Greater),
        ];
        for (a, b, want) in cases {
            assert_eq!(compare_with_build(&v(a), &v(b)), want, "{a} vs {b}");
        }
    }
}
