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
//!
//! With [`Lookup::Table`] a(w) and b(w) are read from a table, as
//! implementations do (RFC 3649 Appendix B; Linux `tcp_highspeed.c`). Row k
//! holds a = k and b = floor(256 b(w_k)) / 256 from window w_k on. The first
//! four rows are RFC 3649's (w = 38, 118, 221, 347; b = 128, 112, 104, 98 out
//! of 256, as the HSTCP study lists them); further rows start where the
//! closed-form a(w) reaches k (464, 622, ...: within 3% of the RFC's 495,
//! 663, ...). A window uses the row at or below it (the reading of RFC
//! 3649's table) or, as Linux, the first row above it.

use super::CongestionControl;
use crate::time::Time;

/// How a(w) and b(w) are found for a window.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The closed forms, at the window in whole segments.
    Formula,
    /// The table row at or below the window.
    Table,
    /// The first table row above the window (Linux `hstcp_aimd_vals`).
    TableAbove,
}

#[derive(Clone, Debug)]
pub struct HighSpeedConfig {
    pub lookup: Lookup,
    pub mss: u64,
    pub initial_window: u64,
    pub initial_ssthresh: u64,
    pub abc_limit: u64,
    /// Count bytes (RFC 3465); without it every ACK of new data counts as
    /// one SMSS, as in Linux's `tcp_highspeed.c` and ns-2.
    pub byte_counting: bool,
    pub low_window: f64,
    pub high_window: f64,
    pub high_p: f64,
    pub high_decrease: f64,
}

impl Default for HighSpeedConfig {
    /// RFC 3649 section 5: Low_Window 38, High_Window 83000, High_P 1e-7, High_Decrease 0.1.
    fn default() -> Self {
        HighSpeedConfig {
            lookup: Lookup::Formula,
            mss: 1460,
            initial_window: 1460,
            initial_ssthresh: u64::MAX,
            abc_limit: 2,
            byte_counting: true,
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

    /// The table's rows (w_k, a = k, b in 256ths) up to `High_Window`.
    pub fn table(&self) -> Vec<(u64, u64, u64)> {
        let b256 = |w: u64| (self.b(w as f64) * 256.0).floor() as u64;
        // RFC 3649 Appendix B's first rows, for its parameters; otherwise
        // every row from the closed form.
        let d = HighSpeedConfig::default();
        let rfc = (self.low_window, self.high_window, self.high_p, self.high_decrease) == (d.low_window, d.high_window, d.high_p, d.high_decrease);
        let first: &[u64] = if rfc { &[38, 118, 221, 347] } else { &[] };
        let mut rows: Vec<(u64, u64, u64)> = std::iter::once(self.low_window as u64).chain(first.iter().copied().skip(1)).zip(1..).map(|(w, k)| (w, k, b256(w))).collect();
        let mut w = rows.last().map_or(0, |r| r.0);
        while (w as f64) < self.high_window {
            w += 1;
            let k = rows.len() as u64 + 1;
            if self.a(w as f64) >= k as f64 {
                rows.push((w, k, b256(w)));
            }
        }
        rows
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
    /// The a(w)/b(w) table (table lookups only).
    table: Vec<(u64, u64, u64)>,
}

impl HighSpeed {
    pub fn new(cfg: HighSpeedConfig) -> HighSpeed {
        let table = if cfg.lookup == Lookup::Formula { Vec::new() } else { cfg.table() };
        HighSpeed { cwnd: cfg.initial_window, ssthresh: cfg.initial_ssthresh, bytes_acked: 0, cached: (0, 1.0, 0.5), table, cfg }
    }

    fn ab(&mut self) -> (f64, f64) {
        let w = self.cwnd / self.cfg.mss;
        if self.cached.0 != w {
            let wf = w as f64;
            self.cached = match self.cfg.lookup {
                Lookup::Formula => (w, self.cfg.a(wf), self.cfg.b(wf)),
                lookup => {
                    // Rows at or below w; Linux moves on to the next row once w reaches a row.
                    let at = self.table.partition_point(|r| r.0 <= w);
                    let i = if lookup == Lookup::TableAbove { at.min(self.table.len() - 1) } else { at.saturating_sub(1) };
                    let (_, a, b) = self.table[i];
                    (w, a as f64, b as f64 / 256.0)
                }
            };
        }
        (self.cached.1, self.cached.2)
    }
}

impl CongestionControl for HighSpeed {
    fn on_ack(&mut self, _now: Time, acked: u64, _flight: u64) {
        let acked = if self.cfg.byte_counting { acked } else { self.cfg.mss };
        if self.cwnd < self.ssthresh {
            self.cwnd += acked.min(self.cfg.abc_limit * self.cfg.mss);
            return;
        }
        // a(w) segments per window of acknowledged bytes, byte-counted as in
        // Reno: one SMSS each time cwnd / a(w) bytes have been acknowledged.
        let (a, _) = self.ab();
        // An ACK counts at most a window (after a timeout, the ACK that fills
        // the hole can cover a thousand SACKed segments): at most a(w)
        // segments of growth per ACK, a(w) per window of ACKs as RFC 3649 has it.
        self.bytes_acked += acked.min(self.cwnd);
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

    fn on_timeout(&mut self, _now: Time, basis: Option<u64>) {
        if let Some(w) = basis {
            self.ssthresh = (w / 2).max(2 * self.cfg.mss);
        }
        self.cwnd = self.cfg.mss;
        self.bytes_acked = 0;
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
    fn table_rows_match_rfc3649_and_the_study() {
        // The first rows as RFC 3649 Appendix B lists them, with b in 256ths
        // as in the HSTCP study's table and Linux's tcp_highspeed.c.
        let t = HighSpeedConfig::default().table();
        assert_eq!(&t[..4], &[(38, 1, 128), (118, 2, 112), (221, 3, 104), (347, 4, 98)]);
        let mss = 1448;
        for (lookup, w, a, b) in [(Lookup::Table, 150, 2.0, 112.0), (Lookup::Table, 221, 3.0, 104.0), (Lookup::TableAbove, 100, 2.0, 112.0), (Lookup::TableAbove, 150, 3.0, 104.0)] {
            let mut h = HighSpeed::new(HighSpeedConfig { lookup, mss, initial_window: w * mss, initial_ssthresh: 0, ..Default::default() });
            assert_eq!(h.ab(), (a, b / 256.0), "{lookup:?} at w = {w}");
        }
    }

    #[test]
    fn an_ack_of_many_segments_adds_at_most_a_w() {
        let mss = 1460;
        let mut h = HighSpeed::new(HighSpeedConfig { initial_window: 221 * mss, initial_ssthresh: 0, ..Default::default() });
        h.on_ack(Time::ZERO, 5000 * mss, 0);
        assert_eq!(h.window() / mss, 224, "a(221) = 3");
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
