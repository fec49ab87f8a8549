//! Round-trip time estimation and the retransmission timeout, RFC 6298, or
//! as ns-2's TCP agents keep it, in whole clock ticks.

use crate::time::{Dur, Time};

#[derive(Clone, Debug)]
pub struct RttConfig {
    /// RTO before any sample, RFC 6298 section 2.1 (1 s).
    pub initial_rto: Dur,
    /// Lower bound, RFC 6298 section 2.4 (1 s).
    pub min_rto: Dur,
    /// Upper bound, RFC 6298 section 2.5 (at least 60 s).
    pub max_rto: Dur,
    /// Clock granularity G, RFC 6298 section 2.2 (with `ns2_ticks`, ns-2's `tcpTick_`).
    pub granularity: Dur,
    /// Keep the estimate as ns-2's `TcpAgent::rtt_update` does without
    /// timestamps: a sample is the number of clock ticks it spans (at least
    /// one), SRTT and RTTVAR are integers of 1/8 and 1/4 tick, and the RTO
    /// is SRTT + 4 RTTVAR in whole ticks, at least two ticks.
    pub ns2_ticks: bool,
    /// With `ns2_ticks`, where the clock's ticks fall: at `phase_ns`
    /// nanoseconds past each multiple of the granularity (less than one
    /// granularity). ns-2 offsets each agent's clock by its `boot_time_`,
    /// drawn uniformly in [0, `tcpTick_`) when the agent is reset.
    pub phase_ns: u64,
}

impl Default for RttConfig {
    fn default() -> Self {
        RttConfig {
            initial_rto: Dur::from_secs(1),
            min_rto: Dur::from_secs(1),
            max_rto: Dur::from_secs(60),
            granularity: Dur::from_ms(1),
            ns2_ticks: false,
            phase_ns: 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    cfg: RttConfig,
    srtt: Option<Dur>,
    rttvar: Dur,
    rto: Dur,
    samples: u64,
    last: Option<Dur>,
}

impl RttEstimator {
    pub fn new(cfg: RttConfig) -> Self {
        RttEstimator { rto: cfg.initial_rto, cfg, srtt: None, rttvar: Dur::ZERO, samples: 0, last: None }
    }

    /// Where the clock's ticks fall (see [`RttConfig::phase_ns`]).
    pub fn phase_ns(&self) -> u64 {
        self.cfg.phase_ns
    }

    /// Set where the clock's ticks fall (see [`RttConfig::phase_ns`]).
    pub fn set_phase(&mut self, phase_ns: u64) {
        self.cfg.phase_ns = phase_ns;
    }

    /// Fold in a measurement `r` that ends at `now` (RFC 6298 section 2.2 and 2.3).
    pub fn sample(&mut self, now: Time, r: Dur) {
        self.samples += 1;
        self.last = Some(r);
        if self.cfg.ns2_ticks {
            self.sample_ticks(now, r);
            return;
        }
        let (srtt, rttvar) = match self.srtt {
            // (2.2) SRTT <- R, RTTVAR <- R/2
            None => (r, Dur::from_ns(r.as_ns() / 2)),
            // (2.3) RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|, SRTT <- 7/8 SRTT + 1/8 R'
            Some(s) => {
                let err = s.as_ns().abs_diff(r.as_ns());
                let var = (3 * self.rttvar.as_ns() + err) / 4;
                let srtt = (7 * s.as_ns() + r.as_ns()) / 8;
                (Dur::from_ns(srtt), Dur::from_ns(var))
            }
        };
        self.srtt = Some(srtt);
        self.rttvar = rttvar;
        // RTO <- SRTT + max(G, K*RTTVAR), K = 4, then (2.4) and (2.5) bounds.
        let k_var = Dur::from_ns(4 * rttvar.as_ns()).max(self.cfg.granularity);
        self.rto = (srtt + k_var).max(self.cfg.min_rto).min(self.cfg.max_rto);
    }

    /// ns-2's `TcpAgent::rtt_update` (tcp.cc, without `ts_option_`) and
    /// `rtt_timeout`: the sample counts the tick boundaries between the send
    /// time and `now`, at least 1 (`int((tao + fmod(sendtime + boot_time_,
    /// tcp_tick_)) / tcp_tick_)`, the ticks shifted by the clock's phase);
    /// then Jacobson's integer filters. `srtt`
    /// and `rttvar` hold ns-2's `t_srtt_` (eighths of a tick) and `t_rttvar_`
    /// (quarters) as counts; [`RttEstimator::srtt`] converts.
    #[cold]
    #[inline(never)]
    fn sample_ticks(&mut self, now: Time, r: Dur) {
        let tick = self.cfg.granularity.as_ns().max(1);
        let at = now.as_ns() + self.cfg.phase_ns;
        let sent = at.saturating_sub(r.as_ns());
        let m = ((at / tick - sent / tick) as i64).max(1);
        let (mut srtt8, mut var4) = match self.srtt {
            Some(s) => (s.as_ns() as i64, self.rttvar.as_ns() as i64),
            None => (0, 0),
        };
        if srtt8 != 0 {
            // a1 = 7/8 a0 + 1/8 m; var1 = 3/4 var0 + 1/4 |m - a0|.
            let mut delta = m - (srtt8 >> 3);
            srtt8 += delta;
            if srtt8 <= 0 {
                srtt8 = 1;
            }
            delta = delta.abs() - (var4 >> 2);
            var4 += delta;
            if var4 <= 0 {
                var4 = 1;
            }
        } else {
            // srtt = m, rttvar = m / 2.
            srtt8 = m << 3;
            var4 = m << 1;
        }
        self.srtt = Some(Dur::from_ns(srtt8 as u64));
        self.rttvar = Dur::from_ns(var4 as u64);
        // t_rtxcur_ = srtt + 2^rttvar_exp_ rttvar (rttvar_exp_ 2), whole ticks.
        let rtxcur = Dur::from_ns((((var4 << 3) + srtt8) >> 3) as u64 * tick);
        self.rto = rtxcur.max(self.cfg.min_rto).min(self.cfg.max_rto).max(Dur::from_ns(2 * tick));
    }

    /// Ticks counted in `1 / div` of a tick, as a duration.
    fn ticks_to_dur(&self, n: Dur, div: u64) -> Dur {
        Dur::from_ns(n.as_ns() * self.cfg.granularity.as_ns().max(1) / div)
    }

    /// The most recent measurement.
    pub fn last_sample(&self) -> Option<Dur> {
        self.last
    }

    /// The current RTO before backoff.
    pub fn rto(&self) -> Dur {
        self.rto
    }

    /// A timeout has backed the timer off to 2^`backoff` times the RTO. With
    /// `ns2_ticks`, as ns-2's `rtt_backoff`: once the factor is above 8, SRTT
    /// is "clobbered" (added to RTTVAR and set to 0), so that the next sample
    /// starts the estimate afresh (SRTT = sample, RTTVAR = sample / 2) and
    /// until then SRTT reads 0; the RTO stays as it was until that sample.
    /// RFC 6298 has no such rule.
    pub fn on_backoff(&mut self, backoff: u32) {
        if !self.cfg.ns2_ticks || backoff < 4 {
            return;
        }
        if let Some(srtt8) = self.srtt {
            self.rttvar = Dur::from_ns(self.rttvar.as_ns() + (srtt8.as_ns() >> 3));
            self.srtt = Some(Dur::ZERO);
        }
    }

    /// The RTO after `backoff` doublings (RFC 6298 section 5.5), capped.
    pub fn backed_off(&self, backoff: u32) -> Dur {
        let f = 1u64.checked_shl(backoff).unwrap_or(u64::MAX);
        self.rto.saturating_mul(f).min(self.cfg.max_rto)
    }

    pub fn srtt(&self) -> Option<Dur> {
        if self.cfg.ns2_ticks {
            return self.srtt.map(|s| self.ticks_to_dur(s, 8));
        }
        self.srtt
    }

    pub fn rttvar(&self) -> Dur {
        if self.cfg.ns2_ticks {
            return self.ticks_to_dur(self.rttvar, 4);
        }
        self.rttvar
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_first_and_later_samples() {
        let cfg = RttConfig { min_rto: Dur::from_ms(200), ..Default::default() };
        let mut e = RttEstimator::new(cfg);
        assert_eq!(e.rto(), Dur::from_secs(1));
        e.sample(Time::ZERO + Dur::from_secs(1), Dur::from_ms(100));
        // SRTT 100, RTTVAR 50, RTO = 100 + 200 = 300 ms.
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(Dur::from_ms(100)), Dur::from_ms(50), Dur::from_ms(300)));
        e.sample(Time::ZERO + Dur::from_secs(1), Dur::from_ms(200));
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5; RTO = 112.5 + 250.
        assert_eq!(e.rttvar(), Dur::from_us(62_500));
        assert_eq!(e.srtt(), Some(Dur::from_us(112_500)));
        assert_eq!(e.rto(), Dur::from_us(362_500));
    }

    #[test]
    fn bounds_and_backoff() {
        let mut e = RttEstimator::new(RttConfig::default());
        e.sample(Time::ZERO + Dur::from_secs(1), Dur::from_ms(10));
        assert_eq!(e.rto(), Dur::from_secs(1), "min RTO applies");
        assert_eq!(e.backed_off(3), Dur::from_secs(8));
        assert_eq!(e.backed_off(10), Dur::from_secs(60), "max RTO caps the backoff");
        assert_eq!(e.backed_off(200), Dur::from_secs(60));
    }

    #[test]
    fn granularity_floors_the_variance_term() {
        let cfg = RttConfig { min_rto: Dur::ZERO, granularity: Dur::from_ms(500), ..Default::default() };
        let mut e = RttEstimator::new(cfg);
        for _ in 0..50 {
            e.sample(Time::ZERO + Dur::from_secs(1), Dur::from_ms(100));
        }
        assert_eq!(e.rto(), Dur::from_ms(600));
    }

    #[test]
    fn ns2_ticks_count_tick_boundaries_and_keep_integer_filters() {
        let cfg = RttConfig { min_rto: Dur::ZERO, granularity: Dur::from_ms(100), ns2_ticks: true, ..Default::default() };
        let mut e = RttEstimator::new(cfg);
        let at = |ms: u64| Time::ZERO + Dur::from_ms(ms);
        // 10 ms inside one tick counts as one tick (the minimum): SRTT 1 tick,
        // RTTVAR 1/2, RTO = 1 + 4 * 1/2 = 3 ticks.
        e.sample(at(1050), Dur::from_ms(10));
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(Dur::from_ms(100)), Dur::from_ms(50), Dur::from_ms(300)));
        // 350 ms from 1.65 s to 2.0 s crosses four boundaries: delta 3, t_srtt_ 8 + 3 = 11
        // eighths, t_rttvar_ 2 + 3 = 5 quarters, RTO (5 * 8 + 11) >> 3 = 6 ticks.
        e.sample(at(2000), Dur::from_ms(350));
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(Dur::from_us(137_500)), Dur::from_ms(125), Dur::from_ms(600)));
        // A sample that crosses a boundary counts it, however short.
        let mut f = RttEstimator::new(RttConfig { min_rto: Dur::ZERO, granularity: Dur::from_ms(100), ns2_ticks: true, ..Default::default() });
        f.sample(at(1005), Dur::from_ms(10));
        f.sample(at(1095), Dur::from_ms(10));
        assert_eq!(f.srtt(), Some(Dur::from_ms(100)));
        // The floor is two ticks, and rto_min when larger.
        let mut g = RttEstimator::new(RttConfig { min_rto: Dur::ZERO, granularity: Dur::from_ms(100), ns2_ticks: true, ..Default::default() });
        for k in 1..40 {
            g.sample(at(1000 * k + 50), Dur::from_ms(10));
        }
        assert_eq!(g.rto(), Dur::from_ms(300), "t_rttvar_ stays at 2 quarters: 1 + 4 * 1/2 ticks");
        let mut h = RttEstimator::new(RttConfig { min_rto: Dur::from_secs(1), granularity: Dur::from_ms(100), ns2_ticks: true, ..Default::default() });
        h.sample(at(1050), Dur::from_ms(10));
        assert_eq!(h.rto(), Dur::from_secs(1));
    }

    #[test]
    fn ns2_ticks_fall_at_the_clocks_phase() {
        // ns-2 2.35's Tahoe in the Fall-Floyd set-up with a 12-packet queue:
        // six samples of 212.08 ms, each timing a segment sent as the ACK
        // that ends the previous sample arrives, on 1 ms ticks. With the
        // ticks at whole milliseconds each spans 212 ticks, and the RTO is
        // 314 ms; ns-2's agent, whose boot_time_ puts its ticks 0.52-0.60 ms
        // later, counts 213 in the last and arms 315 ms, as its trace shows.
        let rto = |phase_us: u64| {
            let cfg = RttConfig { min_rto: Dur::from_ms(200), granularity: Dur::from_ms(1), ns2_ticks: true, ..Default::default() };
            let mut e = RttEstimator::new(cfg);
            e.set_phase(phase_us * 1000);
            for k in 1..=6 {
                e.sample(Time::ZERO + Dur::from_us(500_000 + 212_080 * k), Dur::from_us(212_080));
            }
            e.rto()
        };
        assert_eq!(rto(0), Dur::from_ms(314));
        assert_eq!(rto(510), Dur::from_ms(314));
        assert_eq!(rto(520), Dur::from_ms(315));
        assert_eq!(rto(590), Dur::from_ms(315));
        // From 0.60 ms the fifth sample counts 213 and the sixth, sent on a
        // tick, 212 again: 314 ms, as with every phase from there to 1 ms.
        assert_eq!(rto(600), Dur::from_ms(314));
        assert_eq!(rto(990), Dur::from_ms(314));
    }

    #[test]
    fn ns2_backoff_past_eight_restarts_the_estimate_at_the_next_sample() {
        let cfg = RttConfig { min_rto: Dur::ZERO, granularity: Dur::from_ms(100), ns2_ticks: true, ..Default::default() };
        let at = |ms: u64| Time::ZERO + Dur::from_ms(ms);
        let mut e = RttEstimator::new(cfg.clone());
        e.sample(at(1000), Dur::from_ms(200)); // 2 ticks: t_srtt_ 16, t_rttvar_ 4, RTO 2 + 4 x 1 = 6 ticks
        assert_eq!(e.rto(), Dur::from_ms(600));
        // Backoffs of 2, 4 and 8 leave the estimate alone.
        for b in 1..=3 {
            e.on_backoff(b);
        }
        assert_eq!((e.srtt(), e.rttvar()), (Some(Dur::from_ms(200)), Dur::from_ms(100)));
        // At 16, t_rttvar_ += t_srtt_ >> 3 (4 + 2 = 6 quarters) and t_srtt_ = 0;
        // the RTO is unchanged until the next sample.
        e.on_backoff(4);
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(Dur::ZERO), Dur::from_ms(150), Dur::from_ms(600)));
        // Then a sample of 10 ticks starts afresh: SRTT 10, RTTVAR 5, RTO 30 ticks.
        e.sample(at(3000), Dur::from_ms(1000));
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(Dur::from_secs(1)), Dur::from_ms(500), Dur::from_secs(3)));
        // Without the clobber the same sample is smoothed in: t_srtt_ 16 + 8 = 24 (3 ticks),
        // t_rttvar_ 4 + 8 - 1 = 11 quarters, RTO (88 + 24) >> 3 = 14 ticks.
        let mut f = RttEstimator::new(cfg);
        f.sample(at(1000), Dur::from_ms(200));
        f.on_backoff(3);
        f.sample(at(3000), Dur::from_ms(1000));
        assert_eq!((f.srtt(), f.rto()), (Some(Dur::from_ms(300)), Dur::from_ms(1400)));
        // RFC 6298's estimator keeps its SRTT whatever the backoff.
        let mut g = RttEstimator::new(RttConfig { min_rto: Dur::ZERO, ..Default::default() });
        g.sample(at(1000), Dur::from_ms(200));
        g.on_backoff(6);
        assert_eq!(g.srtt(), Some(Dur::from_ms(200)));
    }
}
