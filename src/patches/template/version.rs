//! A Masterminds/semver v3 (loose) version, as sprig's `semver` returns it: parsed, ordered and
//! printed like the Go library.

use std::cmp::Ordering;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

/// A version: optional `v`, optional minor and patch, pre-release and build metadata.
pub(super) const VERSION_PATTERN: &str = r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";

/// A regex from one of the constant patterns of this module or of the semver functions.
pub(super) fn compile(pattern: &str) -> Regex {
    // The patterns are constants; a failure here is a programming error caught by the tests.
    Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").unwrap_or_else(|_| unreachable!()))
}

static VERSION: LazyLock<Regex> = LazyLock::new(|| compile(&format!("^{VERSION_PATTERN}$")));

/// A parsed (loose) semantic version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    pub(super) major: u64,
    pub(super) minor: u64,
    pub(super) patch: u64,
    pub(super) pre: String,
    pub(super) metadata: String,
    pub(super) original: String,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

fn segment(text: Option<regex::Match<'_>>) -> Result<u64, String> {
    match text.map(|m| m.as_str().trim_start_matches('.')) {
        None | Some("") => Ok(0),
        Some(digits) => digits
            .parse()
            .map_err(|e| format!("Error parsing version segment: {e}")),
    }
}

fn is_identifier(part: &str) -> bool {
    !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

impl Version {
    /// Parses like `semver.NewVersion`: optional `v`, optional minor/patch.
    pub(crate) fn parse(text: &str) -> Result<Version, String> {
        let caps = VERSION.captures(text).ok_or("Invalid Semantic Version")?;
        let group = |i| caps.get(i).map_or("", |m| m.as_str()).to_string();
        let version = Version {
            major: segment(caps.get(1))?,
            minor: segment(caps.get(2))?,
            patch: segment(caps.get(3))?,
            pre: group(5),
            metadata: group(8),
            original: text.to_string(),
        };
        for part in version.pre.split('.').filter(|_| !version.pre.is_empty()) {
            if part.bytes().all(|b| b.is_ascii_digit()) {
                if part.len() > 1 && part.starts_with('0') {
                    return Err("Version segment starts with 0".into());
                }
            } else if !is_identifier(part) {
                return Err("Invalid Prerelease string".into());
            }
        }
        if !version.metadata.is_empty() && !version.metadata.split('.').all(is_identifier) {
            return Err("Invalid Metadata string".into());
        }
        Ok(version)
    }

    /// Masterminds/semver's order: major, minor, patch, then pre-release (none sorts last).
    pub(super) fn compare(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_prerelease(&self.pre, &other.pre),
            })
    }
}

/// Orders two pre-release strings as semver does (numeric parts numerically, below alphanumeric).
pub(super) fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let (pa, pb): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for i in 0..pa.len().max(pb.len()) {
        let (x, y) = (pa.get(i).copied().unwrap_or(""), pb.get(i).copied().unwrap_or(""));
        let ord = compare_pre_part(x, y);
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

fn compare_pre_part(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    if a.is_empty() {
        return Ordering::Less;
    }
    if b.is_empty() {
        return Ordering::Greater;
    }
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}
