//! The receiving side (in the manner of ns-2's TCPSink): cumulative ACKs, an
//! out-of-order buffer, and optional delayed ACKs (RFC 1122 section 4.2.3.2,
//! RFC 5681 section 4.2): ACK at least every second full segment, within the
//! delayed-ACK timeout, and at once for out-of-order data or data that fills
//! a hole. With SACK on, each ACK carries up to `sack_blocks` blocks
//! (RFC 2018 section 4): first the block holding the segment just received,
//! then the other blocks, most recently changed first.
//!
//! The advertised window is the configured maximum, or, with
//! `window_growth` (Linux 2.4's `tcp_select_initial_window` and
//! `tcp_grow_window`), starts at 4 segments and grows by 2 segments for each
//! data segment received, up to the maximum (the socket buffer).

use super::config::TcpConfig;
use crate::time::{Dur, Time};

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    pub data_pkts: u64,
    /// Payload bytes that had been received before (duplicates).
    pub dup_bytes: u64,
    pub acks_sent: u64,
}

pub struct Receiver {
    rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted and disjoint, all above
    /// `rcv_nxt`, each with the stamp of its latest change.
    ooo: Vec<(u64, u64, u64)>,
    stamp: u64,
    sack_blocks: usize,
    /// See [`TcpConfig::ns2_sack_bytes`].
    ns2_sack_bytes: bool,
    delayed: bool,
    delack_timeout: Dur,
    delack_segments: u32,
    /// Quick ACKs left (Linux's quick-ACK mode at the start).
    quick: u32,
    unacked_segments: u32,
    delack_deadline: Option<Time>,
    mss: u32,
    total: Option<u64>,
    done_at: Option<Time>,
    /// The window advertised on ACKs, bytes.
    window: u64,
    max_window: u64,
    growth: bool,
    pub stats: ReceiverStats,
}

impl Receiver {
    pub fn new(cfg: &TcpConfig, total: Option<u64>) -> Receiver {
        Receiver {
            rcv_nxt: 0,
            ooo: Vec::new(),
            stamp: 0,
            sack_blocks: if cfg.cc.uses_sack() { cfg.sack_blocks as usize } else { 0 },
            ns2_sack_bytes: cfg.ns2_sack_bytes,
            delayed: cfg.delayed_ack,
            delack_timeout: cfg.delack_timeout,
            delack_segments: cfg.delack_segments,
            quick: cfg.quickack,
            unacked_segments: 0,
            delack_deadline: None,
            mss: cfg.mss,
            total,
            done_at: None,
            window: cfg.initial_rwnd(),
            max_window: cfg.max_window,
            growth: cfg.window_growth,
            stats: ReceiverStats::default(),
        }
    }

    /// The window to advertise now, bytes.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Bytes delivered in order to the application: exactly `[0, delivered())`.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    /// The application expects `bytes` more on this connection (a persistent
    /// connection's next response): the transfer is not done until they arrive.
    pub fn extend(&mut self, bytes: u64) {
        self.total = self.total.map(|t| t + bytes);
        self.done_at = None;
    }

    /// The application now expects the bytes up to `end` (more than it did):
    /// the next reply pipelined on a persistent connection.
    pub fn extend_to(&mut self, end: u64) {
        debug_assert!(self.total.is_some_and(|t| t < end) && self.rcv_nxt < end);
        self.total = Some(end);
        self.done_at = None;
    }

    /// The cumulative ACK to carry on a data segment the client sends now (a
    /// message): it acknowledges everything, so a delayed ACK is no longer due.
    pub fn piggyback_ack(&mut self) -> u64 {
        self.ack_now()
    }

    /// When the last byte of the transfer was delivered.
    pub fn done_at(&self) -> Option<Time> {
        self.done_at
    }

    /// When the delayed-ACK timer expires, if running.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.delack_deadline
    }

    /// The delayed-ACK timer fired: returns the ACK to send, if any.
    pub fn on_timeout(&mut self, _now: Time) -> Option<u64> {
        self.delack_deadline = None;
        if self.unacked_segments > 0 {
            Some(self.ack_now())
        } else {
            None
        }
    }

    fn ack_now(&mut self) -> u64 {
        self.unacked_segments = 0;
        self.delack_deadline = None;
        self.stats.acks_sent += 1;
        self.rcv_nxt
    }

    /// A data segment arrived: returns the cumulative ACK to send now, if any.
    pub fn on_data(&mut self, now: Time, seq: u64, len: u32) -> Option<u64> {
        self.stats.data_pkts += 1;
        if self.growth {
            self.window = (self.window + 2 * u64::from(self.mss)).min(self.max_window);
        }
        let end = seq + u64::from(len);
        if end <= self.rcv_nxt {
            self.stats.dup_bytes += u64::from(len);
            return Some(self.ack_now());
        }
        if seq > self.rcv_nxt {
            self.insert_ooo(seq, end);
            return Some(self.ack_now());
        }
        self.stats.dup_bytes += self.rcv_nxt - seq;
        let filled_hole = !self.ooo.is_empty();
        self.rcv_nxt = end;
        // Merge buffered ranges that are now contiguous.
        let mut k = 0;
        while k < self.ooo.len() && self.ooo[k].0 <= self.rcv_nxt {
            let (s, e, _) = self.ooo[k];
            self.stats.dup_bytes += self.rcv_nxt.min(e) - s;
            self.rcv_nxt = self.rcv_nxt.max(e);
            k += 1;
        }
        self.ooo.drain(..k);
        if self.done_at.is_none() && self.total.is_some_and(|t| self.rcv_nxt >= t) {
            self.done_at = Some(now);
        }
        if !self.delayed || filled_hole || self.done_at == Some(now) {
            return Some(self.ack_now());
        }
        if self.quick > 0 {
            self.quick -= 1;
            return Some(self.ack_now());
        }
        if len >= self.mss {
            self.unacked_segments += 1;
        } else {
            self.unacked_segments = self.unacked_segments.max(1);
        }
        if self.unacked_segments >= self.delack_segments {
            Some(self.ack_now())
        } else {
            if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.delack_timeout);
            }
            None
        }
    }

    /// Insert [s, e) into the out-of-order ranges, counting overlap as duplicate.
    fn insert_ooo(&mut self, s: u64, e: u64) {
        self.stamp += 1;
        let i = self.ooo.partition_point(|r| r.1 < s);
        let mut ns = s;
        let mut ne = e;
        let mut j = i;
        let mut covered = 0;
        while j < self.ooo.len() && self.ooo[j].0 <= ne {
            let (rs, re, _) = self.ooo[j];
            covered += re.min(e).saturating_sub(rs.max(s));
            ns = ns.min(rs);
            ne = ne.max(re);
            j += 1;
        }
        self.stats.dup_bytes += covered;
        self.ooo.splice(i..j, std::iter::once((ns, ne, self.stamp)));
    }

    /// The bytes an ACK's SACK option with `n` blocks adds to its header: 2
    /// plus 8 per block (RFC 2018 section 3) after two NOPs, as stacks send it
    /// (the header ends on a 32-bit boundary, RFC 9293 section 3.1) and as
    /// captures render it; or 8 per block, as ns-2's Sack1 sink counts it
    /// (`Sacker::append_ack`). No option, no bytes.
    pub fn sack_option_bytes(&self, n: usize) -> u32 {
        match n {
            0 => 0,
            _ if self.ns2_sack_bytes => 8 * n as u32,
            _ => 4 + 8 * n as u32,
        }
    }

    /// The SACK blocks to send now, most recent first (RFC 2018 section 4).
    pub fn sack_blocks(&self, out: &mut [(u64, u64); 4]) -> usize {
        let n = self.sack_blocks.min(out.len()).min(self.ooo.len());
        if n == 0 {
            return 0;
        }
        // Pick the n most recently changed ranges, newest first.
        let mut picked = 0;
        let mut last_stamp = u64::MAX;
        while picked < n {
            let best = self.ooo.iter().filter(|r| r.2 < last_stamp).max_by_key(|r| r.2).expect("enough ranges");
            out[picked] = (best.0, best.1);
            last_stamp = best.2;
            picked += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rx(delayed: bool, total: u64) -> Receiver {
        Receiver::new(&TcpConfig { delayed_ack: delayed, ..Default::default() }, Some(total))
    }

    #[test]
    fn out_of_order_then_fill() {
        let mut r = rx(false, 4000);
        let t = Time::ZERO;
        assert_eq!(r.on_data(t, 0, 1000), Some(1000));
        assert_eq!(r.on_data(t, 2000, 1000), Some(1000));
        assert_eq!(r.on_data(t, 3000, 1000), Some(1000));
        assert_eq!(r.on_data(t, 1000, 1000), Some(4000));
        assert_eq!(r.done_at(), Some(t));
        assert_eq!(r.on_data(t, 1000, 1000), Some(4000));
        assert_eq!(r.stats.dup_bytes, 1000);
    }

    #[test]
    fn delayed_acks_every_second_segment_or_timeout() {
        let mut r = rx(true, 100_000);
        let t = Time::ZERO;
        assert_eq!(r.on_data(t, 0, 1460), None);
        assert_eq!(r.poll_timeout(), Some(t + Dur::from_ms(200)));
        assert_eq!(r.on_data(t, 1460, 1460), Some(2920));
        assert_eq!(r.poll_timeout(), None);
        assert_eq!(r.on_data(t, 2920, 1460), None);
        assert_eq!(r.on_timeout(t + Dur::from_ms(200)), Some(4380));
        // Out-of-order data is acknowledged at once.
        assert_eq!(r.on_data(t, 5840, 1460), Some(4380));
        // So is data that fills the hole.
        assert_eq!(r.on_data(t, 4380, 1460), Some(7300));
    }

    #[test]
    fn quick_acks_at_the_start_then_every_second_segment() {
        let cfg = TcpConfig { delayed_ack: true, quickack: 3, ..Default::default() };
        let mut r = Receiver::new(&cfg, Some(100_000));
        let t = Time::ZERO;
        // The first three segments are acknowledged one by one, at once.
        assert_eq!(r.on_data(t, 0, 1460), Some(1460));
        assert_eq!(r.on_data(t, 1460, 1460), Some(2920));
        assert_eq!(r.on_data(t, 2920, 1460), Some(4380));
        assert_eq!(r.poll_timeout(), None);
        // Then delayed ACKs: every second segment.
        assert_eq!(r.on_data(t, 4380, 1460), None);
        assert_eq!(r.on_data(t, 5840, 1460), Some(7300));
        assert_eq!(r.stats.acks_sent, 4);
    }

    #[test]
    fn a_sack_options_bytes_as_stacks_send_it_or_as_ns2_counts_it() {
        let cfg = TcpConfig { cc: crate::tcp::CcKind::Sack, ..Default::default() };
        let stack = Receiver::new(&cfg, None);
        let ns2 = Receiver::new(&TcpConfig { ns2_sack_bytes: true, ..cfg }, None);
        let sizes = |r: &Receiver| (0..=4).map(|n| r.sack_option_bytes(n)).collect::<Vec<_>>();
        assert_eq!(sizes(&stack), vec![0, 12, 20, 28, 36]);
        assert_eq!(sizes(&ns2), vec![0, 8, 16, 24, 32]);
    }

    #[test]
    fn sack_blocks_most_recent_first() {
        let cfg = TcpConfig { cc: crate::tcp::CcKind::Sack, ..Default::default() };
        let mut r = Receiver::new(&cfg, Some(100_000));
        let t = Time::ZERO;
        let mut b = [(0, 0); 4];
        r.on_data(t, 0, 100);
        r.on_data(t, 200, 100);
        r.on_data(t, 400, 100);
        r.on_data(t, 600, 100);
        assert_eq!(r.sack_blocks(&mut b), 3);
        assert_eq!(&b[..3], &[(600, 700), (400, 500), (200, 300)]);
        // Extending an older block makes it the first.
        r.on_data(t, 300, 100);
        assert_eq!(r.sack_blocks(&mut b), 2);
        assert_eq!(&b[..2], &[(200, 500), (600, 700)]);
        // No SACK for Reno.
        let mut reno = rx(false, 1000);
        reno.on_data(t, 200, 100);
        assert_eq!(reno.sack_blocks(&mut b), 0);
    }

    proptest! {
        /// Whatever the arrival order and duplication, every byte is delivered
        /// exactly once, in order.
        #[test]
        fn delivers_every_byte_once_in_order(order in prop::collection::vec(0usize..40, 1..200)) {
            let n = 40u64;
            let mut r = rx(false, n * 100);
            let mut seen = vec![false; n as usize];
            let mut last = 0;
            let mut received = 0u64;
            for &i in &order {
                let fresh = !seen[i];
                seen[i] = true;
                let before = r.delivered();
                r.on_data(Time::ZERO, i as u64 * 100, 100);
                received += 100;
                // Delivery only moves forward, to a segment boundary not beyond the first gap.
                prop_assert!(r.delivered() >= before);
                let first_gap = seen.iter().position(|s| !s).unwrap_or(n as usize) as u64 * 100;
                prop_assert_eq!(r.delivered(), first_gap);
                prop_assert!(r.delivered() >= last);
                last = r.delivered();
                let _ = fresh;
            }
            let unique = seen.iter().filter(|s| **s).count() as u64 * 100;
            prop_assert_eq!(received - r.stats.dup_bytes, unique);
        }
    }
}
