//! Round-trip time estimation and the retransmission timeout, RFC 6298.

use crate::time::Dur;

#[derive(Clone, Debug)]
pub struct RttConfig {
    /// RTO before any sample, RFC 6298 section 2.1 (1 s).
    pub initial_rto: Dur,
    /// Lower bound, RFC 6298 section 2.4 (1 s).
    pub min_rto: Dur,
    /// Upper bound, RFC 6298 section 2.5 (at least 60 s).
    pub max_rto: Dur,
    /// Clock granularity G, RFC 6298 section 2.2.
    pub granularity: Dur,
}

impl Default for RttConfig {
    fn default() -> Self {
        RttConfig {
            initial_rto: Dur::from_secs(1),
            min_rto: Dur::from_secs(1),
            max_rto: Dur::from_secs(60),
            granularity: Dur::from_ms(1),
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

    /// Fold in a measurement `r` (RFC 6298 section 2.2 and 2.3).
    pub fn sample(&mut self, r: Dur) {
        self.samples += 1;
        self.last = Some(r);
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

    /// The most recent measurement.
    pub fn last_sample(&self) -> Option<Dur> {
        self.last
    }

    /// The current RTO before backoff.
    pub fn rto(&self) -> Dur {
        self.rto
    }

    /// The RTO after `backoff` doublings (RFC 6298 section 5.5), capped.
    pub fn backed_off(&self, backoff: u32) -> Dur {
        let f = 1u64.checked_shl(backoff).unwrap_or(u64::MAX);
        self.rto.saturating_mul(f).min(self.cfg.max_rto)
    }

    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }

    pub fn rttvar(&self) -> Dur {
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
        e.sample(Dur::from_ms(100));
        // SRTT 100, RTTVAR 50, RTO = 100 + 200 = 300 ms.
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(Dur::from_ms(100)), Dur::from_ms(50), Dur::from_ms(300)));
        e.sample(Dur::from_ms(200));
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5; RTO = 112.5 + 250.
        assert_eq!(e.rttvar(), Dur::from_us(62_500));
        assert_eq!(e.srtt(), Some(Dur::from_us(112_500)));
        assert_eq!(e.rto(), Dur::from_us(362_500));
    }

    #[test]
    fn bounds_and_backoff() {
        let mut e = RttEstimator::new(RttConfig::default());
        e.sample(Dur::from_ms(10));
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
            e.sample(Dur::from_ms(100));
        }
        assert_eq!(e.rto(), Dur::from_ms(600));
    }
}
