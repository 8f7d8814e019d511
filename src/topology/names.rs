//! Deterministic names of generated objects.

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
}
