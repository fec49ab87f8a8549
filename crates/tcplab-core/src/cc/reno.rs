//! TCP Reno window management, RFC 5681 with appropriate byte counting (RFC 3465).
//!
//! Slow start (RFC 5681 section 3.1, RFC 3465 section 2.2): for each ACK,
//! `cwnd += min(N, L * SMSS)` where N is the number of newly acknowledged
//! bytes and L the byte-counting limit.
//!
//! Congestion avoidance is byte-counted (RFC 3465 section 2.1, the method
//! RFC 5681 section 3.1 calls "more accurate"): acknowledged bytes accumulate
//! in `bytes_acked`, and each time they reach `cwnd` the window grows by one
//! SMSS. Why bytes rather than ACKs: the growth is exactly one segment per
//! round trip whether the receiver ACKs every segment or every second one,
//! and a receiver cannot inflate it by splitting ACKs. With one ACK per
//! segment the result is the same as the classic `cwnd += SMSS*SMSS/cwnd`.
//!
//! On loss inferred from three duplicate ACKs (RFC 5681 section 3.2, eq. 4):
//! `ssthresh = max(FlightSize / 2, 2 * SMSS)` and `cwnd = ssthresh` (the
//! sender adds the fast-recovery inflation of 3 SMSS on top). On a
//! retransmission timeout (section 3.1, eq. 4 and the loss window): the same
//! ssthresh and `cwnd = 1 SMSS`.

use super::CongestionControl;
use crate::time::Time;

#[derive(Clone, Debug)]
pub struct RenoConfig {
    /// Sender maximum segment size, bytes.
    pub mss: u64,
    /// Initial window, bytes.
    pub initial_window: u64,
    /// Initial slow-start threshold, bytes (`u64::MAX`: unlimited).
    pub initial_ssthresh: u64,
    /// Byte-counting limit L in slow start, in segments.
    pub abc_limit: u64,
    /// Count bytes (RFC 3465). Without it, as in RFC 2581 and ns-2, every
    /// ACK of new data counts as one segment, however much it acknowledges:
    /// slow start adds one SMSS per ACK, congestion avoidance SMSS*SMSS/cwnd.
    pub byte_counting: bool,
    /// Without byte counting, keep the fraction of a byte each
    /// congestion-avoidance increment leaves (ns-2's `cwnd_` is a double).
    pub keep_fraction: bool,
    /// A congestion event halves the window it is given, ssthresh in whole
    /// segments and cwnd with its fraction (ns-2's `slowdown` with
    /// `precision_reduce_`), instead of RFC 5681's flight.
    pub halve_window: bool,
}

impl Default for RenoConfig {
    /// RFC 5681 section 3.1: ssthresh "SHOULD be set arbitrarily high"; an
    /// initial window of one segment (the classic Reno of ns-2's Agent/TCP);
    /// RFC 3465 section 2.3 permits L = 2 SMSS.
    fn default() -> Self {
        RenoConfig {
            mss: 1460,
            initial_window: 1460,
            initial_ssthresh: u64::MAX,
            abc_limit: 2,
            byte_counting: true,
            keep_fraction: false,
            halve_window: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Reno {
    cfg: RenoConfig,
    cwnd: u64,
    ssthresh: u64,
    /// Acknowledged bytes toward the next segment of growth (byte counting),
    /// or, with `keep_fraction`, the fraction of a byte of cwnd in units of
    /// 2^-32 bytes.
    bytes_acked: u64,
}

impl Reno {
    pub fn new(cfg: RenoConfig) -> Reno {
        Reno { cwnd: cfg.initial_window, ssthresh: cfg.initial_ssthresh, bytes_acked: 0, cfg }
    }

    /// RFC 5681 equation (4); with `halve_window`, in whole segments, as
    /// ns-2's `slowdown` sets ssthresh_ = int(halfwin).
    fn halve(&mut self, flight: u64) {
        let half = if self.cfg.halve_window { flight / 2 / self.cfg.mss * self.cfg.mss } else { flight / 2 };
        self.ssthresh = half.max(2 * self.cfg.mss);
        self.bytes_acked = 0;
    }
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, _now: Time, acked: u64, _flight: u64) {
        if !self.cfg.byte_counting {
            let mss = self.cfg.mss;
            if self.cwnd < self.ssthresh {
                self.cwnd += mss;
            } else if self.cfg.keep_fraction {
                // ns-2 `opencwnd`: cwnd_ += 1 / cwnd_ segments, that is
                // SMSS*SMSS / cwnd bytes with cwnd's fraction of a byte, in
                // fixed point (2^-32 bytes; exact integers, no rounding drift).
                let fixed = (u128::from(self.cwnd) << 32) + u128::from(self.bytes_acked);
                let total = (u128::from(mss * mss) << 64) / fixed + u128::from(self.bytes_acked);
                self.cwnd += (total >> 32) as u64;
                self.bytes_acked = (total & 0xffff_ffff) as u64;
            } else {
                // RFC 5681 equation (3), in whole bytes, at least one.
                self.cwnd += (mss * mss / self.cwnd).max(1);
            }
            return;
        }
        if self.cwnd < self.ssthresh {
            // Slow start: cwnd += min(N, L*SMSS), RFC 3465 section 2.2.
            self.cwnd += acked.min(self.cfg.abc_limit * self.cfg.mss);
        } else {
            // Congestion avoidance: one SMSS per cwnd of acknowledged bytes.
            self.bytes_acked += acked;
            if self.bytes_acked >= self.cwnd {
                self.bytes_acked -= self.cwnd;
                self.cwnd += self.cfg.mss;
            }
        }
    }

    fn on_congestion_event(&mut self, _now: Time, flight: u64) {
        self.halve(flight);
        self.cwnd = if self.cfg.halve_window {
            // ns-2 tcp.cc `slowdown` with `precision_reduce_`: cwnd_ =
            // halfwin = windowd() / 2, fraction and all (the sender passes
            // the window, not the flight).
            (flight / 2).max(self.cfg.mss)
        } else {
            self.ssthresh
        };
    }

    fn on_timeout(&mut self, _now: Time, basis: Option<u64>) {
        match basis {
            Some(w) => self.halve(w),
            None => self.bytes_acked = 0,
        }
        // The loss window, RFC 5681 section 3.1.
        self.cwnd = self.cfg.mss;
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn cap_window(&mut self, _now: Time, cap: u64) {
        self.cwnd = self.cwnd.min(cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: u64 = 1460;

    #[test]
    fn slow_start_doubles_per_round() {
        let mut r = Reno::new(RenoConfig { initial_window: 2 * MSS, ..Default::default() });
        // One round: one ACK per segment of the window.
        for _ in 0..2 {
            r.on_ack(Time::ZERO, MSS, 0);
        }
        assert_eq!(r.window(), 4 * MSS);
        // A delayed ACK covering two segments still counts both (L = 2).
        r.on_ack(Time::ZERO, 2 * MSS, 0);
        assert_eq!(r.window(), 6 * MSS);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        let mut r = Reno::new(RenoConfig { initial_window: 10 * MSS, initial_ssthresh: 10 * MSS, ..Default::default() });
        for _ in 0..9 {
            r.on_ack(Time::ZERO, MSS, 0);
        }
        assert_eq!(r.window(), 10 * MSS);
        r.on_ack(Time::ZERO, MSS, 0);
        assert_eq!(r.window(), 11 * MSS);
        // Same growth with ACKs of two segments.
        for _ in 0..5 {
            r.on_ack(Time::ZERO, 2 * MSS, 0);
        }
        assert_eq!(r.window(), 11 * MSS);
        r.on_ack(Time::ZERO, MSS, 0);
        assert_eq!(r.window(), 12 * MSS);
    }

    #[test]
    fn packet_counting_counts_acks_not_bytes() {
        let mut r = Reno::new(RenoConfig { byte_counting: false, ..Default::default() });
        // An ACK of a 1000-byte segment still adds a whole segment in slow start.
        r.on_ack(Time::ZERO, 1000, 0);
        assert_eq!(r.window(), 2 * MSS);
        let mut r = Reno::new(RenoConfig { byte_counting: true, ..Default::default() });
        r.on_ack(Time::ZERO, 1000, 0);
        assert_eq!(r.window(), MSS + 1000);
    }

    #[test]
    fn ns2_growth_keeps_the_fraction_of_ns2s_double_cwnd() {
        // ns-2's `opencwnd`: cwnd_ += 1 / cwnd_ segments, a double. From 10
        // segments of 1000 bytes, the window in bytes follows it exactly; whole
        // bytes (RFC 5681 equation 3) reach 14 segments an ACK later (the
        // 49th, not the 48th) and after 200 ACKs trail by 73 bytes.
        const SEG: u64 = 1000;
        let cfg = RenoConfig {
            mss: SEG,
            initial_window: 10 * SEG,
            initial_ssthresh: 10 * SEG,
            byte_counting: false,
            keep_fraction: true,
            ..Default::default()
        };
        let mut ns2 = Reno::new(cfg.clone());
        let mut rfc = Reno::new(RenoConfig { keep_fraction: false, ..cfg });
        let mut w = 10.0f64;
        let (mut ns2_14, mut rfc_14) = (None, None);
        for i in 1..=200 {
            ns2.on_ack(Time::ZERO, SEG, 0);
            rfc.on_ack(Time::ZERO, SEG, 0);
            w += 1.0 / w;
            assert_eq!(ns2.window(), (w * SEG as f64) as u64, "ACK {i}");
            ns2_14 = ns2_14.or((ns2.window() >= 14 * SEG).then_some(i));
            rfc_14 = rfc_14.or((rfc.window() >= 14 * SEG).then_some(i));
        }
        assert_eq!((ns2_14, rfc_14), (Some(48), Some(49)));
        assert_eq!((ns2.window(), rfc.window()), (22_378, 22_305));
    }

    #[test]
    fn ns2_halving_keeps_the_halfs_fraction_and_takes_ssthresh_in_whole_segments() {
        // ns-2's `slowdown` (precision_reduce_): cwnd_ 10.867 -> ssthresh_ 5, cwnd_ 5.433.
        const SEG: u64 = 1000;
        let cfg = RenoConfig { mss: SEG, initial_window: 10_867, halve_window: true, ..Default::default() };
        let mut r = Reno::new(cfg.clone());
        r.on_congestion_event(Time::ZERO, 10_867);
        assert_eq!((r.window(), r.ssthresh()), (5_433, 5 * SEG));
        // RFC 5681: ssthresh = cwnd = half of what is given.
        let mut r = Reno::new(RenoConfig { halve_window: false, ..cfg.clone() });
        r.on_congestion_event(Time::ZERO, 10_867);
        assert_eq!((r.window(), r.ssthresh()), (5_433, 5_433));
        // A timeout's ssthresh is in whole segments too, at least two.
        let mut r = Reno::new(cfg);
        r.on_timeout(Time::ZERO, Some(7_999));
        assert_eq!((r.window(), r.ssthresh()), (SEG, 3 * SEG));
        r.on_timeout(Time::ZERO, Some(3_000));
        assert_eq!(r.ssthresh(), 2 * SEG);
    }

    #[test]
    fn loss_responses() {
        let mut r = Reno::new(RenoConfig { initial_window: 20 * MSS, ..Default::default() });
        r.on_congestion_event(Time::ZERO, 20 * MSS);
        assert_eq!((r.window(), r.ssthresh()), (10 * MSS, 10 * MSS));
        r.on_timeout(Time::ZERO, Some(10 * MSS));
        assert_eq!((r.window(), r.ssthresh()), (MSS, 5 * MSS));
        // ssthresh never below two segments.
        r.on_timeout(Time::ZERO, Some(MSS));
        assert_eq!(r.ssthresh(), 2 * MSS);
    }
}
