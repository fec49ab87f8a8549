//! CUBIC, RFC 9438.
//!
//! After a congestion event the window follows (section 4.2, eq. 1 and 2)
//!
//! ```text
//! W_cubic(t) = C * (t - K)^3 + W_max,   K = cbrt((W_max - cwnd_epoch) / C)
//! ```
//!
//! in segments, with t the time since the start of the congestion-avoidance
//! epoch. Each ACK moves cwnd toward target = W_cubic(t + RTT), clamped to
//! [cwnd, 1.5 cwnd] (section 4.4, 4.5). In the Reno-friendly region (section
//! 4.3), W_est grows by alpha_cubic = 3 (1 - beta) / (1 + beta) segments per
//! window of ACKs, and cwnd is never below it. On a congestion event W_max
//! is the window before the reduction, lowered by fast convergence (section
//! 4.7) when it is below the previous W_max, and cwnd = ssthresh = beta cwnd
//! (section 4.6).
//!
//! With `hystart`, slow start ends early as Linux's CUBIC ended it from
//! 2.6.29 (2009; on by default): HyStart (Ha and Rhee, "Taming the
//! elephants", 2008, and Linux's `tcp_cubic.c`). Rounds are counted by
//! sequence: a round ends when an ACK passes the `snd_nxt` of its start.
//! While cwnd >= 16 segments in slow start, slow start ends (ssthresh =
//! cwnd) when either
//! - the ACK train: ACKs no more than 2 ms apart since the round began span
//!   half the smallest RTT seen, or
//! - the delay: the smallest of the round's first 8 RTT samples exceeds the
//!   smallest RTT seen by more than clamp(that RTT / 16, 2 ms, 16 ms)
//!   (2 ms was the floor until 2011, when Linux raised it to 4 ms).
//!
//! Once found, HyStart stays off until a retransmission timeout resets it.

use super::CongestionControl;
use crate::time::{Dur, Time};

#[derive(Clone, Debug)]
pub struct CubicConfig {
    pub mss: u64,
    pub initial_window: u64,
    pub initial_ssthresh: u64,
    pub abc_limit: u64,
    /// C, segments per second cubed.
    pub c: f64,
    pub beta: f64,
    pub fast_convergence: bool,
    /// Slow start by bytes (RFC 3465, up to `abc_limit` segments per ACK);
    /// false: one segment per ACK of new data (Linux's `tcp_abc = 0`).
    pub byte_counting: bool,
    /// HyStart (see the module's documentation).
    pub hystart: bool,
}

/// HyStart's state (Linux's `bictcp` fields of the same names).
#[derive(Clone, Debug, Default)]
struct Hystart {
    /// A detection ended slow start; off until a timeout.
    found: bool,
    round_start: Time,
    /// The last ACK of the current ACK train.
    last_ack: Time,
    /// The round ends when an ACK passes this sequence number.
    end_seq: u64,
    /// The smallest of this round's first `MIN_SAMPLES` samples.
    curr_rtt: Option<Dur>,
    sample_cnt: u32,
    /// The smallest RTT seen since the start or the last timeout.
    delay_min: Option<Dur>,
}

impl Hystart {
    /// Linux: HYSTART_MIN_SAMPLES, hystart_low_window, hystart_ack_delta,
    /// HYSTART_DELAY_MIN and HYSTART_DELAY_MAX (2.6.29-2.6.38).
    const MIN_SAMPLES: u32 = 8;
    const LOW_WINDOW: f64 = 16.0;
    const ACK_DELTA: Dur = Dur::from_ms(2);
    const DELAY_MIN: Dur = Dur::from_ms(2);
    const DELAY_MAX: Dur = Dur::from_ms(16);

    /// `bictcp_hystart_reset`: a new round from `now`.
    fn new_round(&mut self, now: Time, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// `hystart_update`: whether this sample ends slow start.
    fn update(&mut self, now: Time, rtt: Dur) -> bool {
        let delay_min = self.delay_min.unwrap_or(rtt);
        // The ACK train.
        if now.saturating_since(self.last_ack) <= Self::ACK_DELTA {
            self.last_ack = now;
            if now.saturating_since(self.round_start).as_ns() >= delay_min.as_ns() / 2 {
                self.found = true;
            }
        }
        // The delay increase, over the round's first samples.
        if self.sample_cnt < Self::MIN_SAMPLES {
            self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
            self.sample_cnt += 1;
        } else {
            let thresh = Dur::from_ns((delay_min.as_ns() / 16).clamp(Self::DELAY_MIN.as_ns(), Self::DELAY_MAX.as_ns()));
            if self.curr_rtt.is_some_and(|c| c.as_ns() > delay_min.as_ns() + thresh.as_ns()) {
                self.found = true;
            }
        }
        self.found
    }
}

impl Default for CubicConfig {
    /// RFC 9438 section 5: C = 0.4, beta_cubic = 0.7, fast convergence on.
    fn default() -> Self {
        CubicConfig {
            mss: 1460,
            initial_window: 1460,
            initial_ssthresh: u64::MAX,
            abc_limit: 2,
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            byte_counting: true,
            hystart: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// Window in segments (fractional).
    cwnd: f64,
    ssthresh: u64,
    w_max: f64,
    k: f64,
    w_est: f64,
    epoch: Option<Time>,
    srtt: f64,
    hystart: Hystart,
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Cubic {
        Cubic {
            cwnd: cfg.initial_window as f64 / cfg.mss as f64,
            ssthresh: cfg.initial_ssthresh,
            w_max: 0.0,
            k: 0.0,
            w_est: 0.0,
            epoch: None,
            srtt: 0.1,
            hystart: Hystart::default(),
            cfg,
        }
    }

    /// W_cubic(t) in segments, t in seconds since the epoch (RFC 9438 eq. 1).
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.cfg.c * (t - self.k).powi(3) + self.w_max
    }

    pub fn k(&self) -> f64 {
        self.k
    }

    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// HyStart's smallest RTT sample so far.
    pub fn hystart_min_rtt(&self) -> Option<Dur> {
        self.hystart.delay_min
    }

    fn segs(&self) -> u64 {
        (self.cwnd * self.cfg.mss as f64) as u64
    }

    fn reduce(&mut self) {
        let w = self.cwnd;
        // Fast convergence (section 4.7).
        self.w_max = if self.cfg.fast_convergence && w < self.w_max { w * (1.0 + self.cfg.beta) / 2.0 } else { w };
        self.epoch = None;
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, now: Time, acked: u64, _flight: u64) {
        let mss = self.cfg.mss as f64;
        if self.segs() < self.ssthresh {
            self.cwnd += if self.cfg.byte_counting { acked.min(self.cfg.abc_limit * self.cfg.mss) as f64 / mss } else { 1.0 };
            return;
        }
        let start = *self.epoch.get_or_insert_with(|| {
            // A new epoch (section 4.2): K from the current window.
            self.k = if self.w_max > self.cwnd { ((self.w_max - self.cwnd) / self.cfg.c).cbrt() } else { 0.0 };
            if self.w_max < self.cwnd {
                self.w_max = self.cwnd;
            }
            self.w_est = self.cwnd;
            now
        });
        let t = now.saturating_since(start).as_secs_f64();
        // An ACK counts at most a window of segments: the cumulative ACK that
        // ends a timeout's recovery can cover a thousand SACKed segments while
        // cwnd is a few. Per ACK, cwnd then moves at most to the target (at
        // most 1.5 cwnd, section 4.2) and W_est by at most alpha, as Reno
        // grows by at most one SMSS per ACK (RFC 3465 section 2.1).
        let segs_acked = (acked as f64 / mss).min(self.cwnd);
        // Reno-friendly estimate (section 4.3, eq. 4).
        let alpha = 3.0 * (1.0 - self.cfg.beta) / (1.0 + self.cfg.beta);
        self.w_est += alpha * segs_acked / self.cwnd;
        let target = self.w_cubic(t + self.srtt).clamp(self.cwnd, 1.5 * self.cwnd);
        if self.w_cubic(t) < self.w_est {
            self.cwnd = self.cwnd.max(self.w_est);
        } else {
            // Concave and convex regions (sections 4.4, 4.5).
            self.cwnd += (target - self.cwnd) * segs_acked / self.cwnd;
        }
    }

    fn on_congestion_event(&mut self, _now: Time, _flight: u64) {
        self.reduce();
        self.cwnd = (self.cwnd * self.cfg.beta).max(2.0);
        self.ssthresh = self.segs();
    }

    fn on_timeout(&mut self, _now: Time, basis: Option<u64>) {
        // Linux's `bictcp_state(TCP_CA_Loss)`: HyStart starts over.
        self.hystart = Hystart { end_seq: self.hystart.end_seq, ..Hystart::default() };
        // The reduction is CUBIC's own, from its window (`bictcp_recalc_ssthresh`),
        // whatever `basis` is; `None` (Linux, a loss already under way) skips it.
        if basis.is_some() {
            self.reduce();
            self.ssthresh = ((self.cwnd * self.cfg.beta).max(2.0) * self.cfg.mss as f64) as u64;
        }
        self.cwnd = 1.0;
    }

    fn window(&self) -> u64 {
        self.segs()
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_rtt(&mut self, srtt: Dur) {
        self.srtt = srtt.as_secs_f64();
    }

    /// HyStart (Linux's `bictcp_acked`, then the round check of
    /// `bictcp_cong_avoid`).
    fn on_delay_sample(&mut self, now: Time, rtt: Dur, ack: u64, snd_nxt: u64) {
        if !self.cfg.hystart {
            return;
        }
        // Linux ignores samples for a second after a congestion-avoidance
        // epoch begins.
        if self.epoch.is_some_and(|e| now.saturating_since(e) < Dur::from_secs(1)) {
            return;
        }
        let slow_start = self.segs() < self.ssthresh;
        let h = &mut self.hystart;
        h.delay_min = Some(h.delay_min.map_or(rtt, |d| d.min(rtt)));
        if slow_start && !h.found && self.cwnd >= Hystart::LOW_WINDOW && h.update(now, rtt) {
            self.ssthresh = self.segs();
        }
        if self.segs() < self.ssthresh && ack > self.hystart.end_seq {
            self.hystart.new_round(now, snd_nxt);
        }
    }

    fn cap_window(&mut self, _now: Time, cap: u64) {
        self.cwnd = self.cwnd.min(cap as f64 / self.cfg.mss as f64);
        self.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_after_a_loss_follows_the_cubic_function() {
        let mss = 1460u64;
        let rtt = 0.1;
        let mut c = Cubic::new(CubicConfig { initial_window: 100 * mss, initial_ssthresh: 0, ..Default::default() });
        c.on_rtt(Dur::from_ms(100));
        let t0 = Time::from_ns(1_000_000_000);
        c.on_congestion_event(t0, 100 * mss);
        assert_eq!(c.window() / mss, 70);
        // K = cbrt((100 - 70) / 0.4) = cbrt(75).
        // One round trip at a time: a window's worth of ACKs spread over it.
        let mut now = t0;
        let mut checked = 0;
        for round in 0..80 {
            let w = c.window() / mss;
            for i in 0..w {
                let at = now + Dur::from_ns((rtt * 1e9) as u64 * i / w);
                c.on_ack(at, mss, 0);
            }
            now += Dur::from_ms(100);
            if round == 0 {
                assert!((c.k() - 75f64.cbrt()).abs() < 1e-9);
            }
            let t = now.saturating_since(t0).as_secs_f64();
            if [1.0, 2.0, 3.0, 4.2, 5.0, 6.0, 7.0].iter().any(|x| (t - x).abs() < 1e-9) {
                // RFC 9438 eq. 1, evaluated one RTT ahead as the target is.
                let expected = 0.4 * (t - 75f64.cbrt()).powi(3) + 100.0;
                let got = c.window() as f64 / mss as f64;
                assert!((got - expected).abs() / expected < 0.02, "t={t}: cwnd {got} vs W_cubic {expected}");
                checked += 1;
            }
        }
        assert_eq!(checked, 7);
    }

    #[test]
    fn an_ack_of_many_segments_grows_the_window_at_most_to_the_target() {
        // After a timeout cwnd is small while the ACK that fills the hole
        // covers everything SACKed since: 1,000 segments at cwnd 8.
        let mss = 1460u64;
        for w_max in [10, 100] {
            let mut c = Cubic::new(CubicConfig { initial_window: w_max * mss, initial_ssthresh: 0, ..Default::default() });
            c.on_rtt(Dur::from_ms(100));
            c.on_timeout(Time::ZERO, Some(0));
            c.cwnd = 8.0;
            let t = Time::from_ns(2_000_000_000);
            c.on_ack(t, mss, 0); // opens the epoch
            let before = c.cwnd;
            c.on_ack(t + Dur::from_ms(1), 1000 * mss, 0);
            // Reno-friendly region (w_max 10: W_cubic is below W_est): at most alpha;
            // concave region (w_max 100): at most 1.5 cwnd.
            let bound = if w_max == 10 { before + 3.0 * 0.3 / 1.7 } else { 1.5 * before };
            assert!(c.cwnd > before && c.cwnd <= bound + 1e-9, "w_max {w_max}: {before} -> {}", c.cwnd);
        }
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mss = 1460u64;
        let mut c = Cubic::new(CubicConfig { initial_window: 100 * mss, initial_ssthresh: 0, ..Default::default() });
        c.on_congestion_event(Time::ZERO, 0);
        assert!((c.w_max() - 100.0).abs() < 1e-9);
        // A second loss below W_max: W_max = cwnd (1 + beta) / 2.
        c.on_congestion_event(Time::ZERO, 0);
        assert!((c.w_max() - 70.0 * 1.7 / 2.0).abs() < 1e-9);
        assert!((c.window() as f64 / mss as f64 - 49.0).abs() < 0.01);
    }

    /// Slow start from IW 10, one segment per ACK, a window of ACKs in flight:
    /// each ACK's delay sample first, then the ACK, `gap` apart, with RTT
    /// `rtt(cwnd in segments)`. Returns the ACK count at which slow start
    /// ended (if it did within `acks`) and the controller.
    fn slow_start(hystart: bool, gap: Dur, acks: u64, rtt: impl Fn(u64) -> Dur) -> (Option<u64>, Cubic) {
        let mss = 1460u64;
        let mut c = Cubic::new(CubicConfig { initial_window: 10 * mss, byte_counting: false, hystart, ..Default::default() });
        let mut now = Time::from_ns(1_000_000_000);
        let mut una = 0;
        let mut ended = None;
        for k in 1..=acks {
            let snd_nxt = una + c.window();
            now += gap;
            una += mss;
            c.on_delay_sample(now, rtt(c.window() / mss), una, snd_nxt);
            c.on_ack(now, mss, 0);
            if ended.is_none() && !c.in_slow_start() {
                ended = Some(k);
            }
        }
        (ended, c)
    }

    #[test]
    fn hystart_ends_slow_start_when_a_rounds_delay_rises_by_a_sixteenth() {
        let mss = 1460;
        // 5 ms between ACKs: never a train. The RTT is 100 ms until cwnd
        // reaches 40 segments, then 107 ms: above 100 ms + 100/16 ms.
        let rtt = |w: u64| Dur::from_ms(if w < 40 { 100 } else { 107 });
        // Rounds (an ACK past the snd_nxt of the round's first ACK ends one)
        // start at ACKs 1, 11, 31 and 71, at cwnd 10, 20, 40 and 80. The
        // third round's first 8 samples (ACKs 32-39; ACK 31's counted in the
        // round before it) are all 107 ms, so ACK 40 ends slow start, with
        // cwnd 49 before it.
        let (ended, c) = slow_start(true, Dur::from_ms(5), 200, rtt);
        assert_eq!(ended, Some(40));
        assert_eq!(c.ssthresh(), 49 * mss);
        // 6 ms more is within the threshold: slow start goes on.
        let (ended, _) = slow_start(true, Dur::from_ms(5), 200, |w| Dur::from_ms(if w < 40 { 100 } else { 106 }));
        assert_eq!(ended, None);
        // Without HyStart nothing ends it.
        let (ended, c) = slow_start(false, Dur::from_ms(5), 200, rtt);
        assert_eq!((ended, c.window() / mss), (None, 210));
    }

    #[test]
    fn hystart_ends_slow_start_when_an_ack_train_spans_half_the_rtt() {
        let mss = 1460;
        // ACKs 1 ms apart, RTT 100 ms throughout: the round starting at ACK
        // 71 (cwnd 80) is the first whose ACKs span 50 ms, at ACK 121 (cwnd
        // 130 before it); the round before spans ACKs 31-70, 39 ms.
        let (ended, c) = slow_start(true, Dur::from_ms(1), 400, |_| Dur::from_ms(100));
        assert_eq!(ended, Some(121));
        assert_eq!(c.ssthresh(), 130 * mss);
        // 3 ms apart is no train (more than 2 ms).
        let (ended, _) = slow_start(true, Dur::from_ms(3), 400, |_| Dur::from_ms(100));
        assert_eq!(ended, None);
    }

    #[test]
    fn hystart_waits_for_16_segments_and_starts_over_after_a_timeout() {
        let mss = 1460;
        // Every sample far above the first: found as soon as cwnd reaches 16
        // and a round has 8 samples.
        let first = std::cell::Cell::new(true);
        let rtt = |_| Dur::from_ms(if first.replace(false) { 100 } else { 200 });
        // cwnd is 16 before ACK 7: ACKs 7-11 are 5 samples of the first
        // round, ACKs 12-19 the second's 8, and ACK 20 (cwnd 29) ends slow start.
        let (ended, mut c) = slow_start(true, Dur::from_ms(5), 100, rtt);
        assert_eq!(ended, Some(20));
        assert_eq!(c.ssthresh(), 29 * mss);
        // A timeout resets HyStart: its minimum RTT is forgotten.
        c.on_timeout(Time::from_ns(5_000_000_000), Some(0));
        assert!(!c.hystart.found && c.hystart.delay_min.is_none());
    }

    #[test]
    fn without_byte_counting_slow_start_adds_a_segment_per_ack() {
        let mss = 1460u64;
        let mut c = Cubic::new(CubicConfig { initial_window: 10 * mss, byte_counting: false, ..Default::default() });
        // A delayed ACK for two segments still adds one (Linux's tcp_abc = 0).
        c.on_ack(Time::ZERO, 2 * mss, 0);
        assert_eq!(c.window(), 11 * mss);
        let mut c = Cubic::new(CubicConfig { initial_window: 10 * mss, ..Default::default() });
        c.on_ack(Time::ZERO, 2 * mss, 0);
        assert_eq!(c.window(), 12 * mss);
    }
}
