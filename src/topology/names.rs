//! Deterministic names of generated objects, from the class's naming strategies when set.

use serde_json::Value;

use super::error::TopologyError;
use crate::api::NamingStrategy;
use crate::patches::template::{ExecOptions, Template};

/// A short, stable suffix (5 lowercase alphanumerics) derived from `seed` (FNV-1a).
pub fn suffix(seed: &str) -> String {
    let mut hash = Fnv::default();
    hash.feed(seed.as_bytes());
    encode(hash.0)
}

/// [`suffix`] of `value`'s compact JSON text, hashed as it is written (no string is built).
pub fn content_suffix(value: &Value) -> String {
    let mut hash = Fnv::default();
    // Writing into the hasher cannot fail.
    let _ = serde_json::to_writer(&mut hash, value);
    encode(hash.0)
}

/// A running 64-bit FNV-1a hash.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn feed(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl std::io::Write for Fnv {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.feed(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Five characters of `hash` in an alphabet without vowels (no words) or look-alikes.
fn encode(mut hash: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut out = String::with_capacity(5);
    for _ in 0..5 {
        let digit = usize::try_from(hash % ALPHABET.len() as u64).unwrap_or(0);
        out.push(char::from(*ALPHABET.get(digit).unwrap_or(&b'x')));
        hash /= ALPHABET.len() as u64;
    }
    out
}

/// `{prefix}-{suffix(seed)}`, the prefix trimmed so the name stays within 63 characters.
pub fn object_name(prefix: &str, seed: &str) -> String {
    let prefix: String = prefix.chars().take(57).collect();
    format!("{}-{}", prefix.trim_end_matches('-'), suffix(seed))
}

/// A stand-in for a generated name not known yet, `{prefix}-00000`: shaped like [`object_name`]
/// but never one of its names (`0` is not in the suffix alphabet).
pub fn placeholder(prefix: &str) -> String {
    let prefix: String = prefix.chars().take(57).collect();
    format!("{}-00000", prefix.trim_end_matches('-'))
}

/// The name from `strategy`'s template rendered with `data()` plus `random` (a stable suffix from
/// `seed`), or [`object_name`]`(prefix, seed)` without a strategy (then `data` is never made).
/// Names over 63 characters are shortened to a hashed form.
pub fn from_strategy(
    strategy: Option<&NamingStrategy>,
    data: impl FnOnce() -> Value,
    prefix: &str,
    seed: &str,
) -> Result<String, TopologyError> {
    let Some(source) = strategy.map(|s| s.template.as_str()).filter(|t| !t.is_empty()) else {
        return Ok(object_name(prefix, seed));
    };
    let naming = |reason: String| TopologyError::Naming {
        template: source.to_owned(),
        reason,
    };
    let template = Template::parse_builtins_only(source).map_err(|e| naming(e.to_string()))?;
    let mut data = data();
    if let Some(map) = data.as_object_mut() {
        map.insert("random".to_owned(), Value::String(suffix(seed)));
    }
    let options = ExecOptions {
        missing_key_error: true,
        ..ExecOptions::default()
    };
    let name = template
        .execute(&data, &options)
        .map_err(|e| naming(e.to_string()))?;
    Ok(if name.len() > 63 {
        object_name(&name, seed)
    } else {
        name
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable_and_bounded() {
        assert_eq!(object_name("c1", "cp"), object_name("c1", "cp"));
        assert_ne!(object_name("c1", "cp"), object_name("c1", "infra"));
        let long = "a".repeat(100);
        let name = object_name(&long, "x");
        assert_eq!(name.len(), 63);
        assert!(name.starts_with(&"a".repeat(57)));
        assert_eq!(placeholder(&long).len(), 63);
        assert_ne!(placeholder("c1"), object_name("c1", "x"));
    }

    #[test]
    fn strategies_render_with_random() {
        let strategy: NamingStrategy =
            serde_yaml_ng::from_str(r#"{template: "{{ .cluster.name }}-cp-{{ .random }}"}"#).unwrap();
        let data = serde_json::json!({"cluster": {"name": "c1"}});
        let name = from_strategy(Some(&strategy), || data.clone(), "c1", "cp").unwrap();
        assert_eq!(name, format!("c1-cp-{}", suffix("cp")));
        let bad: NamingStrategy = serde_yaml_ng::from_str(r#"{template: "{{ .nope.name }}"}"#).unwrap();
        let err = from_strategy(Some(&bad), || data, "c1", "cp").unwrap_err();
        assert!(matches!(err, TopologyError::Naming { .. }), "{err}");
    }
}
