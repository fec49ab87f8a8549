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
}

impl Default for RenoConfig {
    /// RFC 5681 section 3.1: ssthresh "SHOULD be set arbitrarily high"; an
    /// initial window of one segment (the classic Reno of ns-2's Agent/TCP);
    /// RFC 3465 section 2.3 permits L = 2 SMSS.
    fn default() -> Self {
        RenoConfig { mss: 1460, initial_window: 1460, initial_ssthresh: u64::MAX, abc_limit: 2, byte_counting: true }
    }
}

#[derive(Clone, Debug)]
pub struct Reno {
    cfg: RenoConfig,
    cwnd: u64,
    ssthresh: u64,
    bytes_acked: u64,
}

impl Reno {
    pub fn new(cfg: RenoConfig) -> Reno {
        Reno { cwnd: cfg.initial_window, ssthresh: cfg.initial_ssthresh, bytes_acked: 0, cfg }
    }

    /// RFC 5681 equation (4).
    fn halve(&mut self, flight: u64) {
        self.ssthresh = (flight / 2).max(2 * self.cfg.mss);
        self.bytes_acked = 0;
    }
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, _now: Time, acked: u64, _flight: u64) {
        if !self.cfg.byte_counting {
            let mss = self.cfg.mss;
            if self.cwnd < self.ssthresh {
                self.cwnd += mss;
            } else {
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
        self.cwnd = self.ssthresh;
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

    fn on_idle_restart(&mut self, _now: Time, restart_window: u64) {
        self.cwnd = self.cwnd.min(restart_window);
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
