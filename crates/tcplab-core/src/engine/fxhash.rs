//! A fast, deterministic hasher for the builder's maps (node names, index
//! pairs): the multiply-and-rotate hash rustc uses for its own tables.
//! SipHash, the standard library's default, resists flooding attacks that a
//! scenario file cannot mount, and costs several times more per lookup.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FxHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

/// An odd constant with well-mixed bits (2^64 / golden ratio, rounded to odd).
const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    /// The product's low bits depend only on the words' low bits (the first
    /// letters of names such as "s1234"), and the table indexes by the low
    /// bits: fold the high half down first.
    #[inline]
    fn finish(&self) -> u64 {
        let h = self.hash;
        (h ^ (h >> 32)).wrapping_mul(K) ^ (h >> 29)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_equal_and_near_keys_apart() {
        let mut m: FastMap<&str, u32> = FastMap::default();
        for i in 0..10_000u32 {
            assert!(m.insert(Box::leak(format!("s{i}").into_boxed_str()), i).is_none());
        }
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.get("s1234"), Some(&1234));
        assert_eq!(m.get("s10000"), None);
        let h = |s: &str| {
            let mut x = FxHasher::default();
            x.write(s.as_bytes());
            x.finish()
        };
        assert_ne!(h("s1"), h("s2"));
        assert_eq!(h("r0"), h("r0"));
    }
}
