//! HighSpeed TCP, RFC 3649.
//!
//! At or below `Low_Window` segments the response is standard TCP's. Above
//! it, each round trip adds a(w) segments and a loss removes the fraction
//! b(w) of the window, where (RFC 3649 section 5):
//!
//! ```text
//! b(w) = (High_Decrease - 0.5) * (log w - log Low_Window) / (log High_Window - log Low_Window) + 0.5
//! p(w) = exp((log w - log Low_Window) / (log High_Window - log Low_Window)
//!            * (log High_P - log Low_P) + log Low_P),   Low_P = 1.5 / Low_Window^2
//! a(w) = w^2 * p(w) * 2 * b(w) / (2 - b(w))
//! ```
//!
//! Slow start and the response to a timeout are standard (section 6).

use super::CongestionControl;
use crate::time::Time;

#[derive(Clone, Debug)]
pub struct HighSpeedConfig {
    pub mss: u64,
    pub initial_window: u64,
    pub initial_ssthresh: u64,
    pub abc_limit: u64,
    pub low_window: f64,
    pub high_window: f64,
    pub high_p: f64,
    pub high_decrease: f64,
}

impl Default for HighSpeedConfig {
    /// RFC 3649 section 5: Low_Window 38, High_Window 83000, High_P 1e-7, High_Decrease 0.1.
    fn default() -> Self {
        HighSpeedConfig {
            mss: 1460,
            initial_window: 1460,
            initial_ssthresh: u64::MAX,
            abc_limit: 2,
            low_window: 38.0,
            high_window: 83000.0,
            high_p: 1e-7,
            high_decrease: 0.1,
        }
    }
}

impl HighSpeedConfig {
    fn frac(&self, w: f64) -> f64 {
        (w.ln() - self.low_window.ln()) / (self.high_window.ln() - self.low_window.ln())
    }

    /// The decrease factor b(w); 0.5 at or below Low_Window.
    pub fn b(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 0.5;
        }
        (self.high_decrease - 0.5) * self.frac(w) + 0.5
    }

    /// The loss rate p(w) of the response function.
    pub fn p(&self, w: f64) -> f64 {
        let low_p = 1.5 / (self.low_window * self.low_window);
        (self.frac(w) * (self.high_p.ln() - low_p.ln()) + low_p.ln()).exp()
    }

    /// The increase a(w), segments per round trip; 1 at or below Low_Window.
    pub fn a(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        let b = self.b(w);
        (w * w * self.p(w) * 2.0 * b / (2.0 - b)).max(1.0)
    }
}

#[derive(Clone, Debug)]
pub struct HighSpeed {
    cfg: HighSpeedConfig,
    cwnd: u64,
    ssthresh: u64,
    /// Acknowledged bytes not yet turned into window growth.
    bytes_acked: u64,
    /// a(w) and b(w) for the window (in whole segments) they were computed at.
    cached: (u64, f64, f64),
}

impl HighSpeed {
    pub fn new(cfg: HighSpeedConfig) -> HighSpeed {
        HighSpeed { cwnd: cfg.initial_window, ssthresh: cfg.initial_ssthresh, bytes_acked: 0, cached: (0, 1.0, 0.5), cfg }
    }

    fn ab(&mut self) -> (f64, f64) {
        let w = self.cwnd / self.cfg.mss;
        if self.cached.0 != w {
            let wf = w as f64;
            self.cached = (w, self.cfg.a(wf), self.cfg.b(wf));
        }
        (self.cached.1, self.cached.2)
    }
}

impl CongestionControl for HighSpeed {
    fn on_ack(&mut self, _now: Time, acked: u64, _flight: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += acked.min(self.cfg.abc_limit * self.cfg.mss);
            return;
        }
        // a(w) segments per window of acknowledged bytes, byte-counted as in
        // Reno: one SMSS each time cwnd / a(w) bytes have been acknowledged.
        let (a, _) = self.ab();
        self.bytes_acked += acked;
        let step = ((self.cwnd as f64 / a) as u64).max(1);
        while self.bytes_acked >= step {
            self.bytes_acked -= step;
            self.cwnd += self.cfg.mss;
        }
    }

    fn on_congestion_event(&mut self, _now: Time, _flight: u64) {
        // cwnd <- (1 - b(w)) cwnd (RFC 3649 section 5).
        let (_, b) = self.ab();
        let reduced = ((1.0 - b) * self.cwnd as f64) as u64;
        self.cwnd = reduced.max(2 * self.cfg.mss);
        self.ssthresh = self.cwnd;
        self.bytes_acked = 0;
    }

    fn on_timeout(&mut self, _now: Time, flight: u64) {
        self.ssthresh = (flight / 2).max(2 * self.cfg.mss);
        self.cwnd = self.cfg.mss;
        self.bytes_acked = 0;
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

    #[test]
    fn rfc3649_table() {
        // RFC 3649 section 5's table: w, a(w), b(w).
        let c = HighSpeedConfig::default();
        for (w, a, b) in [(38.0, 1.0, 0.50), (118.0, 2.0, 0.44), (221.0, 3.0, 0.41), (347.0, 4.0, 0.38)] {
            assert_eq!(c.a(w).round(), a, "a({w}) = {}", c.a(w));
            assert!((c.b(w) - b).abs() <= 0.01, "b({w}) = {}", c.b(w));
        }
        // The far end: b(High_Window) = High_Decrease, p(High_Window) = High_P.
        assert!((c.b(83000.0) - 0.1).abs() < 1e-12);
        assert!((c.p(83000.0) / 1e-7 - 1.0).abs() < 1e-9);
    }

    #[test]
    fn standard_below_low_window_and_faster_above() {
        let mss = 1460;
        let mut h = HighSpeed::new(HighSpeedConfig { initial_window: 30 * mss, initial_ssthresh: 0, ..Default::default() });
        // One window of ACKs at w = 30 adds one segment.
        for _ in 0..30 {
            h.on_ack(Time::ZERO, mss, 0);
        }
        assert_eq!(h.window() / mss, 31);
        let mut h = HighSpeed::new(HighSpeedConfig { initial_window: 221 * mss, initial_ssthresh: 0, ..Default::default() });
        for _ in 0..221 {
            h.on_ack(Time::ZERO, mss, 0);
        }
        // About a(221) segments in one round trip.
        let grown = (h.window() / mss - 221) as f64;
        let a = HighSpeedConfig::default().a(221.0);
        assert!((grown - a).abs() < 1.0, "grew {grown}, a(221) = {a}");
        let w = h.window();
        h.on_congestion_event(Time::ZERO, w);
        let b = HighSpeedConfig::default().b((w / mss) as f64);
        assert_eq!(h.window(), ((1.0 - b) * w as f64) as u64);
    }
}
