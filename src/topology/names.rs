//! Deterministic names of generated objects, from the class's naming strategies when set.

use serde_json::Value;

use super::error::TopologyError;
use crate::api::NamingStrategy;
use crate::patches::template::{ExecOptions, Template};

/// A short, stable suffix (5 lowercase alphanumerics) derived from `seed` (FNV-1a).
pub fn suffix(seed: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in seed.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
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

/// The name from `strategy`'s template rendered with `data` plus `random` (a stable suffix from
/// `seed`), or [`object_name`]`(prefix, seed)` without a strategy. Names over 63 characters are
/// shortened to a hashed form.
pub fn from_strategy(
    strategy: Option<&NamingStrategy>,
    mut data: Value,
    prefix: &str,
    seed: &str,
) -> Result<String, TopologyError> {
    let Some(source) = strategy.and_then(|s| s.template.as_deref()) else {
        return Ok(object_name(prefix, seed));
    };
    let naming = |reason: String| TopologyError::Naming {
        template: source.to_owned(),
        reason,
    };
    let template = Template::parse_builtins_only(source).map_err(|e| naming(e.to_string()))?;
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
    }

    #[test]
    fn strategies_render_with_random() {
        let strategy: NamingStrategy =
            serde_yaml_ng::from_str(r#"{template: "{{ .cluster.name }}-cp-{{ .random }}"}"#).unwrap();
        let data = serde_json::json!({"cluster": {"name": "c1"}});
        let name = from_strategy(Some(&strategy), data.clone(), "c1", "cp").unwrap();
        assert_eq!(name, format!("c1-cp-{}", suffix("cp")));
        let bad: NamingStrategy = serde_yaml_ng::from_str(r#"{template: "{{ .nope.name }}"}"#).unwrap();
        let err = from_strategy(Some(&bad), data, "c1", "cp").unwrap_err();
        assert!(matches!(err, TopologyError::Naming { .. }), "{err}");
    }
}
