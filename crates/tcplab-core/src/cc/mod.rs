//! Congestion controllers: one file per algorithm, one trait, enum dispatch.
//!
//! A controller owns the congestion window and slow-start threshold and
//! nothing else: loss detection and recovery (duplicate ACK counting, fast
//! retransmit, window inflation during fast recovery, retransmission timers)
//! belong to the sender in [`crate::tcp`]. The sender reports events through
//! the trait and reads [`CongestionControl::window`] back.

pub mod cubic;
pub mod highspeed;
pub mod newreno;
pub mod reno;
pub mod sack;
pub mod tahoe;

use crate::time::{Dur, Time};
pub use cubic::{Cubic, CubicConfig};
pub use highspeed::{HighSpeed, HighSpeedConfig, Lookup as HighSpeedLookup};
pub use newreno::NewReno;
pub use sack::Sack;
pub use reno::{Reno, RenoConfig};
pub use tahoe::Tahoe;

/// What the sender tells a congestion controller. Only `on_ack`,
/// `on_congestion_event`, `on_timeout` and `window` must be provided.
pub trait CongestionControl {
    /// A cumulative ACK newly acknowledged `acked` bytes, outside loss
    /// recovery; `flight` is the amount outstanding before this ACK.
    fn on_ack(&mut self, now: Time, acked: u64, flight: u64);
    /// Loss was inferred from duplicate ACKs with `flight` bytes outstanding.
    fn on_congestion_event(&mut self, now: Time, flight: u64);
    /// The retransmission timer expired. `basis` is the window, in bytes,
    /// whose half becomes ssthresh (RFC 5681: the flight; see
    /// [`crate::tcp::TimeoutSsthresh`]), or `None` to keep ssthresh, as Linux
    /// does for a timeout within a recovery or a loss already under way.
    fn on_timeout(&mut self, now: Time, basis: Option<u64>);
    /// The congestion window, in bytes.
    fn window(&self) -> u64;
    /// The slow-start threshold, in bytes (`u64::MAX` when unset).
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    /// Loss recovery ended (the sender deflated its window).
    fn on_recovery_exit(&mut self, _now: Time) {}
    /// A new smoothed RTT is known.
    fn on_rtt(&mut self, _srtt: Dur) {}
    /// Every ACK of new data that fully acknowledges a segment never
    /// retransmitted: `rtt` is that of the newest such segment (Linux's
    /// `pkts_acked` sample), `ack` the cumulative ACK and `snd_nxt` the next
    /// byte to send, before this ACK releases new data.
    fn on_delay_sample(&mut self, _now: Time, _rtt: Dur, _ack: u64, _snd_nxt: u64) {}
    /// The window becomes min(cwnd, `cap`): after an idle period of more
    /// than an RTO, `cap` the restart window (RFC 5681 section 4.1); at the
    /// end of a rate-halving recovery, the window it ended with (Linux's
    /// `tcp_complete_cwr`).
    fn cap_window(&mut self, _now: Time, _cap: u64) {}
    /// Whether the controller is in slow start.
    fn in_slow_start(&self) -> bool {
        self.window() < self.ssthresh()
    }
}

/// Every controller, dispatched by `match` so the hot path has no virtual call.
#[derive(Clone, Debug)]
pub enum AnyCc {
    Tahoe(Tahoe),
    Reno(Reno),
    NewReno(NewReno),
    Sack(Sack),
    HighSpeed(HighSpeed),
    Cubic(Cubic),
}

/// How the sender recovers after a fast retransmit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// No fast recovery: go back to the first unacknowledged segment in slow start.
    None,
    /// Reno fast recovery: leave on the first ACK of new data (RFC 5681 section 3.2).
    Reno,
    /// NewReno: stay until the recover point is acknowledged, retransmitting on each partial ACK (RFC 6582).
    NewReno,
    /// SACK-based loss recovery (RFC 6675).
    Sack,
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyCc::Tahoe($c) => $e,
            AnyCc::Reno($c) => $e,
            AnyCc::NewReno($c) => $e,
            AnyCc::Sack($c) => $e,
            AnyCc::HighSpeed($c) => $e,
            AnyCc::Cubic($c) => $e,
        }
    };
}

impl AnyCc {
    pub fn name(&self) -> &'static str {
        match self {
            AnyCc::Tahoe(_) => "tahoe",
            AnyCc::Reno(_) => "reno",
            AnyCc::NewReno(_) => "newreno",
            AnyCc::Sack(_) => "sack",
            AnyCc::HighSpeed(_) => "highspeed",
            AnyCc::Cubic(_) => "cubic",
        }
    }

    pub fn recovery(&self) -> Recovery {
        match self {
            AnyCc::Tahoe(_) => Recovery::None,
            AnyCc::Reno(_) => Recovery::Reno,
            AnyCc::NewReno(_) => Recovery::NewReno,
            // HighSpeed and CUBIC change the window's response, not the loss
            // recovery: both recover with SACK, as their RFCs assume.
            AnyCc::Sack(_) | AnyCc::HighSpeed(_) | AnyCc::Cubic(_) => Recovery::Sack,
        }
    }
}

impl CongestionControl for AnyCc {
    #[inline]
    fn on_ack(&mut self, now: Time, acked: u64, flight: u64) {
        dispatch!(self, c => c.on_ack(now, acked, flight))
    }
    #[inline]
    fn on_congestion_event(&mut self, now: Time, flight: u64) {
        dispatch!(self, c => c.on_congestion_event(now, flight))
    }
    #[inline]
    fn on_timeout(&mut self, now: Time, basis: Option<u64>) {
        dispatch!(self, c => c.on_timeout(now, basis))
    }
    #[inline]
    fn window(&self) -> u64 {
        dispatch!(self, c => c.window())
    }
    #[inline]
    fn ssthresh(&self) -> u64 {
        dispatch!(self, c => c.ssthresh())
    }
    #[inline]
    fn on_recovery_exit(&mut self, now: Time) {
        dispatch!(self, c => c.on_recovery_exit(now))
    }
    #[inline]
    fn on_rtt(&mut self, srtt: Dur) {
        dispatch!(self, c => c.on_rtt(srtt))
    }
    #[inline]
    fn on_delay_sample(&mut self, now: Time, rtt: Dur, ack: u64, snd_nxt: u64) {
        if let AnyCc::Cubic(c) = self {
            c.on_delay_sample(now, rtt, ack, snd_nxt)
        }
    }
    #[inline]
    fn cap_window(&mut self, now: Time, cap: u64) {
        dispatch!(self, c => c.cap_window(now, cap))
    }
}
