//! What a cold working set costs on this machine, for any simulator design:
//! per "packet", `k` cache lines at random places in a working set of
//! `flows` x 2 KB (as a packet's links, connection, route entry and packet
//! slot sit in different arrays), each prefetched `ahead` packets before it
//! is read and written, plus `work` dependent ALU steps (the instructions).
//! Prints ns per packet at 1,000, 10,000 and 100,000 flows, so the ratio
//! between 1k and 100k for a given number of lines per packet can be read
//! off. Not part of the project's build:
//!
//!     rustc -O -C target-cpu=native benchmarks/memory_floor.rs -o /tmp/memory_floor
//!     /tmp/memory_floor 40 4 800     # k lines, ahead, work
use std::time::Instant;

#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    }
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("three integers: k ahead work")).collect();
    let [k, ahead, work] = args[..] else { panic!("usage: memory_floor K AHEAD WORK") };
    for flows in [1_000usize, 10_000, 100_000] {
        let lines = flows * 32;
        let mut mem = vec![1u64; lines * 8];
        let packets = 2_000_000usize;
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let at: Vec<u32> = (0..(packets + ahead) * k)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % lines as u64) as u32
            })
            .collect();
        let base = mem.as_mut_ptr();
        let t = Instant::now();
        let mut acc = 0u64;
        for i in 0..packets {
            for j in 0..k {
                prefetch(base.wrapping_add(at[(i + ahead) * k + j] as usize * 8).cast());
            }
            for j in 0..k {
                let p = base.wrapping_add(at[i * k + j] as usize * 8);
                // SAFETY: `at` holds line numbers below `lines`, each 8 words into `mem`.
                unsafe {
                    *p = (*p).wrapping_mul(3).wrapping_add(acc);
                    acc = acc.wrapping_add(*p);
                }
            }
            for _ in 0..work {
                acc = acc.rotate_left(7) ^ 0x0123_4567;
            }
        }
        let ns = t.elapsed().as_nanos() as f64 / packets as f64;
        println!("{k} lines, {ahead} ahead, {work} steps, {flows:>7} flows: {ns:6.0} ns per packet  ({})", acc & 1);
    }
}
