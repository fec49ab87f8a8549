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
            self.cwnd += acked.min(self.cfg.abc_limit * self.cfg.mss) as f64 / mss;
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
        let segs_acked = acked as f64 / mss;
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

    fn on_timeout(&mut self, _now: Time, _flight: u64) {
        self.reduce();
        self.ssthresh = ((self.cwnd * self.cfg.beta).max(2.0) * self.cfg.mss as f64) as u64;
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

    fn on_idle_restart(&mut self, _now: Time, restart_window: u64) {
        self.cwnd = self.cwnd.min(restart_window as f64 / self.cfg.mss as f64);
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
}
