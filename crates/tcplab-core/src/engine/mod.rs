//! The event queue, ordered by (time, insertion sequence).
//!
//! Events scheduled for the same instant come out in the order they were
//! scheduled (FIFO), so a run is a pure function of its inputs.

pub mod fxhash;
pub mod pages;
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

/// [`prefetch`] every cache line of `*p`: the misses of a large, cold
/// object then overlap instead of coming one after another as its fields
/// are read.
#[inline(always)]
pub fn prefetch_whole<T>(p: *const T) {
    prefetch_bytes(p, std::mem::size_of::<T>());
}

/// [`prefetch`] the cache lines of the first `bytes` bytes at `p`.
#[inline(always)]
pub fn prefetch_bytes<T>(p: *const T, bytes: usize) {
    let p = p.cast::<u8>();
    let mut off = 0;
    while off < bytes {
        prefetch(p.wrapping_add(off));
        off += 64;
    }
    // The last line, when `p` is not at a line's start.
    prefetch(p.wrapping_add(bytes - 1));
}

/// Buckets of at most this many events become due at once, sorted, rather
/// than being spread over the lower buckets.
const SORT_DUE: usize = 16;

/// Bits per digit of the radix heap's keys.
const DIGIT: u32 = 4;
/// Digits in a time (64 bits).
const LEVELS: usize = (64 / DIGIT) as usize;
/// Values of a digit.
const RADIX: usize = 1 << DIGIT;
/// Buckets: one per level and value of the digit there.
const BUCKETS: usize = LEVELS * RADIX;

/// The bucket of an event at `t`, later than `last`: the highest digit
/// (of [`DIGIT`] bits) in which `t` and `last` differ, and `t`'s value of
/// that digit. Bucket numbers grow with time: an event of a lower bucket is
/// earlier than every event of a higher one.
#[inline(always)]
fn bucket_of(t: u64, last: u64) -> usize {
    let level = (63 - (t ^ last).leading_zeros()) / DIGIT;
    (level as usize) * RADIX + ((t >> (level * DIGIT)) as usize & (RADIX - 1))
}

/// A deterministic future-event list for a clock that never goes back: a
/// radix heap keyed by time (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster
/// algorithms for the shortest path problem", JACM 37(2), 1990), its
/// buckets keyed by digits of [`DIGIT`] bits rather than single bits, with
/// ties served in scheduling order.
///
/// Every pending event is at or after `last`, the earliest time of the
/// latest refill. The events served next wait in `due`, sorted by time (ties
/// in scheduling order); an event later than all of them waits in bucket
/// [`bucket_of`]: the highest digit in which its time and `last` differ, and
/// its value there. Emptying a bucket onto `due` moves `last` within that
/// bucket, which leaves every other event in its bucket. While `due` holds
/// `ahead` events or fewer beyond the one served (none, unless
/// [`EventQueue::keep_due`] asked for more), the lowest non-empty bucket is
/// emptied onto its end: a few events (up to [`SORT_DUE`]) are sorted
/// there; more are spread, in their order, over `due` (those at their
/// earliest time, the new `last`) and lower buckets, at least one digit
/// lower. So a loop that asks for it sees a few events ahead
/// ([`EventQueue::peek_due`]) to prefetch for; keeping more events due costs
/// more insertions into `due`. An event pushed within the span of `due` is put
/// in its place there. Buckets are only appended to and read through, so the
/// queue's memory is touched in sequence, which keeps it fast with hundreds
/// of thousands of pending timers (a binary heap reads a cache line at
/// random per level); an event moves at most [`LEVELS`] times (with
/// single-bit digits, 64: at 100,000 flows that meant about 3 moves per
/// event served).
///
/// Ties stay in scheduling order: all events of one time are in one bucket
/// (the bucket is a function of the time and `last`), they enter it in
/// scheduling order or together from one higher bucket in their order there,
/// a bucket keeps the order in which events enter it, and the sort into
/// `due` is stable. Each bucket also knows its earliest event (the first of
/// its earliest time), so the next event can be looked at without moving
/// anything.
pub struct EventQueue<E> {
    last: u64,
    due: Vec<(u64, E)>,
    /// The next event of `due` to serve.
    head: usize,
    buckets: Box<[Vec<(u64, E)>; BUCKETS]>,
    /// Each bucket's earliest time (`u64::MAX` when empty) and the index of
    /// its first event of that time.
    first: Box<[(u64, u32); BUCKETS]>,
    /// Bit `b % 64` of word `b / 64` set when bucket `b` holds events.
    occupied: [u64; BUCKETS / 64],
    len: usize,
    /// Events kept due after the one served, when pending.
    ahead: usize,
    /// Events moved from one bucket to a lower one (tests count them).
    #[cfg(test)]
    moves: usize,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            last: 0,
            due: Vec::new(),
            head: 0,
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            first: Box::new([(u64::MAX, 0); BUCKETS]),
            occupied: [0; BUCKETS / 64],
            len: 0,
            ahead: 0,
            #[cfg(test)]
            moves: 0,
        }
    }

    /// From now on, keep `ahead` events due after the one each pop serves
    /// (when that many are pending), so that [`EventQueue::peek_due`] sees them.
    pub fn keep_due(&mut self, ahead: usize) {
        self.ahead = ahead;
    }

    /// Schedule `event` at `time`, which is not before the latest event
    /// served; ties are served in scheduling order.
    #[inline(always)]
    pub fn push(&mut self, time: Time, event: E) {
        let t = time.as_ns();
        // Not before the latest event served (which `last` may have passed
        // when more buckets were emptied onto `due`).
        debug_assert!(t >= self.last || (self.head > 0 && t >= self.due[self.head - 1].0), "an event scheduled in the past: {t}");
        self.len += 1;
        match self.due.last() {
            // Within the run of due events: in its place, after those of its time.
            Some(&(end, _)) if self.head < self.due.len() && t <= end => {
                let pos = self.head + self.due[self.head..].partition_point(|e| e.0 <= t);
                self.due.insert(pos, (t, event));
            }
            _ if t == self.last => self.due.push((t, event)),
            _ => self.put(t, event),
        }
    }

    /// Put an event after `last` into its bucket.
    #[inline(always)]
    fn put(&mut self, t: u64, event: E) {
        let b = bucket_of(t, self.last);
        let bucket = &mut self.buckets[b];
        if t < self.first[b].0 {
            self.first[b] = (t, bucket.len() as u32);
        }
        bucket.push((t, event));
        self.occupied[b / 64] |= 1 << (b % 64);
    }

    /// The lowest bucket holding events.
    #[inline(always)]
    fn lowest(&self) -> Option<usize> {
        self.occupied.iter().position(|&w| w != 0).map(|i| i * 64 + self.occupied[i].trailing_zeros() as usize)
    }

    /// Move the earliest pending events in the buckets to the end of `due`
    /// (they are later than every event there); false when the buckets are empty.
    #[inline(never)]
    fn refill(&mut self) -> bool {
        let Some(b) = self.lowest() else { return false };
        if self.head == self.due.len() {
            self.due.clear();
        } else {
            self.due.drain(..self.head);
        }
        self.head = 0;
        self.occupied[b / 64] &= !(1 << (b % 64));
        let mut from = std::mem::take(&mut self.buckets[b]);
        self.last = self.first[b].0;
        self.first[b] = (u64::MAX, 0);
        if from.len() <= SORT_DUE {
            // A few events: all of them become due, sorted by time (stably,
            // so those of one time stay in scheduling order). Every event
            // left in the buckets is later than all of them.
            let start = self.due.len();
            self.due.extend_from_slice(&from);
            // Insertion sort, moving the later events up one place each
            // rather than swapping (a bucket's events often come latest
            // first: case B sorts about six a refill, with some twelve
            // inversions).
            let new = &mut self.due[start..];
            for i in 1..new.len() {
                let x = new[i];
                let mut j = i;
                while j > 0 && new[j - 1].0 > x.0 {
                    new[j] = new[j - 1];
                    j -= 1;
                }
                new[j] = x;
            }
        } else {
            for &(t, e) in &from {
                if t == self.last {
                    self.due.push((t, e));
                } else {
                    #[cfg(test)]
                    {
                        self.moves += 1;
                    }
                    self.put(t, e);
                }
            }
        }
        from.clear();
        // Keep the emptied bucket's memory for its next events.
        self.buckets[b] = from;
        true
    }

    /// The earliest event and its time, if any.
    #[inline]
    fn next(&self) -> Option<&(u64, E)> {
        if let Some(e) = self.due.get(self.head) {
            return Some(e);
        }
        let b = self.lowest()?;
        Some(&self.buckets[b][self.first[b].1 as usize])
    }

    /// The earliest event, if any.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        self.next().map(|e| &e.1)
    }

    /// The `k`-th event after the earliest (`k` = 0 is the earliest), when
    /// it is already known to come next (it is due); otherwise `None`.
    #[inline]
    pub fn peek_due(&self, k: usize) -> Option<&E> {
        self.due.get(self.head + k).map(|e| &e.1)
    }

    /// The time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.next().map(|e| Time::from_ns(e.0))
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.due.len() - self.head <= self.ahead {
            // Refill until more than `ahead` events are due, or the buckets are empty.
            while self.refill() && self.due.len() - self.head <= self.ahead {}
            if self.head == self.due.len() {
                return None;
            }
        }
        let (t, e) = self.due[self.head];
        self.head += 1;
        self.len -= 1;
        Some((Time::from_ns(t), e))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn events_in_separate_buckets_are_due_a_few_ahead() {
        // Times 1, 2, 4, ... differ from 0 in a different bit each: one bucket each.
        let mut q = EventQueue::new();
        q.keep_due(3);
        for b in 0..8 {
            q.push(Time::from_ns(1 << b), b);
        }
        assert_eq!(q.peek_due(0), None, "nothing is due before the first pop");
        assert_eq!(q.pop(), Some((Time::from_ns(1), 0)));
        assert_eq!((0..5).map(|k| q.peek_due(k).copied()).collect::<Vec<_>>(), [Some(1), Some(2), Some(3), None, None]);
        for b in 1..8 {
            assert_eq!(q.pop(), Some((Time::from_ns(1 << b), b)));
        }
        assert_eq!((q.pop(), q.peek_due(0)), (None, None));
    }

    #[test]
    fn a_large_bucket_spreads_a_digit_at_a_time() {
        // 4,096 events at scattered times in [2^36, 2^37): one bucket at
        // first. Each move takes an event at least a digit (4 bits) lower,
        // and buckets of 16 events or fewer are sorted rather than spread:
        // 8,719 moves here (about 2 an event); with single-bit digits
        // (`DIGIT` = 1) the same events make 18,734 and fail the bound.
        let n = 4096u64;
        let mut q = EventQueue::new();
        let mut times: Vec<u64> = (0..n).map(|i| (1 << 36) + (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 28)).collect();
        for (i, &t) in times.iter().enumerate() {
            q.push(Time::from_ns(t), i);
        }
        times.sort();
        let got: Vec<u64> = std::iter::from_fn(|| q.pop()).map(|(t, _)| t.as_ns()).collect();
        assert_eq!(got, times);
        assert!(q.moves <= 3 * n as usize, "{} moves for {n} events", q.moves);
        assert!(q.moves >= n as usize, "{} moves for {n} events", q.moves);
    }

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

        /// Pushes interleaved with pops, as a simulation makes them: each
        /// push at or after the latest time served, sometimes at that very
        /// time; the queue serves exactly what a sort by (time, scheduling
        /// order) serves, and peeks agree with pops.
        #[test]
        fn interleaved_pushes_and_pops_match_a_sorted_reference(ops in prop::collection::vec((0u8..4, 0u64..1u64 << 40), 0..600), ahead in 0usize..5) {
            let mut q = EventQueue::new();
            q.keep_due(ahead);
            let mut reference = std::collections::BTreeMap::new();
            let (mut now, mut seq) = (0u64, 0usize);
            for (op, x) in ops {
                if op == 0 {
                    let want = reference.pop_first().map(|((t, _), i): ((u64, usize), usize)| (t, i));
                    prop_assert_eq!(q.peek_time().map(|t| t.as_ns()), want.map(|w| w.0));
                    prop_assert_eq!(q.peek().copied(), want.map(|w| w.1));
                    let got = q.pop().map(|(t, i)| (t.as_ns(), i));
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                    // The events due after it are the next ones, `ahead` of
                    // them when that many are pending.
                    let next: Vec<usize> = reference.values().copied().take(ahead).collect();
                    let due: Vec<usize> = (0..ahead).map_while(|k| q.peek_due(k).copied()).collect();
                    prop_assert_eq!(due, next);
                } else {
                    // Same instant, a near time, or a far one (a timer).
                    let t = match op { 1 => now, 2 => now + x % 4096, _ => now + x };
                    q.push(Time::from_ns(t), seq);
                    reference.insert((t, seq), seq);
                    seq += 1;
                }
                prop_assert_eq!(q.len(), reference.len());
            }
        }
    }
}
