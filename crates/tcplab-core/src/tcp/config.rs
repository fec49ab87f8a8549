//! Per-connection TCP settings.

use super::rtt::RttConfig;
use crate::cc::{AnyCc, NewReno, Reno, RenoConfig, Tahoe};
use crate::time::Dur;

/// Which congestion controller a connection uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CcKind {
    Tahoe,
    Reno,
    NewReno,
}

impl CcKind {
    pub fn parse(s: &str) -> Option<CcKind> {
        match s {
            "tahoe" => Some(CcKind::Tahoe),
            "reno" => Some(CcKind::Reno),
            "newreno" => Some(CcKind::NewReno),
            _ => None,
        }
    }
    pub const NAMES: &'static [&'static str] = &["tahoe", "reno", "newreno"];
}

#[derive(Clone, Debug)]
pub struct TcpConfig {
    pub cc: CcKind,
    /// Maximum segment size: payload bytes per full segment.
    pub mss: u32,
    /// Header bytes added to every packet on the wire (data and ACKs).
    pub header: u32,
    /// Initial window, in segments.
    pub iw: u32,
    /// Maximum window (the receiver's advertised window), bytes.
    pub max_window: u64,
    /// Initial slow-start threshold, bytes (`u64::MAX`: unlimited).
    pub initial_ssthresh: u64,
    pub rtt: RttConfig,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Most doublings of the RTO.
    pub max_backoff: u32,
    /// Byte-counting limit L in slow start, segments (RFC 3465).
    pub abc_limit: u32,
    pub delayed_ack: bool,
    pub delack_timeout: Dur,
    /// With delayed ACKs, ACK at once every this many full segments.
    pub delack_segments: u32,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CcKind::Reno,
            mss: 1460,
            header: 40,
            iw: 1,
            max_window: 64 * 1024,
            initial_ssthresh: u64::MAX,
            rtt: RttConfig::default(),
            dupack_threshold: 3,
            max_backoff: 6,
            abc_limit: 2,
            delayed_ack: false,
            delack_timeout: Dur::from_ms(200),
            delack_segments: 2,
        }
    }
}

impl TcpConfig {
    pub fn make_cc(&self) -> AnyCc {
        let mss = u64::from(self.mss);
        let cfg = RenoConfig {
            mss,
            initial_window: u64::from(self.iw) * mss,
            initial_ssthresh: self.initial_ssthresh,
            abc_limit: u64::from(self.abc_limit),
        };
        match self.cc {
            CcKind::Tahoe => AnyCc::Tahoe(Tahoe::new(cfg)),
            CcKind::Reno => AnyCc::Reno(Reno::new(cfg)),
            CcKind::NewReno => AnyCc::NewReno(NewReno::new(cfg)),
        }
    }
}
