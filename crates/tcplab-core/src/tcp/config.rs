//! Per-connection TCP settings.

use super::rtt::RttConfig;
use crate::cc::{AnyCc, Cubic, CubicConfig, HighSpeed, HighSpeedConfig, HighSpeedLookup, Reno, RenoConfig, Tahoe};
use crate::time::Dur;

/// Which congestion controller a connection uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CcKind {
    Tahoe,
    Reno,
    NewReno,
    Sack,
    HighSpeed,
    Cubic,
}

impl CcKind {
    pub const NAMES: &'static [&'static str] = &["tahoe", "reno", "newreno", "sack", "highspeed", "cubic"];

    pub fn parse(s: &str) -> Option<CcKind> {
        Some(match s {
            "tahoe" => CcKind::Tahoe,
            "reno" => CcKind::Reno,
            "newreno" => CcKind::NewReno,
            "sack" => CcKind::Sack,
            "highspeed" => CcKind::HighSpeed,
            "cubic" => CcKind::Cubic,
            _ => return None,
        })
    }

    /// Whether the receiver sends SACK blocks for this controller.
    pub fn uses_sack(self) -> bool {
        matches!(self, CcKind::Sack | CcKind::HighSpeed | CcKind::Cubic)
    }
}

/// How SACK recovery decides what to send (for controllers whose recovery is SACK).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum SackRecovery {
    /// RFC 6675: `pipe` from the scoreboard, `IsLost`, `NextSeg`.
    #[default]
    Rfc6675,
    /// ns-2's `Agent/TCP/Sack1` as of 1998 (tcp-sack1.cc 1.23, the ns-2.1b3
    /// era): a `pipe` counter set to cwnd - 3 segments at the third
    /// duplicate ACK, one segment less per ACK (two per partial ACK), one
    /// more per segment sent; holes below the highest SACKed segment are
    /// resent first; no guard against a fast retransmit right after a fast
    /// recovery (only a timeout's `recover` point holds one back).
    /// `stall_at_end`: as that code did, nothing is sent in recovery, not
    /// even a hole, once every byte written has been sent once.
    Ns2Sack1 { stall_at_end: bool },
    /// ns-2 2.35's `Agent/TCP/Sack1` (tcp-sack1.cc with its defaults): the
    /// same `pipe` counter, but set at the fast retransmit to the segments
    /// outstanding (`maxseq_ - highest_ack_`, limited transmit's included)
    /// less 3 (`oldCode_` off); outside recovery a duplicate ACK counts (and
    /// triggers limited transmit) only when its SACK blocks tell something
    /// new (`CheckUpdate`); after a timeout, duplicate ACKs are ignored until
    /// an ACK of new data (`timeout_`); no stall at the end.
    Ns2Sack1v235,
    /// Linux 2.6's rate-halving (`tcp_cwnd_down` in the Recovery state, as
    /// of 2.6.2x-3.1): RFC 6675's scoreboard, `IsLost` and `NextSeg`, but
    /// the window does not drop to ssthresh at the fast retransmit. It starts
    /// at cwnd and loses one segment every second ACK that SACKs or
    /// acknowledges new data, not below ssthresh, and is kept at most one
    /// segment above `pipe`; so a segment goes out for every second such ACK.
    /// The recovery ends with cwnd = min(that window, ssthresh)
    /// (`tcp_complete_cwr`).
    LinuxRateHalving,
}

/// Which outstanding segments SACK recovery deems lost, where it keeps a
/// scoreboard ([`SackRecovery::Rfc6675`] and [`SackRecovery::LinuxRateHalving`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum SackLoss {
    /// RFC 6675 section 4, `IsLost(SeqNum)`: more than (DupThresh - 1) *
    /// SMSS bytes SACKed above the segment; and a fast retransmit at the
    /// DupThresh-th duplicate ACK or once the first segment is lost so.
    #[default]
    Rfc6675,
    /// Forward acknowledgement (Mathis and Mahdavi, SIGCOMM 1996), on by
    /// default in Linux from 2.2 to 4.10 (`tcp_fack`; off in 4.11, gone in
    /// 4.15, both in favour of RACK): a segment not SACKed is
    /// lost once the highest SACKed byte (the "forward-most" one) lies more
    /// than (DupThresh - 1) * SMSS bytes past its end, the bytes between
    /// SACKed or not (`tcp_update_scoreboard` marks the first `fackets_out -
    /// reordering` segments); and a fast retransmit once the first segment
    /// is lost so (`tcp_time_to_recover`: `fackets_out > reordering`).
    Fack,
}

/// How NewReno recovers (for `newreno`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum NewRenoRecovery {
    /// RFC 6582: window inflation by one segment per duplicate ACK; a
    /// partial ACK retransmits the next hole and deflates by the amount
    /// acknowledged; a new recovery only after the ACK passes `recover`.
    #[default]
    Rfc6582,
    /// ns-2's `Agent/TCP/Newreno` with `newreno_changes_ 1` (tcp-newreno.cc
    /// 1.7, 1997, Allman's version of Hoe's algorithm, the ns-2.1b3 era): in
    /// recovery one new segment for every second duplicate ACK, whatever the
    /// window (the "flywheel"); a partial ACK deflates the window to cwnd and
    /// retransmits the next hole, nothing else; the full ACK also grows the
    /// window; and without Floyd's guard, a fast retransmit may follow a
    /// fast recovery at once (only a timeout's `recover` point holds one back).
    Ns2Flywheel,
}

/// What a retransmission timeout does to ssthresh.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum TimeoutSsthresh {
    /// RFC 5681 section 3.1, equation (4): `max(FlightSize / 2, 2 * SMSS)`,
    /// at every timeout.
    #[default]
    Rfc5681,
    /// ns-2's `TcpAgent::slowdown` (`CLOSE_SSTHRESH_HALF`, tcp.cc): half the
    /// window `min(cwnd, wnd)` in whole segments, at least 2, at every
    /// timeout; Reno's and Newreno's `timeout` zero the duplicate ACKs'
    /// inflation (`dupwnd_`) first, and a NewReno partial ACK's deflation of
    /// cwnd stays. In a fast recovery that is half the window the fast
    /// retransmit had already halved.
    Ns2,
    /// Linux's `tcp_enter_loss`: half the congestion window in whole
    /// segments, at least 2 (`tcp_reno_ssthresh`), but only from the Open
    /// and Disorder states or a loss state whose retransmission was
    /// acknowledged: a timeout during a fast recovery, or a repeated timeout
    /// of the same segment, keeps ssthresh.
    Linux,
}

#[derive(Clone, Debug)]
pub struct TcpConfig {
    pub cc: CcKind,
    /// Maximum segment size: payload bytes per full segment.
    pub mss: u32,
    /// Header bytes added to every packet on the wire.
    pub header: u32,
    /// Initial window, bytes.
    pub iw_bytes: u64,
    /// Maximum window (the receiver's advertised window), bytes.
    pub max_window: u64,
    /// Initial slow-start threshold, bytes (`u64::MAX`: unlimited).
    pub initial_ssthresh: u64,
    pub rtt: RttConfig,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Most doublings of the RTO.
    pub max_backoff: u32,
    /// Retransmissions of one segment (or of the SYN, the SYN-ACK, a
    /// client message) after which the connection gives up and closes
    /// without its data: RFC 9293 section 3.8.3's threshold R2 (RFC 1122
    /// 4.2.3.5), here as a count, as Linux's `tcp_retries2` (default 15).
    /// `u32::MAX`: never, as ns-2.
    pub max_retries: u32,
    /// Byte-counting limit L in slow start, segments (RFC 3465).
    pub abc_limit: u32,
    pub delayed_ack: bool,
    pub delack_timeout: Dur,
    /// With delayed ACKs, ACK at once every this many full segments.
    pub delack_segments: u32,
    /// With delayed ACKs, the first this many ACKs of a connection go out at
    /// once, one per data segment: Linux's quick-ACK mode, which a receiver
    /// enters at its first data segment (`tcp_incr_quickack`, at most
    /// TCP_MAX_QUICKACKS = 16). Zero: none.
    pub quickack: u32,
    /// RTT measurement as with RFC 7323 timestamps, which a 2010 Linux sends
    /// by default: a retransmitted segment can be timed (Karn's rule is not
    /// needed, the ACK echoes the transmission it answers), so the first ACK
    /// after a timeout gives a sample, and a sample clears the RTO backoff
    /// (Linux `tcp_valid_rtt_meas`). One segment is timed at a time, as
    /// without timestamps.
    pub timestamps: bool,
    /// RFC 3042 limited transmit.
    pub limited_transmit: bool,
    /// RFC 5681 section 4.1 restart after idle.
    pub idle_restart: bool,
    /// Most SACK blocks per ACK (RFC 2018: 3 with timestamps, 4 without).
    pub sack_blocks: u32,
    /// RFC 3465 byte counting (Reno family); otherwise one segment per ACK.
    pub byte_counting: bool,
    /// CUBIC's HyStart, as Linux's from 2.6.29 (see [`crate::cc::cubic`]).
    pub hystart: bool,
    /// SYN / SYN-ACK / opening message before data, FIN at the end.
    pub handshake: bool,
    /// Linux 2.4 local congestion: a segment refused by the sending host's
    /// full interface queue is a send stall and enters CWR (see [`super::sender`]).
    pub local_congestion: bool,
    /// How HighSpeed TCP finds a(w) and b(w).
    pub hstcp_lookup: HighSpeedLookup,
    /// The receiver's window grows from 4 segments by 2 per segment received
    /// (Linux 2.4), up to `max_window`, and ACKs carry it.
    pub window_growth: bool,
    /// What SACK recovery sends (see [`SackRecovery`]).
    pub sack_recovery: SackRecovery,
    /// Which segments SACK recovery deems lost (see [`SackLoss`]).
    pub sack_loss: SackLoss,
    /// How NewReno recovers (see [`NewRenoRecovery`]).
    pub newreno_recovery: NewRenoRecovery,
    /// What a retransmission timeout does to ssthresh (see [`TimeoutSsthresh`]).
    pub timeout_ssthresh: TimeoutSsthresh,
    /// The ACK that ends a Reno or NewReno fast recovery also grows the
    /// window, as an ACK outside recovery would (ns-2's Reno and Newreno
    /// agents: `recv_newack_helper` calls `opencwnd` after the window is
    /// deflated to ssthresh; its Sack1 does not). RFC 5681 section 3.2 step 6
    /// sets cwnd to ssthresh only.
    pub exit_growth: bool,
    /// Limited transmit also sends the next segment when a timeout's go-back
    /// has pulled it below the highest sent, as ns-2's `singledup_`
    /// (`send_one`) does; RFC 5681 section 3.2 step 1 allows previously
    /// unsent data only. With Tahoe (no fast recovery) a timeout also
    /// leaves the duplicate-ACK count as it was, as ns-2's `Agent/TCP` does,
    /// so the duplicate ACKs still arriving after it send nothing.
    pub lt_old_data: bool,
    /// Each connection's clock ticks at its own phase, drawn from the run's
    /// seed and the connection's number, uniformly within one granularity
    /// (ns-2's `boot_time_`); `rtt.phase_ns` is then ignored.
    pub clock_phase_random: bool,
    /// An ACK's SACK option costs 8 bytes a block, as ns-2's Sack1 sink
    /// counts it (`Sacker::append_ack`: `size() += sack_index * 8`), not
    /// the 4 + 8 per block (two NOPs, kind, length) stacks send.
    pub ns2_sack_bytes: bool,
    /// Reno's window (tahoe, reno, newreno, sack) keeps the fraction of a
    /// byte that each congestion-avoidance increment SMSS*SMSS/cwnd leaves
    /// when ACKs are counted (`byte_counting` off), as ns-2's `cwnd_`, a
    /// double in segments, grows by `1 / cwnd_` (`opencwnd`).
    pub ns2_ca_fraction: bool,
    /// A fast retransmit halves the window, min(cwnd, receive window), not
    /// the flight: ssthresh is half of it in whole segments (at least 2) and
    /// cwnd the half itself, fraction and all, as ns-2's `slowdown`
    /// (`precision_reduce_`, `CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF`).
    pub ns2_fr_halving: bool,
    /// Each opportunity to send waits a random time, uniform in [0,
    /// send_jitter], then every segment held back leaves together (ns-2's
    /// `overhead_`: `send_much` sets its delayed-send timer to
    /// `Random::uniform(overhead_)` and, when it fires, sends all the window
    /// allows): it breaks the phase effects of a deterministic drop-tail
    /// network (Floyd and Jacobson 1992). Zero: segments leave at once.
    pub send_jitter: Dur,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CcKind::Reno,
            mss: 1460,
            header: 40,
            iw_bytes: 1460,
            max_window: 64 * 1024,
            initial_ssthresh: u64::MAX,
            rtt: RttConfig::default(),
            dupack_threshold: 3,
            max_backoff: 6,
            max_retries: 15,
            abc_limit: 2,
            delayed_ack: false,
            delack_timeout: Dur::from_ms(200),
            delack_segments: 2,
            quickack: 0,
            timestamps: false,
            limited_transmit: false,
            idle_restart: true,
            sack_blocks: 3,
            byte_counting: true,
            hystart: false,
            handshake: false,
            local_congestion: false,
            hstcp_lookup: HighSpeedLookup::Formula,
            window_growth: false,
            sack_recovery: SackRecovery::Rfc6675,
            sack_loss: SackLoss::Rfc6675,
            newreno_recovery: NewRenoRecovery::Rfc6582,
            timeout_ssthresh: TimeoutSsthresh::Rfc5681,
            exit_growth: false,
            lt_old_data: false,
            clock_phase_random: false,
            ns2_sack_bytes: false,
            ns2_ca_fraction: false,
            ns2_fr_halving: false,
            send_jitter: Dur::ZERO,
        }
    }
}

impl TcpConfig {
    pub fn make_cc(&self) -> AnyCc {
        let mss = u64::from(self.mss);
        let cfg = RenoConfig {
            mss,
            initial_window: self.iw_bytes,
            initial_ssthresh: self.initial_ssthresh,
            abc_limit: u64::from(self.abc_limit),
            byte_counting: self.byte_counting,
            keep_fraction: self.ns2_ca_fraction,
            halve_window: self.ns2_fr_halving,
        };
        match self.cc {
            CcKind::Tahoe => AnyCc::Tahoe(Tahoe::new(cfg)),
            CcKind::Reno => AnyCc::Reno(Reno::new(cfg)),
            CcKind::NewReno => AnyCc::NewReno(Reno::new(cfg)),
            CcKind::Sack => AnyCc::Sack(Reno::new(cfg)),
            CcKind::HighSpeed => AnyCc::HighSpeed(HighSpeed::new(HighSpeedConfig {
                mss,
                initial_window: self.iw_bytes,
                initial_ssthresh: self.initial_ssthresh,
                abc_limit: u64::from(self.abc_limit),
                byte_counting: self.byte_counting,
                lookup: self.hstcp_lookup,
                ..Default::default()
            })),
            CcKind::Cubic => AnyCc::Cubic(Cubic::new(CubicConfig {
                mss,
                initial_window: self.iw_bytes,
                initial_ssthresh: self.initial_ssthresh,
                abc_limit: u64::from(self.abc_limit),
                byte_counting: self.byte_counting,
                hystart: self.hystart,
                ..Default::default()
            })),
        }
    }

    /// The receiver's window before any data: `max_window`, or with
    /// `window_growth` 4 segments (Linux 2.4 `tcp_select_initial_window`).
    pub fn initial_rwnd(&self) -> u64 {
        if self.window_growth {
            (4 * u64::from(self.mss)).min(self.max_window)
        } else {
            self.max_window
        }
    }

    /// Initial window in segments (fractional when given in bytes).
    pub fn iw_segments(&self) -> f64 {
        self.iw_bytes as f64 / f64::from(self.mss)
    }
}
