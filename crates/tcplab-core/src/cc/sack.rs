//! TCP with selective acknowledgements: Reno's window management (RFC 5681)
//! with the SACK-based loss recovery of RFC 6675, driven by the receiver's
//! SACK blocks (RFC 2018). The scoreboard, `IsLost`, `pipe` and `NextSeg`
//! live in the sender, which runs them for every controller whose
//! [`crate::cc::AnyCc::recovery`] is `Sack`.

use super::reno::{Reno, RenoConfig};
use super::CongestionControl;
use crate::time::Time;

#[derive(Clone, Debug)]
pub struct Sack(Reno);

impl Sack {
    pub fn new(cfg: RenoConfig) -> Sack {
        Sack(Reno::new(cfg))
    }
}

impl CongestionControl for Sack {
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
