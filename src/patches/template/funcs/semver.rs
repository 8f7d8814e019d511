//! sprig `semver` and `semverCompare`: Masterminds/semver v3 versions and constraints.

use std::cmp::Ordering;
use std::rc::Rc;
use std::sync::LazyLock;

use regex::Regex;

use super::super::value::Value;
use super::super::version::{compare_prerelease, compile, Version};
use super::{fixed, str_arg, Func, Param};

const CONSTRAINT_VERSION: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

static CONSTRAINT: LazyLock<Regex> =
    LazyLock::new(|| compile(&format!(r"^\s*({OPS})\s*({CONSTRAINT_VERSION})\s*$")));
static RANGE: LazyLock<Regex> = LazyLock::new(|| {
    compile(&format!(
        r"\s*({CONSTRAINT_VERSION})\s+-\s+({CONSTRAINT_VERSION})\s*"
    ))
});
static FIND: LazyLock<Regex> = LazyLock::new(|| compile(&format!(r"({OPS})\s*({CONSTRAINT_VERSION})")));
static VALID: LazyLock<Regex> = LazyLock::new(|| {
    compile(&format!(
        r"^(\s*({OPS})\s*({CONSTRAINT_VERSION})\s*)((?:\s+|,\s*)({OPS})\s*({CONSTRAINT_VERSION})\s*)*$"
    ))
});

/// Finds the semver functions.
pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "semver" => fixed(&[Param::Str], |_, a| {
            Version::parse(str_arg(&a, 0)).map(|v| Value::Version(Rc::new(v)))
        }),
        "semverCompare" => fixed(&[Param::Str, Param::Str], |_, a| {
            let constraints = Constraints::parse(str_arg(&a, 0))?;
            let version = Version::parse(str_arg(&a, 1))?;
            Ok(Value::Bool(constraints.check(&version)))
        }),
        _ => return None,
    })
}

/// One `<op> <version>` term; `minor_dirty`/`patch_dirty` mark wildcard or absent parts.
struct Constraint {
    op: String,
    con: Version,
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

/// OR-groups of AND-ed constraints.
struct Constraints(Vec<Vec<Constraint>>);

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

impl Constraints {
    fn parse(text: &str) -> Result<Constraints, String> {
        let mut rewritten = text.to_string();
        for caps in RANGE.captures_iter(text) {
            let (whole, lo, hi) = (&caps[0], &caps[1], &caps[11]);
            rewritten = rewritten.replacen(whole, &format!(">= {lo}, <= {hi} "), 1);
        }
        let mut groups = Vec::new();
        for part in rewritten.split("||") {
            if !VALID.is_match(part) {
                return Err(format!("improper constraint: {part}"));
            }
            let terms: Vec<&str> = FIND.find_iter(part).map(|m| m.as_str()).collect();
            let terms = if terms.is_empty() { vec![part] } else { terms };
            groups.push(
                terms
                    .into_iter()
                    .map(Constraint::parse)
                    .collect::<Result<_, _>>()?,
            );
        }
        Ok(Constraints(groups))
    }

    fn check(&self, v: &Version) -> bool {
        self.0.iter().any(|group| group.iter().all(|c| c.check(v)))
    }
}

impl Constraint {
    fn parse(text: &str) -> Result<Constraint, String> {
        if text.is_empty() {
            let con = Version::parse("0.0.0")?;
            return Ok(Constraint {
                op: String::new(),
                con,
                dirty: true,
                minor_dirty: false,
                patch_dirty: false,
            });
        }
        let caps = CONSTRAINT
            .captures(text)
            .ok_or_else(|| format!("improper constraint: {text}"))?;
        let group = |i| caps.get(i).map_or("", |m| m.as_str());
        let (major, minor, patch, pre) = (group(3), group(4), group(5), group(6));
        let (mut dirty, mut minor_dirty, mut patch_dirty) = (false, false, false);
        let ver = if is_x(major) || major.is_empty() {
            dirty = true;
            format!("0.0.0{pre}")
        } else if is_x(minor.trim_start_matches('.')) || minor.is_empty() {
            (dirty, minor_dirty) = (true, true);
            format!("{major}.0.0{pre}")
        } else if is_x(patch.trim_start_matches('.')) || patch.is_empty() {
            (dirty, patch_dirty) = (true, true);
            format!("{major}{minor}.0{pre}")
        } else {
            group(2).to_string()
        };
        let con = Version::parse(&ver).map_err(|_| "constraint Parser Error".to_string())?;
        Ok(Constraint {
            op: group(1).to_string(),
            con,
            dirty,
            minor_dirty,
            patch_dirty,
        })
    }

    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        // Only pre-release constraints match pre-release versions (a plain `!=` excepted).
        if !v.pre.is_empty() && c.pre.is_empty() && (self.op != "!=" || self.dirty) {
            return false;
        }
        let cmp = v.compare(c);
        match self.op.as_str() {
            "" | "=" => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    cmp == Ordering::Equal
                }
            }
            "!=" => self.not_equal(v),
            ">" => {
                if !self.dirty {
                    cmp == Ordering::Greater
                } else if v.major != c.major {
                    v.major > c.major
                } else if self.minor_dirty {
                    false
                } else if self.patch_dirty {
                    v.minor > c.minor
                } else {
                    cmp == Ordering::Greater
                }
            }
            "<" => cmp == Ordering::Less,
            ">=" | "=>" => cmp != Ordering::Less,
            "<=" | "=<" => {
                if !self.dirty {
                    cmp != Ordering::Greater
                } else {
                    !(v.major > c.major || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
                }
            }
            "~" | "~>" => self.tilde(v),
            "^" => self.caret(v),
            _ => false,
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.con;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if v.minor > 0 {
            return false;
        }
        c.patch == v.patch
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.con;
        if self.dirty {
            if c.major != v.major {
                return true;
            }
            if c.minor != v.minor && !self.minor_dirty {
                return true;
            }
            if self.minor_dirty {
                return false;
            }
            if c.patch != v.patch && !self.patch_dirty {
                return true;
            }
            if self.patch_dirty {
                return (!v.pre.is_empty() || !c.pre.is_empty())
                    && compare_prerelease(&v.pre, &c.pre) != Ordering::Equal;
            }
        }
        v.compare(c) != Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERSIONS: [&str; 10] = [
        "v1.30.2",
        "1.30.0",
        "v1.31.0-rc.1+build.5",
        "1.24",
        "v1.25.0-alpha.0",
        "0.2.5",
        "0.0.3",
        "1.33.0",
        "v1.30.2+rke2r1",
        "1.32.0-0",
    ];

    /// Each constraint against [`VERSIONS`] (`t`/`f`), as Masterminds/semver v3.3.0 answers.
    #[rustfmt::skip]
    const TABLE: &[(&str, &str)] = &[
        (">= v1.24", "ttftfffttf"), ("< v1.25", "ffftfttfff"), (">=1.30.0-0", "tttffffttt"),
        ("< 1.33.0-0", "tttttttftt"), ("~1.30", "ttfffffftf"), ("~1.30.0", "ttfffffftf"),
        ("^1.29", "ttfffffttf"), ("^0.2.3", "ffffftffff"), ("^0.0.3", "fffffftfff"),
        ("1.30.x", "ttfffffftf"), ("1.x", "ttftfffttf"), ("*", "ttftfttttf"),
        ("!=1.30.2", "ftttttttft"), ("!=1.30.x", "ffftftttff"), (">1.30", "ffffffftff"),
        (">1.30.x", "ffffffftff"), ("<=1.30", "ttftfttftf"), ("<=1.30.1", "ftftfttfff"),
        ("=1.30.2", "tffffffftf"), ("1.29 - 1.31", "ttfffffftf"), (">1.2, <2 || =3.0.0", "ttftfffttf"),
        (">= 1.28 < 1.31", "ttfffffftf"), ("~> 1.30.1", "tffffffftf"), ("v1.30.2", "tffffffftf"),
        (">=1.31.0-rc.0", "fftfffftft"),
    ];

    #[test]
    fn constraints_match_masterminds_semver() {
        for (constraint, expected) in TABLE {
            let parsed = Constraints::parse(constraint).unwrap();
            let got: String = VERSIONS
                .iter()
                .map(|v| {
                    if parsed.check(&Version::parse(v).unwrap()) {
                        't'
                    } else {
                        'f'
                    }
                })
                .collect();
            assert_eq!(&got, expected, "{constraint}");
        }
    }

    #[test]
    fn versions_parse_loosely_and_print_normalized() {
        let v = Version::parse("v1.2").unwrap();
        assert_eq!(
            (v.to_string(), v.original.as_str()),
            ("1.2.0".to_string(), "v1.2")
        );
        assert_eq!(
            Version::parse("1.2.3-01").unwrap_err(),
            "Version segment starts with 0"
        );
        assert_eq!(Version::parse("1.2.3.4").unwrap_err(), "Invalid Semantic Version");
        assert_eq!(Constraints::parse("!!").err().unwrap(), "improper constraint: !!");
    }
}
