//! The sending side of a one-way TCP transfer (in the manner of ns-2's
//! Agent/TCP): byte sequence numbers, a congestion controller behind
//! [`CongestionControl`], fast retransmit and fast recovery (RFC 5681
//! section 3.2), and the retransmission timer (RFC 6298).
//!
//! The sender needs no engine: every call takes `now` and appends the
//! segments to transmit to `out`; [`Sender::poll_timeout`] tells when it next
//! wants [`Sender::on_timeout`] to be called.

use super::config::TcpConfig;
use super::rtt::RttEstimator;
use crate::cc::{AnyCc, CongestionControl, Recovery};
use crate::time::Time;

/// A segment the sender wants transmitted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub retx: bool,
}

#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    /// Data packets transmitted, retransmissions included.
    pub data_pkts: u64,
    /// Retransmitted data packets.
    pub retx_pkts: u64,
    /// Retransmission timer expirations.
    pub timeouts: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retx: u64,
    /// Duplicate ACKs received.
    pub dupacks: u64,
}

pub struct Sender {
    mss: u64,
    max_window: u64,
    dupthresh: u32,
    max_backoff: u32,
    /// One past the last byte to send (`u64::MAX` when unbounded).
    end: u64,
    pub cc: AnyCc,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    dupacks: u32,
    in_recovery: bool,
    /// Highest sequence sent when the last recovery started (RFC 6582 "recover").
    recover: Option<u64>,
    /// Fast-recovery window inflation, bytes.
    inflation: u64,
    pub rtt: RttEstimator,
    /// The segment being timed: (end sequence, send time). Karn's rule clears it on retransmission.
    timed: Option<(u64, Time)>,
    backoff: u32,
    rto_deadline: Option<Time>,
    pub stats: SenderStats,
}

impl Sender {
    /// A sender of `size` bytes (`None`: unbounded).
    pub fn new(cfg: &TcpConfig, size: Option<u64>) -> Sender {
        Sender {
            mss: u64::from(cfg.mss),
            max_window: cfg.max_window,
            dupthresh: cfg.dupack_threshold,
            max_backoff: cfg.max_backoff,
            end: size.unwrap_or(u64::MAX),
            cc: cfg.make_cc(),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            inflation: 0,
            rtt: RttEstimator::new(cfg.rtt.clone()),
            timed: None,
            backoff: 0,
            rto_deadline: None,
            stats: SenderStats::default(),
        }
    }

    /// Bytes sent and not yet cumulatively acknowledged.
    pub fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// Everything was sent and acknowledged.
    pub fn is_done(&self) -> bool {
        self.snd_una >= self.end
    }

    /// The usable window: congestion window plus recovery inflation, capped
    /// by the receiver's window.
    pub fn window(&self) -> u64 {
        (self.cc.window() + self.inflation).min(self.max_window)
    }

    /// When the retransmission timer expires, if it is running.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.rto_deadline
    }

    /// Open the transfer: send the initial window.
    pub fn start(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.send_window(now, out);
    }

    fn restart_timer(&mut self, now: Time) {
        self.rto_deadline = Some(now + self.rtt.backed_off(self.backoff));
    }

    fn emit(&mut self, now: Time, seq: u64, out: &mut Vec<Segment>) {
        let len = self.mss.min(self.end - seq) as u32;
        let retx = seq < self.snd_max;
        self.stats.data_pkts += 1;
        if retx {
            self.stats.retx_pkts += 1;
            // Karn's rule: an ACK covering retransmitted data gives no sample.
            if matches!(self.timed, Some((e, _)) if seq < e) {
                self.timed = None;
            }
        } else if self.timed.is_none() {
            self.timed = Some((seq + u64::from(len), now));
        }
        out.push(Segment { seq, len, retx });
    }

    /// Send as much as the window allows.
    fn send_window(&mut self, now: Time, out: &mut Vec<Segment>) {
        let wnd = self.window();
        while self.snd_nxt < self.end {
            let len = self.mss.min(self.end - self.snd_nxt);
            if self.snd_nxt + len - self.snd_una > wnd {
                break;
            }
            self.emit(now, self.snd_nxt, out);
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
        // RFC 6298 (5.1): start the timer when data is outstanding.
        if self.rto_deadline.is_none() && self.snd_max > self.snd_una {
            self.restart_timer(now);
        }
    }

    /// A cumulative acknowledgement `ack` (the next byte the receiver expects).
    pub fn on_ack(&mut self, now: Time, ack: u64, out: &mut Vec<Segment>) {
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            let flight = self.flight();
            if let Some((e, t0)) = self.timed {
                if ack >= e {
                    self.rtt.sample(now - t0);
                    self.timed = None;
                    self.backoff = 0;
                }
            }
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.dupacks = 0;
            let mut partial = false;
            if self.in_recovery {
                partial = self.cc.recovery() == Recovery::NewReno && self.recover.is_some_and(|r| ack < r);
                if partial {
                    // RFC 6582 section 3.2, step 3 (partial ACK): retransmit the
                    // first unacknowledged segment, deflate the window by the
                    // amount acknowledged and add back one SMSS (never below
                    // ssthresh here), and stay in recovery.
                    self.inflation = (self.inflation + self.mss).saturating_sub(acked);
                } else {
                    // Reno leaves fast recovery on the first new ACK, NewReno on
                    // the full ACK; both deflate the window to ssthresh
                    // (RFC 5681 section 3.2 step 6, RFC 6582 step 3 full ACK).
                    self.in_recovery = false;
                    self.inflation = 0;
                    self.cc.on_recovery_exit(now);
                }
            } else {
                self.cc.on_ack(now, acked, flight);
            }
            if partial {
                self.emit(now, self.snd_una, out);
            }
            if self.snd_una >= self.snd_max {
                // RFC 6298 (5.2): all outstanding data acknowledged.
                self.rto_deadline = None;
            } else {
                // RFC 6298 (5.3): restart on an ACK of new data.
                self.restart_timer(now);
            }
            self.send_window(now, out);
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.stats.dupacks += 1;
            self.dupacks += 1;
            if self.in_recovery {
                // RFC 5681 section 3.2, step 4: inflate by one segment.
                self.inflation += self.mss;
                self.send_window(now, out);
            } else if self.dupacks == self.dupthresh && self.recover.is_none_or(|r| self.snd_una > r) {
                // Fast retransmit (steps 2-3). A new recovery starts only when the
                // ACK has passed the previous one's `recover` point, as in ns-2's
                // Reno with bug_fix_, so one window's losses are not halved twice.
                self.stats.fast_retx += 1;
                self.recover = Some(self.snd_max);
                self.cc.on_congestion_event(now, self.flight());
                if self.cc.recovery() == Recovery::None {
                    // Tahoe: no fast recovery; resend from the first
                    // unacknowledged segment in slow start.
                    self.timed = None;
                    self.snd_nxt = self.snd_una;
                    self.restart_timer(now);
                    self.send_window(now, out);
                    return;
                }
                self.inflation = u64::from(self.dupthresh) * self.mss;
                self.in_recovery = true;
                self.emit(now, self.snd_una, out);
                self.restart_timer(now);
                self.send_window(now, out);
            }
        }
    }

    /// The retransmission timer fired; the caller checks `now >= poll_timeout()`.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        debug_assert!(self.rto_deadline.is_some_and(|d| d <= now));
        self.rto_deadline = None;
        if self.snd_una >= self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        self.cc.on_timeout(now, self.flight());
        self.in_recovery = false;
        self.inflation = 0;
        self.dupacks = 0;
        self.recover = Some(self.snd_max);
        self.timed = None;
        // RFC 6298 (5.5): back off; (5.4) retransmit from the first unacknowledged byte.
        self.backoff = (self.backoff + 1).min(self.max_backoff);
        self.snd_nxt = self.snd_una;
        self.restart_timer(now);
        self.send_window(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::CcKind;
    use crate::time::Dur;

    const MSS: u64 = 1460;

    fn sender(iw: u32, size: u64) -> Sender {
        Sender::new(&TcpConfig { iw, ..Default::default() }, Some(size))
    }

    #[test]
    fn sends_initial_window_and_last_partial_segment() {
        let mut s = sender(4, 3 * MSS + 100);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        let seqs: Vec<(u64, u32)> = out.iter().map(|g| (g.seq, g.len)).collect();
        assert_eq!(seqs, vec![(0, 1460), (1460, 1460), (2920, 1460), (4380, 100)]);
        assert_eq!(s.poll_timeout(), Some(Time::ZERO + Dur::from_secs(1)));
    }

    #[test]
    fn three_dupacks_fast_retransmit_then_deflate() {
        let mut s = sender(10, 100 * MSS);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10);
        let t = Time::from_ns(100_000_000);
        out.clear();
        // Segment 0 is lost: nine duplicate ACKs for byte 0.
        s.on_ack(t, 0, &mut out);
        s.on_ack(t, 0, &mut out);
        assert!(out.is_empty());
        s.on_ack(t, 0, &mut out);
        assert_eq!(out, vec![Segment { seq: 0, len: 1460, retx: true }]);
        // ssthresh = 10/2 = 5 segments, window = 5 + 3 = 8 < flight 10.
        assert_eq!(s.cc.ssthresh(), 5 * MSS);
        out.clear();
        for _ in 0..6 {
            s.on_ack(t, 0, &mut out);
        }
        // Window 8 + 6 = 14 segments: four new ones go out.
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|g| !g.retx));
        out.clear();
        s.on_ack(t, 10 * MSS, &mut out);
        assert_eq!(s.window(), 5 * MSS);
        assert_eq!((s.stats.fast_retx, s.stats.retx_pkts, s.stats.timeouts), (1, 1, 0));
    }

    /// A window of ten segments in which segments 0 and 3 are lost: the
    /// receiver answers segments 1, 2 and 4..9 with duplicate ACKs for byte 0.
    fn two_losses(cc: CcKind) -> (Sender, Vec<Segment>) {
        let mut s = Sender::new(&TcpConfig { iw: 10, cc, ..Default::default() }, Some(100 * MSS));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        out.clear();
        let t = Time::from_ns(100_000_000);
        for _ in 0..8 {
            s.on_ack(t, 0, &mut out);
        }
        (s, out)
    }

    #[test]
    fn newreno_retransmits_on_a_partial_ack_and_stays_in_recovery() {
        let (mut s, out) = two_losses(CcKind::NewReno);
        assert_eq!(out[0], Segment { seq: 0, len: 1460, retx: true });
        let t = Time::from_ns(200_000_000);
        let mut out = Vec::new();
        // The retransmitted segment 0 fills the first hole: ACK up to segment 3.
        s.on_ack(t, 3 * MSS, &mut out);
        assert_eq!(out[0], Segment { seq: 3 * MSS, len: 1460, retx: true }, "partial ACK retransmits at once");
        assert_eq!((s.stats.fast_retx, s.stats.timeouts), (1, 0));
        // The full ACK (everything sent before recovery) ends recovery at ssthresh.
        out.clear();
        s.on_ack(t, 10 * MSS, &mut out);
        assert_eq!(s.window(), 5 * MSS);
        assert_eq!(s.stats.retx_pkts, 2);
    }

    #[test]
    fn reno_leaves_recovery_on_a_partial_ack() {
        let (mut s, _) = two_losses(CcKind::Reno);
        let mut out = Vec::new();
        s.on_ack(Time::from_ns(200_000_000), 3 * MSS, &mut out);
        assert!(out.iter().all(|g| !g.retx), "Reno does not retransmit on a partial ACK");
        assert_eq!(s.cc.window(), 5 * MSS);
        // Further duplicate ACKs for segment 3 do not start a second recovery
        // before the recover point is passed: the timer must repair it.
        for _ in 0..5 {
            s.on_ack(Time::from_ns(210_000_000), 3 * MSS, &mut out);
        }
        assert_eq!(s.stats.fast_retx, 1);
    }

    #[test]
    fn tahoe_restarts_slow_start_after_fast_retransmit() {
        let (s, out) = two_losses(CcKind::Tahoe);
        assert_eq!(out, vec![Segment { seq: 0, len: 1460, retx: true }], "one segment, then wait");
        assert_eq!((s.cc.window(), s.cc.ssthresh()), (MSS, 5 * MSS));
        assert_eq!(s.stats.fast_retx, 1);
    }

    #[test]
    fn timeout_goes_back_to_one_segment_and_backs_off() {
        let mut s = sender(4, 100 * MSS);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        out.clear();
        let t1 = s.poll_timeout().unwrap();
        s.on_timeout(t1, &mut out);
        assert_eq!(out, vec![Segment { seq: 0, len: 1460, retx: true }]);
        assert_eq!(s.cc.window(), MSS);
        assert_eq!(s.poll_timeout(), Some(t1 + Dur::from_secs(2)));
        out.clear();
        // The ACK of the retransmission gives no RTT sample (Karn) and opens the window.
        s.on_ack(t1 + Dur::from_ms(100), MSS, &mut out);
        assert_eq!(s.rtt.samples(), 0);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|g| g.retx), "go-back-N resends what was outstanding");
    }
}
