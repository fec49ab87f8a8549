//! Queue disciplines: the admission decision made when a packet reaches a link.

use crate::engine::rng::RngStream;
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// A queue limit, in packets or in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

/// The occupancy a discipline sees: packets waiting for the transmitter,
/// not counting the one being transmitted.
#[derive(Copy, Clone, Debug)]
pub struct Occupancy {
    pub packets: u64,
    pub bytes: u64,
    /// When the queue last became empty (valid when `packets == 0`).
    pub empty_since: Time,
    /// Whether the transmitter is busy (the packet would wait).
    pub busy: bool,
}

/// Tail drop: refuse a packet that would push the queue past its limit.
#[derive(Clone, Debug)]
pub struct DropTail {
    pub limit: Limit,
}

impl DropTail {
    pub fn admit(&self, q: Occupancy, pkt_bytes: u64) -> bool {
        if !q.busy {
            return true;
        }
        match self.limit {
            Limit::Packets(n) => q.packets < n,
            Limit::Bytes(b) => q.bytes + pkt_bytes <= b,
        }
    }
}

/// Random Early Detection (Floyd and Jacobson, 1993), as in ns-2's RED.
///
/// On every arrival the average queue is updated: `avg <- (1 - w_q) avg +
/// w_q q`, or, after the queue has been empty for a time `idle`, `avg <-
/// (1 - w_q)^m avg` with `m = idle / s`, `s` the transmission time of a
/// packet of `mean_pkt_bytes` (section 11 of the paper). Between the
/// thresholds an arriving packet is dropped with probability
/// `p_a = p_b / (1 - count p_b)`, `p_b = max_p (avg - min_th) / (max_th -
/// min_th)` (scaled by size / mean_pkt_bytes in byte mode), `count` the
/// packets since the last drop. With `gentle`, `p_b` rises from max_p to 1
/// between max_th and 2 max_th (Floyd 2000) instead of jumping to 1. Above,
/// every packet is dropped, and the hard `limit` always applies.
#[derive(Clone, Debug)]
pub struct RedConfig {
    /// Thresholds, in packets (or bytes in byte mode).
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    /// Thresholds and average in bytes instead of packets.
    pub byte_mode: bool,
    pub mean_pkt_bytes: u64,
    /// The physical queue limit.
    pub limit: Limit,
}

impl Default for RedConfig {
    /// ns-2's defaults: thresh_ 5, maxthresh_ 15, linterm_ 10 (max_p 0.1),
    /// q_weight_ 0.002, gentle_ true, mean_pktsize_ 500 bytes, packet mode.
    fn default() -> Self {
        RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, w_q: 0.002, gentle: true, byte_mode: false, mean_pkt_bytes: 500, limit: Limit::Packets(25) }
    }
}

#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedConfig,
    /// Transmission time of a mean-sized packet, seconds.
    s: f64,
    avg: f64,
    count: i64,
    rng: RngStream,
    pub early_drops: u64,
    pub forced_drops: u64,
}

impl Red {
    pub fn new(cfg: RedConfig, rate_bps: u64, rng: RngStream) -> Red {
        let s = cfg.mean_pkt_bytes as f64 * 8.0 / rate_bps as f64;
        Red { cfg, s, avg: 0.0, count: -1, rng, early_drops: 0, forced_drops: 0 }
    }

    pub fn avg(&self) -> f64 {
        self.avg
    }

    pub fn admit(&mut self, now: Time, q: Occupancy, pkt_bytes: u64) -> bool {
        let c = &self.cfg;
        let qlen = if c.byte_mode { q.bytes as f64 } else { q.packets as f64 };
        if q.packets == 0 && q.empty_since < now {
            let m = now.saturating_since(q.empty_since).as_secs_f64() / self.s;
            self.avg *= (1.0 - c.w_q).powf(m);
        } else {
            self.avg = (1.0 - c.w_q) * self.avg + c.w_q * qlen;
        }
        let over_limit = q.busy
            && match c.limit {
                Limit::Packets(n) => q.packets >= n,
                Limit::Bytes(b) => q.bytes + pkt_bytes > b,
            };
        if over_limit {
            self.forced_drops += 1;
            self.count = 0;
            return false;
        }
        if self.avg < c.min_th || q.packets < 1 {
            self.count = -1;
            return true;
        }
        let top = if c.gentle { 2.0 * c.max_th } else { c.max_th };
        if self.avg >= top {
            self.forced_drops += 1;
            self.count = 0;
            return false;
        }
        self.count += 1;
        let mut pb = if self.avg < c.max_th {
            c.max_p * (self.avg - c.min_th) / (c.max_th - c.min_th)
        } else {
            c.max_p + (1.0 - c.max_p) * (self.avg - c.max_th) / c.max_th
        };
        if c.byte_mode {
            pb *= pkt_bytes as f64 / c.mean_pkt_bytes as f64;
        }
        let cp = self.count as f64 * pb;
        let pa = if cp < 1.0 { pb / (1.0 - cp) } else { 1.0 };
        if self.rng.uniform01() < pa {
            self.early_drops += 1;
            self.count = 0;
            return false;
        }
        true
    }
}

/// Every queue discipline, dispatched by `match` on the per-packet path.
#[derive(Clone, Debug)]
pub enum QueueDisc {
    DropTail(DropTail),
    Red(Box<Red>),
}

impl QueueDisc {
    #[inline]
    pub fn admit(&mut self, now: Time, q: Occupancy, pkt_bytes: u64) -> bool {
        match self {
            QueueDisc::DropTail(d) => d.admit(q, pkt_bytes),
            QueueDisc::Red(r) => r.admit(now, q, pkt_bytes),
        }
    }

    /// The hard limit on waiting packets or bytes.
    pub fn limit(&self) -> Limit {
        match self {
            QueueDisc::DropTail(d) => d.limit,
            QueueDisc::Red(r) => r.cfg.limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occ(packets: u64, bytes: u64) -> Occupancy {
        Occupancy { packets, bytes, empty_since: Time::ZERO, busy: true }
    }

    #[test]
    fn droptail_packet_and_byte_limits() {
        let d = DropTail { limit: Limit::Packets(2) };
        assert!(d.admit(occ(1, 1500), 1500));
        assert!(!d.admit(occ(2, 3000), 40));
        let b = DropTail { limit: Limit::Bytes(3000) };
        assert!(b.admit(occ(1, 1500), 1500));
        assert!(!b.admit(occ(1, 1500), 1501));
    }

    fn red(cfg: RedConfig) -> Red {
        Red::new(cfg, 1_500_000, RngStream::new(1, "red"))
    }

    #[test]
    fn red_average_follows_the_ewma_and_decays_when_idle() {
        let mut r = red(RedConfig { w_q: 0.5, min_th: 100.0, max_th: 200.0, limit: Limit::Packets(1000), ..Default::default() });
        let t = Time::from_ns(1_000_000);
        r.admit(t, occ(4, 0), 1500);
        assert!((r.avg() - 2.0).abs() < 1e-12);
        r.admit(t, occ(8, 0), 1500);
        assert!((r.avg() - 5.0).abs() < 1e-12);
        // Empty for 10 mean-packet times (500 bytes at 1.5 Mb/s: 2.667 ms each).
        let idle = Occupancy { packets: 0, bytes: 0, empty_since: t, busy: false };
        r.admit(t + crate::time::Dur::from_ns(26_666_667), idle, 1500);
        assert!((r.avg() - 5.0 * 0.5f64.powi(10)).abs() < 1e-6);
    }

    #[test]
    fn red_drop_probability_matches_the_formula() {
        // Hold the average at the middle of the thresholds: p_b = max_p / 2.
        let cfg = RedConfig { w_q: 1.0, min_th: 5.0, max_th: 15.0, max_p: 0.1, gentle: false, limit: Limit::Packets(1000), ..Default::default() };
        let mut r = red(cfg);
        let n = 200_000;
        let mut drops = 0;
        for _ in 0..n {
            if !r.admit(Time::from_ns(1), occ(10, 0), 1500) {
                drops += 1;
            }
        }
        // With count-based spacing (count counted before the test), the gap
        // between drops is uniform on 1..1/p_b - 1 (Floyd and Jacobson,
        // section 7): one drop per 1/(2 p_b) packets.
        let pb: f64 = 0.05;
        let expected = n as f64 * 2.0 * pb;
        assert!((drops as f64 - expected).abs() < 0.03 * expected, "{drops} vs {expected}");
        // Above max_th without gentle: every packet.
        assert!(!r.admit(Time::from_ns(1), occ(16, 0), 1500));
        // Gentle: between max_th and 2 max_th the probability rises from max_p to 1.
        let mut g = red(RedConfig { w_q: 1.0, gentle: true, limit: Limit::Packets(1000), ..Default::default() });
        assert!(g.admit(Time::from_ns(1), occ(3, 0), 1500), "below min_th");
        assert!(!g.admit(Time::from_ns(1), occ(30, 0), 1500), "at 2 max_th");
    }

    #[test]
    fn red_hard_limit() {
        let mut r = red(RedConfig { limit: Limit::Packets(3), ..Default::default() });
        assert!(!r.admit(Time::from_ns(1), occ(3, 0), 1500));
        assert_eq!(r.forced_drops, 1);
    }
}
