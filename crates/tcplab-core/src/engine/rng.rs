//! Random streams derived from (scenario seed, stable component id).
//!
//! Every component that draws random numbers (an application's think times,
//! for example) owns its own stream, seeded from the scenario seed and a
//! stable name such as `"app/ftp3"`. Adding or removing a component never
//! changes the draws of the others.

use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A 64-bit FNV-1a hash: stable across platforms, releases and runs.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The key of a component's draws (see [`keyed_u64`]): the scenario seed
/// mixed with the component's stable name, as a stream is seeded.
pub fn component_key(seed: u64, component: &str) -> u64 {
    seed.rotate_left(32) ^ fnv1a(component.as_bytes())
}

/// One 64-bit draw for item `n` of the component whose key is `key`, without
/// a stream: SplitMix64's finalizer over (key, n), so each item's draw
/// depends on nothing else.
pub fn keyed_u64(key: u64, n: u64) -> u64 {
    let mut z = key.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One independent random stream.
#[derive(Clone, Debug)]
pub struct RngStream(Xoshiro256PlusPlus);

impl RngStream {
    pub fn new(seed: u64, component: &str) -> Self {
        // Xoshiro's seed_from_u64 expands the mix through SplitMix64.
        let mixed = seed.rotate_left(32) ^ fnv1a(component.as_bytes());
        RngStream(Xoshiro256PlusPlus::seed_from_u64(mixed))
    }

    /// Uniform on [0, 1) with 53 random bits.
    pub fn uniform01(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform01()
    }

    /// Standard normal (Box-Muller; one draw of the pair is used).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform01();
        let u2 = self.uniform01();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Exponential with the given mean (inverse-CDF method).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform01()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_draws_depend_on_seed_component_and_item() {
        let a = keyed_u64(component_key(1, "tcp/a"), 0);
        assert_eq!(a, keyed_u64(component_key(1, "tcp/a"), 0));
        assert_ne!(a, keyed_u64(component_key(2, "tcp/a"), 0));
        assert_ne!(a, keyed_u64(component_key(1, "tcp/b"), 0));
        assert_ne!(a, keyed_u64(component_key(1, "tcp/a"), 1));
        // Uniform enough for a phase: 10,000 items spread over 10 bins, each within 10% of 1,000.
        let mut bins = [0u32; 10];
        let key = component_key(7, "tcp/a");
        for n in 0..10_000 {
            bins[(keyed_u64(key, n) % 10) as usize] += 1;
        }
        assert!(bins.iter().all(|&b| (900..=1100).contains(&b)), "{bins:?}");
    }

    #[test]
    fn streams_depend_only_on_seed_and_component() {
        let mut a = RngStream::new(7, "app/a");
        let mut a2 = RngStream::new(7, "app/a");
        let mut b = RngStream::new(7, "app/b");
        let mut a8 = RngStream::new(8, "app/a");
        let xa: Vec<f64> = (0..5).map(|_| a.uniform01()).collect();
        let xa2: Vec<f64> = (0..5).map(|_| a2.uniform01()).collect();
        let xb: Vec<f64> = (0..5).map(|_| b.uniform01()).collect();
        let xa8: Vec<f64> = (0..5).map(|_| a8.uniform01()).collect();
        assert_eq!(xa, xa2);
        assert_ne!(xa, xb);
        assert_ne!(xa, xa8);
    }

    #[test]
    fn uniform_mean_is_close() {
        let mut r = RngStream::new(1, "x");
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.uniform(1.0, 5.0)).sum::<f64>() / n as f64;
        // Standard error of the mean: (4/sqrt(12))/sqrt(n) = 0.0026; allow 5 sigma.
        assert!((m - 3.0).abs() < 0.013, "mean {m}");
        let e: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        // Standard error 2/sqrt(n) = 0.0045; allow 5 sigma.
        assert!((e - 2.0).abs() < 0.023, "mean {e}");
    }
}
