//! TCP NewReno, RFC 6582: Reno's window management (RFC 5681) with a
//! recovery that lasts until every segment outstanding at the start of
//! recovery (the "recover" point) is acknowledged. The partial-ACK handling
//! (RFC 6582 section 3.2, step 3) lives in the sender, which asks
//! [`crate::cc::AnyCc::recovery`] which recovery to run.

use super::reno::{Reno, RenoConfig};
use super::CongestionControl;
use crate::time::Time;

#[derive(Clone, Debug)]
pub struct NewReno(Reno);

impl NewReno {
    pub fn new(cfg: RenoConfig) -> NewReno {
        NewReno(Reno::new(cfg))
    }
}

impl CongestionControl for NewReno {
    fn on_ack(&mut self, now: Time, acked: u64, flight: u64) {
        self.0.on_ack(now, acked, flight);
    }
    fn on_congestion_event(&mut self, now: Time, flight: u64) {
        self.0.on_congestion_event(now, flight);
    }
    fn on_timeout(&mut self, now: Time, flight: u64) {
        self.0.on_timeout(now, flight);
    }
    fn window(&self) -> u64 {
        self.0.window()
    }
    fn ssthresh(&self) -> u64 {
        self.0.ssthresh()
    }
    fn on_idle_restart(&mut self, now: Time, restart_window: u64) {
        self.0.on_idle_restart(now, restart_window);
    }
}
