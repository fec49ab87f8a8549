//! TCP Tahoe (the "Vanilla" TCP of the classic studies): Reno's window
//! growth, but any loss, whether inferred from three duplicate ACKs or from a
//! timeout, restarts slow start from one segment (Jacobson 1988; RFC 5681
//! section 3.1 loss window). There is no fast recovery: after a fast
//! retransmit the sender goes back to the first unacknowledged segment.

use super::reno::{Reno, RenoConfig};
use super::CongestionControl;
use crate::time::Time;

#[derive(Clone, Debug)]
pub struct Tahoe(Reno);

impl Tahoe {
    pub fn new(cfg: RenoConfig) -> Tahoe {
        Tahoe(Reno::new(cfg))
    }
}

impl CongestionControl for Tahoe {
    fn on_ack(&mut self, now: Time, acked: u64, flight: u64) {
        self.0.on_ack(now, acked, flight);
    }
    /// ssthresh = max(FlightSize/2, 2 SMSS) and cwnd = 1 SMSS, as on a timeout.
    fn on_congestion_event(&mut self, now: Time, flight: u64) {
        self.0.on_timeout(now, Some(flight));
    }
    fn on_timeout(&mut self, now: Time, basis: Option<u64>) {
        self.0.on_timeout(now, basis);
    }
    fn window(&self) -> u64 {
        self.0.window()
    }
    fn ssthresh(&self) -> u64 {
        self.0.ssthresh()
    }
    fn cap_window(&mut self, now: Time, cap: u64) {
        self.0.cap_window(now, cap);
    }
}
