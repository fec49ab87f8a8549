//! The event queue, ordered by (time, insertion sequence).
//!
//! Events scheduled for the same instant come out in the order they were
//! scheduled (FIFO), so a run is a pure function of its inputs.

pub mod fxhash;
pub mod rng;
pub mod timer;

pub use timer::TimerSlot;

use crate::time::Time;

/// A hint to start loading the cache line at `p` (none where the target
/// has no such instruction). With tens of thousands of flows the next
/// event's link, connection or packet is seldom in cache; asking for it one
/// event ahead overlaps the wait with useful work.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// An event's place in the order: time in the high 64 bits, insertion
/// sequence in the low 64 bits, so one integer comparison sorts by (time, seq).
#[inline]
fn key(time: Time, seq: u64) -> u128 {
    (u128::from(time.as_ns()) << 64) | u128::from(seq)
}

struct Entry<E> {
    key: u128,
    event: E,
}

/// A deterministic future-event list: a 4-ary min-heap keyed by
/// (time, insertion sequence). Four children per node halve the depth of a
/// binary heap, and the children share a cache line or two, which makes
/// removal of the minimum, the engine's most frequent operation, cheaper.
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

const ARITY: usize = 4;

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: Vec::new(), next_seq: 0 }
    }

    /// Schedule `event` at `time`; ties are served in scheduling order.
    pub fn push(&mut self, time: Time, event: E) {
        let k = key(time, self.next_seq);
        self.next_seq += 1;
        let mut i = self.heap.len();
        self.heap.push(Entry { key: k, event });
        // Sift up with a hole: parents move down until the new entry fits.
        let heap = self.heap.as_mut_ptr();
        // SAFETY: every index used is below the length, and the entry taken
        // out at `i` is written back exactly once, at its final place.
        unsafe {
            let new = std::ptr::read(heap.add(i));
            while i > 0 {
                let parent = (i - 1) / ARITY;
                if (*heap.add(parent)).key <= k {
                    break;
                }
                std::ptr::copy_nonoverlapping(heap.add(parent), heap.add(i), 1);
                i = parent;
            }
            std::ptr::write(heap.add(i), new);
        }
    }

    /// The earliest event, if any.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        self.heap.first().map(|e| &e.event)
    }

    /// The time of the earliest event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|e| Time::from_ns((e.key >> 64) as u64))
    }

    /// Remove and return the earliest event.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let last = self.heap.pop()?;
        let top = if self.heap.is_empty() {
            last
        } else {
            let top = std::mem::replace(&mut self.heap[0], last);
            self.sift_down(0);
            top
        };
        Some((Time::from_ns((top.key >> 64) as u64), top.event))
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let heap = self.heap.as_mut_ptr();
        // SAFETY: as in `push`: indices stay below `n` and the moved-out entry
        // is written back once.
        unsafe {
            let moving = std::ptr::read(heap.add(i));
            let k = moving.key;
            loop {
                let first = i * ARITY + 1;
                if first >= n {
                    break;
                }
                let end = (first + ARITY).min(n);
                let mut best = first;
                let mut best_key = (*heap.add(first)).key;
                for c in first + 1..end {
                    let ck = (*heap.add(c)).key;
                    if ck < best_key {
                        best = c;
                        best_key = ck;
                    }
                }
                if best_key >= k {
                    break;
                }
                std::ptr::copy_nonoverlapping(heap.add(best), heap.add(i), 1);
                i = best;
            }
            std::ptr::write(heap.add(i), moving);
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ties_are_fifo() {
        let mut q = EventQueue::new();
        for i in 0..100 {
            q.push(Time::from_ns(5), i);
        }
        q.push(Time::from_ns(1), 1000);
        assert_eq!(q.pop(), Some((Time::from_ns(1), 1000)));
        for i in 0..100 {
            assert_eq!(q.pop(), Some((Time::from_ns(5), i)));
        }
        assert!(q.is_empty());
    }

    proptest! {
        #[test]
        fn pops_in_time_then_insertion_order(times in prop::collection::vec(0u64..50, 0..300)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.push(Time::from_ns(*t), i);
            }
            let mut expected: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
            expected.sort();
            let got: Vec<(u64, usize)> = std::iter::from_fn(|| q.pop()).map(|(t, i)| (t.as_ns(), i)).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
