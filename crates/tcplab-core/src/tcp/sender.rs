//! The sending side of a TCP transfer: byte sequence numbers, a congestion
//! controller behind [`CongestionControl`], loss recovery, and the
//! retransmission timer (RFC 6298).
//!
//! Loss recovery depends on the controller's [`Recovery`]:
//! - `None` (Tahoe): after a fast retransmit, slow start from the first
//!   unacknowledged segment;
//! - `Reno`: fast recovery with window inflation, left on the first new ACK
//!   (RFC 5681 section 3.2);
//! - `NewReno`: the same, but a partial ACK retransmits the next hole and
//!   recovery lasts until the recover point is acknowledged (RFC 6582), or,
//!   with [`NewRenoRecovery::Ns2Flywheel`], ns-2's 1997-98 NewReno (one new
//!   segment per two duplicate ACKs in recovery);
//! - `Sack`: the conservative SACK-based recovery of RFC 6675 (scoreboard,
//!   `IsLost`, `pipe`, `NextSeg`), or, with [`SackRecovery::Ns2Sack1`],
//!   ns-2's 1998 `Sack1` agent (a `pipe` counter; see [`Sender::sack1_send`]).
//!
//! Limited transmit (RFC 3042) and restart after idle (RFC 5681 section 4.1)
//! are options, and so are what a timeout does to ssthresh
//! ([`TimeoutSsthresh`]: RFC 5681's half the flight, ns-2's half the window,
//! or Linux's no second reduction in one recovery or loss) and growth on the
//! ACK that ends a Reno or NewReno recovery (ns-2; [`TcpConfig::exit_growth`]).
//!
//! **Local congestion (Linux 2.4 send stalls).** The caller may limit how
//! many segments the sending host's interface queue accepts now
//! ([`Sender::set_room`]). A segment that finds no room is not sent: the
//! sender counts a send stall and, as Linux 2.4's `tcp_transmit_skb` did on a
//! refusal by the device queue (`tcp_enter_cwr`), enters congestion window
//! reduction (CWR) unless it is already recovering: ssthresh takes the
//! controller's decrease, the window is capped at min(cwnd, flight + 1 SMSS)
//! and, as Linux's `tcp_cwnd_down`, shrinks by one SMSS every second ACK until
//! it reaches ssthresh. The window does not grow during CWR, which ends when
//! everything sent before it is acknowledged; no segment is retransmitted.
//! The refused segment goes out at the next opportunity (the next ACK), or,
//! with nothing in flight, after one RTO (Linux's probe timer). The sender needs no engine: every call takes `now` and
//! appends the segments to transmit to `out`; [`Sender::poll_timeout`] tells
//! when it next wants [`Sender::on_timeout`].

use super::config::{NewRenoRecovery, SackLoss, SackRecovery, TcpConfig, TimeoutSsthresh};
use super::rtt::RttEstimator;
use crate::cc::{AnyCc, CongestionControl, Recovery};
use crate::time::Time;
use std::collections::VecDeque;

/// A segment the sender wants transmitted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub retx: bool,
    /// The last segment of the transfer (carries FIN when the connection closes).
    pub last: bool,
}

/// What the sender is doing, as web100 reports it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    SlowStart,
    CongestionAvoidance,
    Recovery,
    /// Congestion window reduction after a send stall (Linux's CWR state).
    Cwr,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::SlowStart => "slow_start",
            State::CongestionAvoidance => "congestion_avoidance",
            State::Recovery => "recovery",
            State::Cwr => "cwr",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    /// Data packets transmitted, retransmissions included.
    pub data_pkts: u64,
    /// Retransmitted data packets (= `retx_fast_pkts + retx_timeout_pkts`).
    pub retx_pkts: u64,
    /// Retransmissions after a fast retransmit (in recovery, or Tahoe's go-back).
    pub retx_fast_pkts: u64,
    /// Retransmissions after a retransmission timeout.
    pub retx_timeout_pkts: u64,
    /// Retransmission timer expirations.
    pub timeouts: u64,
    /// Fast retransmits (losses detected by duplicate ACKs or SACK).
    pub fast_retx: u64,
    /// Duplicate ACKs received.
    pub dupacks: u64,
    /// SACK blocks received.
    pub sack_blocks: u64,
    /// Entries into slow start (the first included).
    pub ss_entries: u64,
    /// Entries into congestion avoidance.
    pub ca_entries: u64,
    /// Times the sender became blocked by the receiver's window.
    pub rwnd_stalls: u64,
    /// Segments refused by a full interface queue (web100 `SendStall`).
    pub send_stalls: u64,
    /// Entries into congestion window reduction after a send stall.
    pub cwr_entries: u64,
    /// ACKs (new, duplicate or not) that reached the sender (web100 `AckPktsIn`).
    pub acks_in: u64,
    /// ACKs that carried SACK blocks (web100 `SACKsRcvd`).
    pub sack_acks: u64,
    /// ACKs that grew the window in slow start (web100 `SlowStart`).
    pub ss_acks: u64,
    /// ACKs handled by congestion avoidance (web100 `CongAvoid`).
    pub ca_acks: u64,
}

/// Congestion window reduction after a send stall.
#[derive(Copy, Clone, Debug)]
struct Cwr {
    /// `snd_nxt` at entry: CWR ends when it is acknowledged.
    high_seq: u64,
    /// The window in use during CWR, bytes (never below ssthresh).
    cap: u64,
    /// ACKs since the last one-segment decrease.
    acks: u32,
}

#[derive(Copy, Clone, Debug)]
struct SbSeg {
    seq: u64,
    /// When it was first sent.
    sent: Time,
    len: u32,
    sacked: bool,
    /// Retransmitted during the current recovery.
    retx: bool,
    /// Ever retransmitted: its ACK gives no delay sample (Karn).
    resent: bool,
}

/// ns-2 Sack1's options (see [`SackRecovery::Ns2Sack1`]): one byte, so
/// that `Option<Sack1>` is one byte too.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Sack1 {
    /// 1998.
    Y1998,
    /// 1998, sending nothing in recovery once all data is sent.
    Y1998Stall,
    /// 2.35.
    Y235,
}

impl Sack1 {
    fn stall_at_end(self) -> bool {
        self == Sack1::Y1998Stall
    }

    fn is_235(self) -> bool {
        self == Sack1::Y235
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Cause {
    Fast,
    Timeout,
}

pub struct Sender {
    mss: u64,
    iw_bytes: u64,
    max_window: u64,
    dupthresh: u32,
    max_backoff: u32,
    /// See [`TcpConfig::max_retries`].
    max_retries: u32,
    /// Retransmission timeouts since the last new ACK.
    retries: u32,
    /// The sender gave up after `max_retries` (RFC 9293 section 3.8.3).
    aborted: bool,
    limited_transmit: bool,
    /// See [`TcpConfig::lt_old_data`].
    lt_old_data: bool,
    /// See [`TcpConfig::ns2_fr_halving`].
    fr_halves_window: bool,
    idle_restart: bool,
    recovery: Recovery,
    /// One past the last byte the application has written (`u64::MAX`: unbounded).
    end: u64,
    pub cc: AnyCc,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    dupacks: u32,
    in_recovery: bool,
    /// Highest sequence sent when the last recovery or timeout started (RFC 6582 "recover").
    recover: Option<u64>,
    /// Fast-recovery window inflation, bytes (Reno and NewReno); negative
    /// when NewReno's partial ACKs deflated the window below cwnd.
    inflation: i64,
    /// A partial ACK has arrived in this NewReno recovery (RFC 6582: only the
    /// first restarts the retransmission timer).
    partial_acked: bool,
    /// New data limited transmit sent since the last new ACK, bytes (RFC 5681
    /// section 3.2 step 2 leaves it out of FlightSize at a fast retransmit).
    lt_sent: u64,
    /// Outstanding segments, for SACK recovery.
    scoreboard: VecDeque<SbSeg>,
    /// ns-2 Sack1's `pipe_` in bytes (a counter, not the scoreboard's), when
    /// `sack1` is set.
    pipe1: i64,
    sack1: Option<Sack1>,
    /// NewReno as ns-2's `newreno_changes_ 1` (see [`NewRenoRecovery::Ns2Flywheel`]).
    flywheel: bool,
    /// Linux's rate-halving in SACK recovery (see [`SackRecovery::LinuxRateHalving`]).
    rate_halving: bool,
    /// Forward acknowledgement decides which segments are lost (see [`SackLoss::Fack`]).
    fack: bool,
    /// The window during a rate-halving recovery, and the ACKs of progress
    /// since its last decrease (Linux's `snd_cwnd_cnt`).
    rh_cwnd: Option<u64>,
    rh_acks: u32,
    /// See [`TcpConfig::exit_growth`] (Reno and NewReno recovery only; always with the flywheel).
    exit_growth: bool,
    /// RTT samples as with RFC 7323 timestamps (see [`TcpConfig::timestamps`]).
    timestamps: bool,
    /// See [`TcpConfig::timeout_ssthresh`].
    timeout_ssthresh: TimeoutSsthresh,
    pub rtt: RttEstimator,
    timed: Option<(u64, Time)>,
    backoff: u32,
    rto_deadline: Option<Time>,
    last_send: Option<Time>,
    cause: Cause,
    state: State,
    rwnd_limited: bool,
    /// Segments the interface queue accepts now (`u64::MAX`: no limit).
    room: u64,
    cwr: Option<Cwr>,
    /// A single retransmission refused by the interface queue, to resend first.
    retx_pending: Option<u64>,
    pub stats: SenderStats,
}

impl Sender {
    /// A sender of `size` bytes (`None`: unbounded).
    pub fn new(cfg: &TcpConfig, size: Option<u64>) -> Sender {
        let cc = cfg.make_cc();
        let recovery = cc.recovery();
        let mut s = Sender {
            mss: u64::from(cfg.mss),
            iw_bytes: cfg.iw_bytes,
            max_window: cfg.initial_rwnd(),
            dupthresh: cfg.dupack_threshold,
            max_backoff: cfg.max_backoff,
            max_retries: cfg.max_retries,
            retries: 0,
            aborted: false,
            limited_transmit: cfg.limited_transmit,
            lt_old_data: cfg.lt_old_data,
            fr_halves_window: cfg.ns2_fr_halving,
            idle_restart: cfg.idle_restart,
            recovery,
            end: size.unwrap_or(u64::MAX),
            cc,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            inflation: 0,
            partial_acked: false,
            lt_sent: 0,
            scoreboard: VecDeque::new(),
            pipe1: 0,
            sack1: match cfg.sack_recovery {
                SackRecovery::Ns2Sack1 { stall_at_end: false } if recovery == Recovery::Sack => Some(Sack1::Y1998),
                SackRecovery::Ns2Sack1 { stall_at_end: true } if recovery == Recovery::Sack => Some(Sack1::Y1998Stall),
                SackRecovery::Ns2Sack1v235 if recovery == Recovery::Sack => Some(Sack1::Y235),
                _ => None,
            },
            flywheel: recovery == Recovery::NewReno && cfg.newreno_recovery == NewRenoRecovery::Ns2Flywheel,
            rate_halving: recovery == Recovery::Sack && cfg.sack_recovery == SackRecovery::LinuxRateHalving,
            fack: recovery == Recovery::Sack && cfg.sack_loss == SackLoss::Fack,
            rh_cwnd: None,
            rh_acks: 0,
            // ns-2's Reno and Newreno agents grow on that ACK; its Sack1 does not.
            exit_growth: (cfg.exit_growth && recovery != Recovery::Sack)
                || (recovery == Recovery::NewReno && cfg.newreno_recovery == NewRenoRecovery::Ns2Flywheel),
            timestamps: cfg.timestamps,
            timeout_ssthresh: cfg.timeout_ssthresh,
            rtt: RttEstimator::new(cfg.rtt.clone()),
            timed: None,
            backoff: 0,
            rto_deadline: None,
            last_send: None,
            cause: Cause::Fast,
            state: State::SlowStart,
            rwnd_limited: false,
            room: u64::MAX,
            cwr: None,
            retx_pending: None,
            stats: SenderStats::default(),
        };
        s.stats.ss_entries = 1;
        s.update_state();
        s
    }

    /// Bytes sent and not yet cumulatively acknowledged.
    pub fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    pub fn mss(&self) -> u64 {
        self.mss
    }
    pub fn rwnd(&self) -> u64 {
        self.max_window
    }
    /// The receiver advertised `window` bytes (with a growing window).
    #[inline]
    pub fn set_rwnd(&mut self, window: u64) {
        self.max_window = window;
    }
    pub fn state(&self) -> State {
        self.state
    }
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    /// The sender gave up: a segment timed out `max_retries` times in a row.
    pub fn aborted(&self) -> bool {
        self.aborted
    }

    /// RFC 6675 `pipe`: the bytes in flight as the scoreboard defines them.
    pub fn pipe(&self) -> u64 {
        self.sb_scan().0
    }

    /// The sender's invariants, for tests and fuzzing: the sequence space is
    /// ordered, cwnd is at least one segment, and (with SACK recovery) the
    /// scoreboard covers the outstanding bytes exactly, so `pipe` counts each
    /// outstanding byte at most twice (once sent, once retransmitted).
    pub fn check_invariants(&self) -> Result<(), String> {
        if !(self.snd_una <= self.snd_nxt && self.snd_nxt <= self.snd_max) {
            return Err(format!("snd_una {} <= snd_nxt {} <= snd_max {} does not hold", self.snd_una, self.snd_nxt, self.snd_max));
        }
        if self.snd_max > self.end {
            return Err(format!("snd_max {} beyond the data written ({})", self.snd_max, self.end));
        }
        if self.cc.window() < self.mss {
            return Err(format!("cwnd {} below one segment ({})", self.cc.window(), self.mss));
        }
        if self.recovery == Recovery::Sack && self.snd_max > self.snd_una {
            let (Some(first), Some(last)) = (self.scoreboard.front(), self.scoreboard.back()) else {
                return Err("outstanding data but an empty scoreboard".into());
            };
            if first.seq > self.snd_una || last.seq + u64::from(last.len) != self.snd_max {
                return Err(format!("scoreboard [{}, {}) does not cover [{}, {})", first.seq, last.seq + u64::from(last.len), self.snd_una, self.snd_max));
            }
            if self.scoreboard.iter().zip(self.scoreboard.iter().skip(1)).any(|(a, b)| a.seq + u64::from(a.len) != b.seq) {
                return Err("scoreboard segments are not contiguous".into());
            }
            if self.pipe() > 2 * (self.snd_max - self.snd_una) {
                return Err(format!("pipe {} above twice the outstanding bytes {}", self.pipe(), self.snd_max - self.snd_una));
            }
        }
        Ok(())
    }

    /// Everything written was sent and acknowledged.
    pub fn is_done(&self) -> bool {
        self.snd_una >= self.end
    }

    /// The usable window: congestion window plus recovery inflation, capped
    /// by the receiver's window.
    pub fn window(&self) -> u64 {
        self.inflated().min(self.max_window)
    }

    /// cwnd plus the recovery's inflation, which a NewReno partial ACK may
    /// make negative, though never by cwnd or more (the window is at least
    /// one SMSS) and only in a recovery, when cwnd does not change.
    #[inline]
    fn inflated(&self) -> u64 {
        let w = self.cwnd() as i64 + self.inflation;
        debug_assert!(w > 0, "cwnd {} inflation {}", self.cwnd(), self.inflation);
        w as u64
    }

    /// The congestion window in use: the controller's, or during CWR or a
    /// rate-halving recovery the reduction's (web100 `CurCwnd`).
    #[inline]
    pub fn cwnd(&self) -> u64 {
        match self.cwr {
            None => self.rh_cwnd.unwrap_or_else(|| self.cc.window()),
            Some(c) => c.cap,
        }
    }

    /// How many more segments the sending host's interface queue accepts
    /// now (`u64::MAX`: no limit). Set before each call that may transmit.
    #[inline]
    pub fn set_room(&mut self, room: u64) {
        self.room = room;
    }

    /// A segment may go out if the interface queue has room; otherwise a
    /// send stall (see the module documentation).
    #[inline]
    fn take_room(&mut self, now: Time) -> bool {
        if self.room == 0 {
            self.send_stall(now);
            return false;
        }
        if self.room != u64::MAX {
            self.room -= 1;
        }
        true
    }

    fn send_stall(&mut self, now: Time) {
        self.stats.send_stalls += 1;
        if !self.in_recovery && self.cwr.is_none() {
            // Linux 2.4 tcp_enter_cwr: ssthresh from the controller's
            // decrease, cwnd = min(cwnd, in_flight + 1).
            let before = self.cc.window();
            let flight = self.flight();
            self.cc.on_congestion_event(now, flight);
            self.stats.cwr_entries += 1;
            let cap = before.min(flight + self.mss).max(self.cc.window());
            self.cwr = Some(Cwr { high_seq: self.snd_nxt, cap, acks: 0 });
        }
        if self.snd_max <= self.snd_una && self.rto_deadline.is_none() {
            // Nothing in flight brings an ACK: try again after one RTO.
            self.restart_timer(now);
        }
    }

    /// An ACK of new data during CWR (Linux `tcp_cwnd_down`): one SMSS less
    /// every second ACK, the window at most flight + 1 SMSS, never below
    /// ssthresh; CWR ends once `high_seq` is acknowledged.
    fn cwr_on_ack(&mut self, ack: u64) {
        let Some(mut c) = self.cwr else { return };
        if ack >= c.high_seq {
            self.cwr = None;
            return;
        }
        let floor = self.cc.window();
        c.acks += 1;
        if c.acks == 2 {
            c.acks = 0;
            c.cap = c.cap.saturating_sub(self.mss);
        }
        c.cap = c.cap.min(self.flight() + self.mss).max(floor);
        self.cwr = Some(c);
    }

    /// An ACK that SACKs or acknowledges new data in a rate-halving recovery
    /// (Linux 2.6 `tcp_cwnd_down` with `FLAG_ANY_PROGRESS`): one SMSS less
    /// every second such ACK while above ssthresh, then at most pipe + 1 SMSS.
    fn rh_on_progress(&mut self) {
        let Some(mut w) = self.rh_cwnd else { return };
        self.rh_acks += 1;
        if self.rh_acks == 2 {
            self.rh_acks = 0;
            if w > self.cc.window() {
                w -= self.mss;
            }
        }
        self.rh_cwnd = Some(w.min(self.pipe() + self.mss).max(self.mss));
    }

    /// When the retransmission timer expires, if it is running.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.rto_deadline
    }

    /// Open the transfer: send the initial window.
    pub fn start(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.send_data(now, out);
        self.update_state();
    }

    /// The application writes `bytes` more (persistent connections). After
    /// more than one RTO without sending, the window restarts at
    /// min(IW, cwnd) when `idle_restart` is on (RFC 5681 section 4.1).
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<Segment>) {
        if self.aborted {
            return;
        }
        let idle = self.snd_una >= self.snd_max && self.last_send.is_some_and(|t| now.saturating_since(t) > self.rtt.rto());
        if self.idle_restart && idle {
            self.cc.cap_window(now, self.iw_bytes);
            self.update_state();
        }
        self.end = self.end.saturating_add(bytes);
        self.send_data(now, out);
        self.update_state();
    }

    fn restart_timer(&mut self, now: Time) {
        self.rto_deadline = Some(now + self.rtt.backed_off(self.backoff));
    }

    /// The loss response restarts slow start from one segment: a new entry.
    fn restart_slow_start(&mut self) {
        self.stats.ss_entries += 1;
        self.state = State::SlowStart;
    }

    fn update_state(&mut self) {
        let st = if self.in_recovery {
            State::Recovery
        } else if self.cwr.is_some() {
            State::Cwr
        } else if self.cc.in_slow_start() {
            State::SlowStart
        } else {
            State::CongestionAvoidance
        };
        if st != self.state {
            match st {
                State::SlowStart => self.stats.ss_entries += 1,
                State::CongestionAvoidance => self.stats.ca_entries += 1,
                State::Recovery | State::Cwr => {}
            }
            self.state = st;
        }
    }

    /// Length of the segment starting at `seq`. A retransmission never runs
    /// past `snd_max`: new data goes out as new segments (and, with SACK,
    /// onto the scoreboard). Found by the tcp_ops fuzz target, with an ACK in
    /// the middle of a segment after a go-back.
    fn seg_len(&self, seq: u64) -> u64 {
        if seq < self.snd_max {
            if self.recovery == Recovery::Sack {
                if let Some(s) = self.sb_find(seq) {
                    return u64::from(s.len);
                }
            }
            return self.mss.min(self.snd_max - seq);
        }
        self.mss.min(self.end - seq)
    }

    fn sb_find(&self, seq: u64) -> Option<&SbSeg> {
        let i = self.scoreboard.partition_point(|s| s.seq < seq);
        self.scoreboard.get(i).filter(|s| s.seq == seq)
    }

    /// Send the segment at `seq`, unless the interface queue refuses it.
    fn emit(&mut self, now: Time, seq: u64, out: &mut Vec<Segment>) -> bool {
        if !self.take_room(now) {
            return false;
        }
        let len = self.seg_len(seq);
        let retx = seq < self.snd_max;
        self.stats.data_pkts += 1;
        if retx {
            self.stats.retx_pkts += 1;
            match self.cause {
                Cause::Fast => self.stats.retx_fast_pkts += 1,
                Cause::Timeout => self.stats.retx_timeout_pkts += 1,
            }
            let covers = self.timed.is_some_and(|(e, _)| seq < e);
            if self.timestamps {
                // RFC 7323 section 4 (RTTM): the ACK echoes this
                // transmission's time, so it can be the one timed.
                if covers || self.timed.is_none() {
                    self.timed = Some((seq + len, now));
                }
            } else if covers {
                // Karn's rule: an ACK covering retransmitted data gives no sample.
                self.timed = None;
            }
            if self.recovery == Recovery::Sack {
                let i = self.scoreboard.partition_point(|s| s.seq < seq);
                if let Some(s) = self.scoreboard.get_mut(i) {
                    if s.seq == seq {
                        s.retx = true;
                        s.resent = true;
                    }
                }
            }
        } else {
            if self.timed.is_none() {
                self.timed = Some((seq + len, now));
            }
            if self.recovery == Recovery::Sack {
                self.scoreboard.push_back(SbSeg { seq, sent: now, len: len as u32, sacked: false, retx: false, resent: false });
            }
        }
        self.last_send = Some(now);
        out.push(Segment { seq, len: len as u32, retx, last: seq + len >= self.end && self.end != u64::MAX });
        true
    }

    /// A single retransmission (fast retransmit, partial ACK): if refused, it
    /// goes first at the next opportunity.
    fn emit_retx(&mut self, now: Time, seq: u64, out: &mut Vec<Segment>) {
        if !self.emit(now, seq, out) {
            self.retx_pending = Some(seq);
        }
    }

    /// Send from `snd_nxt` as much as the window (plus `extra` bytes of
    /// limited transmit) allows.
    fn send_window(&mut self, now: Time, extra: u64, out: &mut Vec<Segment>) {
        let cwnd = self.inflated() + extra;
        let mut rwnd_blocked = false;
        while self.snd_nxt < self.end {
            let len = self.seg_len(self.snd_nxt);
            let need = self.snd_nxt + len - self.snd_una;
            if need > cwnd.min(self.max_window) {
                rwnd_blocked = need > self.max_window && need <= cwnd;
                break;
            }
            if !self.emit(now, self.snd_nxt, out) {
                break;
            }
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
        self.note_rwnd(rwnd_blocked);
        self.arm_timer(now);
    }

    fn note_rwnd(&mut self, blocked: bool) {
        if blocked && !self.rwnd_limited {
            self.stats.rwnd_stalls += 1;
        }
        self.rwnd_limited = blocked;
    }

    fn arm_timer(&mut self, now: Time) {
        // RFC 6298 (5.1): start the timer when data is outstanding.
        if self.rto_deadline.is_none() && self.snd_max > self.snd_una {
            self.restart_timer(now);
        }
    }

    fn send_data(&mut self, now: Time, out: &mut Vec<Segment>) {
        if let Some(seq) = self.retx_pending {
            // Still outstanding: resend it first, or wait while refused.
            let needed = seq >= self.snd_una && seq < self.snd_max;
            if needed && !self.emit(now, seq, out) {
                return;
            }
            self.retx_pending = None;
        }
        if self.recovery == Recovery::Sack && self.in_recovery {
            self.sack_send(now, out);
        } else {
            self.send_window(now, 0, out);
        }
    }

    /// The ns-2 1998 recoveries have no guard against a fast retransmit
    /// right after a fast recovery (only a timeout's `recover` holds one back).
    fn ns2_1998(&self) -> bool {
        self.flywheel || self.sack1.is_some()
    }

    /// Whether recovery follows ns-2 2.35's Sack1 (`sack_recovery = "ns2"`).
    fn ns2_235_sack1(&self) -> bool {
        self.sack1.is_some_and(Sack1::is_235)
    }

    /// The window ns-2's Sack1 compares `pipe_` with: 2.35's `int(cwnd_)`,
    /// in whole segments; the 1998 mode keeps the window as it is.
    fn sack1_cwnd(&self) -> i64 {
        let w = self.cc.window();
        (if self.ns2_235_sack1() { w / self.mss * self.mss } else { w }) as i64
    }

    /// ns-2 Sack1 (tcp-sack1.cc, 1998): every ACK in recovery takes one
    /// segment out of `pipe_`.
    fn sack1_ack(&mut self) {
        self.pipe1 -= self.mss as i64;
    }

    /// A cumulative acknowledgement `ack` (the next byte the receiver
    /// expects), with the SACK blocks it carries.
    pub fn on_ack(&mut self, now: Time, ack: u64, sack: &[(u64, u64)], out: &mut Vec<Segment>) {
        if ack > self.snd_max {
            // It acknowledges data never sent: ignore it (RFC 9293 section 3.10.7.4).
            return;
        }
        self.stats.acks_in += 1;
        self.stats.sack_acks += u64::from(!sack.is_empty());
        self.stats.sack_blocks += sack.len() as u64;
        let sack_news = self.recovery == Recovery::Sack && self.sb_mark(sack);
        if ack > self.snd_una {
            self.on_new_ack(now, ack, out);
            if !self.in_recovery && self.ns2_235_sack1() {
                // ns-2 2.35's Sack1 clears its scoreboard at an ACK of new
                // data outside recovery, and at the one that ends it.
                self.sb_forget();
            }
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.on_dupack(now, sack_news, out);
        }
        self.update_state();
    }

    fn on_new_ack(&mut self, now: Time, ack: u64, out: &mut Vec<Segment>) {
        let acked = ack - self.snd_una;
        self.retries = 0;
        let flight = self.flight();
        if let Some((e, t0)) = self.timed {
            if ack >= e {
                self.rtt.sample(now, now - t0);
                if let Some(srtt) = self.rtt.srtt() {
                    self.cc.on_rtt(srtt);
                }
                self.timed = None;
                self.backoff = 0;
            }
        }
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        let below_recover = self.recover.is_some_and(|r| ack < r);
        if !(self.flywheel && self.in_recovery && below_recover) {
            // ns-2's NewReno counts duplicate ACKs on across a partial ACK.
            self.dupacks = 0;
            self.lt_sent = 0;
        }
        let mut newest = None;
        while let Some(s) = self.scoreboard.front().filter(|s| s.seq + u64::from(s.len) <= ack) {
            if !s.resent {
                newest = Some(s.sent);
            }
            self.scoreboard.pop_front();
        }
        if let Some(sent) = newest {
            self.cc.on_delay_sample(now, now.saturating_since(sent), ack, self.snd_nxt);
        }
        let mut partial = false;
        if self.in_recovery {
            match self.recovery {
                Recovery::NewReno if below_recover => {
                    // RFC 6582 section 3.2, step 3 (partial ACK): retransmit the
                    // first unacknowledged segment, deflate the window by the
                    // amount acknowledged and add back one SMSS if at least one
                    // SMSS was acknowledged, and stay in recovery. The window
                    // may fall below ssthresh (negative inflation), as in ns-2
                    // 2.35's partial_window_deflation_; at least one SMSS.
                    // ns-2's flywheel NewReno deflates to cwnd (dupwnd_ = 0).
                    self.inflation = if self.flywheel {
                        0
                    } else {
                        let back = if acked >= self.mss { self.mss } else { 0 };
                        let window = (self.inflated().saturating_sub(acked) + back).max(self.mss);
                        window as i64 - self.cwnd() as i64
                    };
                    partial = true;
                }
                Recovery::Sack if below_recover => {
                    if self.sack1.is_some() {
                        // ns-2 Sack1: a partial ACK takes a second segment out
                        // of pipe_ (the retransmission and the original).
                        self.sack1_ack();
                        self.sack1_ack();
                    }
                    self.rh_on_progress();
                    partial = true
                }
                _ => {
                    // Reno leaves fast recovery on the first new ACK, NewReno and
                    // SACK on the full ACK; all deflate the window to ssthresh
                    // (RFC 5681 section 3.2 step 6, RFC 6582 step 3, RFC 6675 section 5).
                    self.in_recovery = false;
                    self.inflation = 0;
                    self.cc.on_recovery_exit(now);
                    if let Some(w) = self.rh_cwnd.take() {
                        // Linux's tcp_complete_cwr: cwnd = min(cwnd, ssthresh).
                        self.cc.cap_window(now, w);
                    }
                    if self.exit_growth {
                        // ns-2: newack() then opencwnd() on the ACK that ends recovery.
                        self.cc.on_ack(now, acked, flight);
                    }
                }
            }
        } else if self.cwr.is_some() {
            // No growth during CWR (Linux calls no congestion avoidance outside the Open state).
            self.cwr_on_ack(ack);
        } else {
            // The state before this ACK (update_state runs after it).
            if self.state == State::SlowStart {
                self.stats.ss_acks += 1;
            } else {
                self.stats.ca_acks += 1;
            }
            self.cc.on_ack(now, acked, flight);
        }
        if self.snd_una >= self.snd_max {
            // RFC 6298 (5.2): all outstanding data acknowledged.
            self.rto_deadline = None;
        } else if partial && self.recovery == Recovery::NewReno && !self.flywheel && std::mem::replace(&mut self.partial_acked, true) {
            // RFC 6582 section 3.2, step 3: only the first partial ACK of a
            // recovery resets the retransmission timer (the Impatient variant,
            // section 4), so that many losses in one window end in a timeout
            // rather than one retransmission per round trip.
        } else {
            // RFC 6298 (5.3): restart on an ACK of new data.
            self.restart_timer(now);
        }
        if partial && self.recovery == Recovery::NewReno {
            self.emit_retx(now, self.snd_una, out);
            if self.flywheel {
                // ns-2 sends nothing more on a partial ACK (dupacks_ != 0).
                self.arm_timer(now);
                return;
            }
        }
        self.send_data(now, out);
    }

    /// ns-2's flywheel NewReno: on every odd duplicate ACK count beyond the
    /// threshold, one new segment, if there is data and the receiver's window
    /// allows it (ns-2 checked neither).
    fn flywheel_send(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.dupacks > self.dupthresh && self.dupacks % 2 == 1 && self.snd_nxt < self.end {
            let len = self.seg_len(self.snd_nxt);
            if self.snd_nxt + len - self.snd_una > self.max_window {
                self.note_rwnd(true);
            } else if self.emit(now, self.snd_nxt, out) {
                self.snd_nxt += len;
                self.snd_max = self.snd_max.max(self.snd_nxt);
            }
        }
        self.arm_timer(now);
    }

    fn on_dupack(&mut self, now: Time, sack_news: bool, out: &mut Vec<Segment>) {
        self.stats.dupacks += 1;
        if self.ns2_235_sack1() && !self.in_recovery && (self.retries > 0 || !sack_news) {
            // ns-2 2.35's Sack1: after a timeout (`timeout_`, until an ACK of
            // new data), or when its SACK blocks tell nothing new
            // (`CheckUpdate`), a duplicate ACK is neither counted nor
            // answered (no limited transmit).
            return;
        }
        self.dupacks += 1;
        if self.in_recovery {
            match self.recovery {
                Recovery::Sack => {
                    if self.sack1.is_some() {
                        self.sack1_ack();
                    }
                    if sack_news {
                        self.rh_on_progress();
                    }
                    self.sack_send(now, out)
                }
                Recovery::NewReno if self.flywheel => {
                    // dupwnd_ still grows (it counts if the application writes).
                    self.inflation += self.mss as i64;
                    self.flywheel_send(now, out)
                }
                _ => {
                    // RFC 5681 section 3.2, step 4: inflate by one segment.
                    self.inflation += self.mss as i64;
                    self.send_window(now, 0, out);
                }
            }
            return;
        }
        let may_recover = self.recover.is_none_or(|r| self.snd_una > r) || (self.ns2_1998() && self.cause == Cause::Fast);
        // ns-2 Sack1 counts duplicate ACKs only.
        let sack_loss = self.recovery == Recovery::Sack && self.sack1.is_none() && sack_news && self.sb_head_lost();
        if (self.dupacks >= self.dupthresh || sack_loss) && may_recover {
            // Fast retransmit. A new recovery starts only when the ACK has
            // passed the previous one's `recover` point (RFC 6582 section 3.2
            // step 1; ns-2's Reno bug_fix_), so one window's losses are not
            // halved twice.
            self.stats.fast_retx += 1;
            let before = self.cwnd();
            self.cause = Cause::Fast;
            self.recover = Some(self.snd_max);
            // ns-2 Sack1: pipe_ = cwnd - 3 segments, with cwnd before the
            // decrease (1998), or the segments outstanding - 3 (2.35,
            // `oldCode_` off).
            let basis = if self.ns2_235_sack1() { self.snd_max - self.snd_una } else { self.sack1_cwnd() as u64 };
            self.pipe1 = basis as i64 - i64::from(self.dupthresh) * self.mss as i64;
            if self.cwr.take().is_none() {
                // From CWR, recovery keeps the ssthresh CWR set (as Linux).
                // RFC 5681 section 3.2 step 2: "additional data sent in
                // limited transmit MUST NOT be included in this calculation".
                // ns-2's `slowdown` halves the window, min(cwnd_, wnd_).
                let basis = if self.fr_halves_window {
                    self.cwnd().min(self.max_window)
                } else {
                    self.flight().saturating_sub(self.lt_sent)
                };
                self.cc.on_congestion_event(now, basis);
            }
            self.lt_sent = 0;
            match self.recovery {
                Recovery::None => {
                    // Tahoe: no fast recovery; resend from the first
                    // unacknowledged segment in slow start.
                    self.restart_slow_start();
                    self.timed = None;
                    self.snd_nxt = self.snd_una;
                    self.restart_timer(now);
                    self.send_window(now, 0, out);
                }
                Recovery::Reno | Recovery::NewReno => {
                    self.inflation = i64::from(self.dupthresh) * self.mss as i64;
                    self.in_recovery = true;
                    self.partial_acked = false;
                    self.emit_retx(now, self.snd_una, out);
                    self.restart_timer(now);
                    if !self.flywheel {
                        self.send_window(now, 0, out);
                    }
                }
                Recovery::Sack => {
                    // RFC 6675 section 5, steps 4.1-4.4: retransmit the first
                    // lost segment, then send while cwnd - pipe >= 1 SMSS.
                    // Linux's rate-halving keeps the window it had, then
                    // takes this ACK's step (so the window is pipe + 1 SMSS,
                    // which pipe leaves room for the retransmission in).
                    self.in_recovery = true;
                    if self.rate_halving {
                        self.rh_cwnd = Some(before);
                        self.rh_acks = 0;
                        self.rh_on_progress();
                    }
                    self.emit_retx(now, self.snd_una, out);
                    self.restart_timer(now);
                    self.sack_send(now, out);
                }
            }
        } else if self.limited_transmit && self.dupacks < self.dupthresh && (self.snd_nxt >= self.snd_max || self.lt_old_data) {
            // RFC 3042: one new segment for each of the first two duplicate
            // ACKs, if the receiver's window allows; "previously unsent data"
            // only, so not while a timeout's go-back resends what was sent
            // (ns-2's send_one sends the segment at t_seqno_ all the same).
            let before = self.snd_max;
            self.send_window(now, u64::from(self.dupacks) * self.mss, out);
            self.lt_sent += self.snd_max - before;
        }
    }

    /// Forget what the scoreboard knows: no segment SACKed or retransmitted.
    fn sb_forget(&mut self) {
        for g in self.scoreboard.iter_mut() {
            g.sacked = false;
            g.retx = false;
        }
    }

    /// Mark SACKed segments; true if any segment became SACKed.
    fn sb_mark(&mut self, sack: &[(u64, u64)]) -> bool {
        let mut news = false;
        for &(s, e) in sack {
            let mut i = self.scoreboard.partition_point(|g| g.seq < s);
            while let Some(g) = self.scoreboard.get_mut(i) {
                if g.seq + u64::from(g.len) > e {
                    break;
                }
                if !g.sacked {
                    g.sacked = true;
                    news = true;
                }
                i += 1;
            }
        }
        news
    }

    /// Whether a segment not SACKed, ending at `end`, is lost: RFC 6675
    /// `IsLost`, more than (DupThresh - 1) * SMSS bytes SACKed above it
    /// (`sacked_above`); or with FACK the highest SACKed byte (`fack_end`)
    /// more than that past its end (Linux's `fackets_out - reordering`).
    fn is_lost(&self, end: u64, sacked_above: u64, fack_end: Option<u64>) -> bool {
        let limit = u64::from(self.dupthresh - 1) * self.mss;
        if self.fack {
            fack_end.is_some_and(|e| e.saturating_sub(end) > limit)
        } else {
            sacked_above > limit
        }
    }

    /// Whether the first outstanding segment is lost (see [`Sender::is_lost`]).
    fn sb_head_lost(&self) -> bool {
        let Some(head) = self.scoreboard.front().filter(|g| !g.sacked) else {
            return false;
        };
        let sacked: u64 = self.scoreboard.iter().filter(|g| g.sacked).map(|g| u64::from(g.len)).sum();
        let fack_end = self.scoreboard.iter().rev().find(|g| g.sacked).map(|g| g.seq + u64::from(g.len));
        self.is_lost(head.seq + u64::from(head.len), sacked, fack_end)
    }

    /// RFC 6675 `pipe` and `NextSeg` in one backward pass: returns pipe and
    /// the first segment to retransmit by rule 1 (lost, not yet
    /// retransmitted) or rule 3 (not SACKed, not retransmitted, below the
    /// highest SACKed segment); lost as [`Sender::is_lost`] has it.
    fn sb_scan(&self) -> (u64, Option<u64>, Option<u64>) {
        let mut sacked_above = 0u64;
        let mut fack_end = None;
        let mut pipe = 0u64;
        let mut rule1 = None;
        let mut rule3 = None;
        for g in self.scoreboard.iter().rev() {
            let len = u64::from(g.len);
            if g.sacked {
                fack_end = fack_end.or(Some(g.seq + len));
                sacked_above += len;
                continue;
            }
            // pipe counts octets from SND.UNA on: of a segment acknowledged
            // in part (an ACK inside it), only the rest (found by tcp_ops fuzzing).
            let outstanding = (g.seq + len).saturating_sub(g.seq.max(self.snd_una));
            let lost = self.is_lost(g.seq + len, sacked_above, fack_end);
            if !lost {
                pipe += outstanding;
            }
            if g.retx {
                pipe += outstanding;
            } else {
                if lost {
                    rule1 = Some(g.seq);
                }
                if sacked_above > 0 {
                    rule3 = Some(g.seq);
                }
            }
        }
        (pipe, rule1, rule3)
    }

    /// Send during SACK recovery while cwnd - pipe >= 1 SMSS (RFC 6675 section 5, step C).
    fn sack_send(&mut self, now: Time, out: &mut Vec<Segment>) {
        if let Some(opts) = self.sack1 {
            self.sack1_send(now, opts, out);
            return;
        }
        loop {
            let (pipe, rule1, rule3) = self.sb_scan();
            // The window in use (no CWR in a recovery: the fast retransmit ends it).
            if self.cwnd() < pipe + self.mss {
                break;
            }
            if let Some(seq) = rule1 {
                if !self.emit(now, seq, out) {
                    break;
                }
                continue;
            }
            if self.snd_nxt < self.end {
                let len = self.seg_len(self.snd_nxt);
                if self.snd_nxt + len - self.snd_una <= self.max_window {
                    let seq = self.snd_nxt;
                    if !self.emit(now, seq, out) {
                        break;
                    }
                    self.snd_nxt += len;
                    self.snd_max = self.snd_max.max(self.snd_nxt);
                    continue;
                }
                self.note_rwnd(true);
            }
            match rule3 {
                Some(seq) if self.emit(now, seq, out) => {}
                _ => break,
            }
        }
        self.arm_timer(now);
    }

    /// ns-2 Sack1's `send_much` in fast recovery: while `pipe_` < cwnd, the
    /// first hole below the highest SACKed segment not yet resent
    /// (`GetNextRetran`), else new data within the receiver's window; each
    /// segment sent adds one to `pipe_`.
    fn sack1_send(&mut self, now: Time, opts: Sack1, out: &mut Vec<Segment>) {
        while self.pipe1 < self.sack1_cwnd() {
            if opts.stall_at_end() && self.snd_nxt >= self.end {
                // tcp-sack1.cc 1.23 loops only while t_seqno_ < curseq_.
                break;
            }
            let (_, _, hole) = self.sb_scan();
            match hole {
                Some(seq) if seq <= self.snd_una + self.max_window => {
                    if !self.emit(now, seq, out) {
                        break;
                    }
                }
                _ => {
                    if self.snd_nxt >= self.end {
                        break;
                    }
                    let len = self.seg_len(self.snd_nxt);
                    if self.snd_nxt + len - self.snd_una > self.max_window {
                        self.note_rwnd(true);
                        break;
                    }
                    if !self.emit(now, self.snd_nxt, out) {
                        break;
                    }
                    self.snd_nxt += len;
                    self.snd_max = self.snd_max.max(self.snd_nxt);
                }
            }
            self.pipe1 += self.mss as i64;
        }
        self.arm_timer(now);
    }

    /// The window a retransmission timeout halves into ssthresh, or `None`
    /// to keep ssthresh (see [`TimeoutSsthresh`]). Called before the timeout
    /// counts itself in `retries`.
    fn timeout_basis(&self) -> Option<u64> {
        // Twice half a window of whole segments: the controller's halving
        // then gives ns-2's and Linux's `int(window / 2)` segments.
        let whole_halves = |w: u64| w / self.mss / 2 * 2 * self.mss;
        match self.timeout_ssthresh {
            // RFC 5681 section 3.1, equation (4).
            TimeoutSsthresh::Rfc5681 => Some(self.flight()),
            // ns-2 tcp.cc, `slowdown`: `int(window() / 2)`, min(cwnd_, wnd_);
            // Reno's and Newreno's `timeout` zero the inflation (dupwnd_)
            // first, but keep a partial ACK's deflation of cwnd_.
            TimeoutSsthresh::Ns2 => Some(whole_halves(self.cwnd().saturating_add_signed(self.inflation.min(0)).min(self.max_window))),
            // Linux `tcp_enter_loss`: a new ssthresh only from the Open or
            // Disorder state, or from a loss whose retransmission was acknowledged.
            TimeoutSsthresh::Linux if self.in_recovery || self.cwr.is_some() || self.retries > 0 => None,
            TimeoutSsthresh::Linux => Some(whole_halves(self.cwnd().min(self.max_window))),
        }
    }

    /// The retransmission timer fired; the caller checks `now >= poll_timeout()`.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        debug_assert!(self.rto_deadline.is_some_and(|d| d <= now));
        self.rto_deadline = None;
        if self.snd_una >= self.snd_max {
            // Nothing outstanding: the retry after a send stall.
            self.send_data(now, out);
            return;
        }
        if self.retries >= self.max_retries {
            // RFC 9293 section 3.8.3: past the threshold R2, close the
            // connection (Linux: `tcp_retries2` retransmissions, then
            // `tcp_write_err`). No segment is sent, no timer runs, and with
            // nothing outstanding any later ACK finds nothing to acknowledge.
            self.aborted = true;
            self.snd_nxt = self.snd_una;
            self.snd_max = self.snd_una;
            self.scoreboard.clear();
            return;
        }
        let basis = self.timeout_basis();
        self.retries += 1;
        self.stats.timeouts += 1;
        self.cause = Cause::Timeout;
        self.cc.on_timeout(now, basis);
        self.in_recovery = false;
        self.cwr = None;
        self.rh_cwnd = None;
        self.retx_pending = None;
        self.inflation = 0;
        if !(self.lt_old_data && self.recovery == Recovery::None) {
            // ns-2's Agent/TCP (Tahoe) does not clear `dupacks_` at a
            // timeout (`TcpAgent::timeout`; `newack` does), so the duplicate
            // ACKs still arriving after it go on counting and `send_one`
            // sends nothing for them; its Reno and Newreno clear it
            // (`RenoTcpAgent::timeout`).
            self.dupacks = 0;
        }
        self.lt_sent = 0;
        self.recover = Some(self.snd_max);
        self.timed = None;
        // After a timeout, SACK information is not trusted (RFC 2018 section 8).
        self.sb_forget();
        // RFC 6298 (5.5): back off; (5.4) retransmit from the first unacknowledged byte.
        self.backoff = (self.backoff + 1).min(self.max_backoff);
        self.rtt.on_backoff(self.backoff);
        self.snd_nxt = self.snd_una;
        self.restart_timer(now);
        self.restart_slow_start();
        self.send_window(now, 0, out);
        self.update_state();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::CcKind;
    use crate::time::Dur;

    const MSS: u64 = 1460;

    fn sender(iw: u32, size: u64) -> Sender {
        Sender::new(&TcpConfig { iw_bytes: u64::from(iw) * MSS, ..Default::default() }, Some(size))
    }

    /// A sender of 100 segments that sent its initial window at 0 and met
    /// `dupacks` duplicate ACKs at 100 ms; what it sent is appended to `out`.
    fn after_dupacks(cfg: &TcpConfig, dupacks: usize, out: &mut Vec<Segment>) -> Sender {
        let mut s = Sender::new(cfg, Some(100 * MSS));
        s.start(Time::ZERO, out);
        for _ in 0..dupacks {
            s.on_ack(Time::from_ns(100_000_000), 0, &[], out);
        }
        s
    }

    #[test]
    fn sends_initial_window_and_last_partial_segment() {
        let mut s = sender(4, 3 * MSS + 100);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        let seqs: Vec<(u64, u32)> = out.iter().map(|g| (g.seq, g.len)).collect();
        assert!(out[3].last && !out[2].last);
        assert_eq!(seqs, vec![(0, 1460), (1460, 1460), (2920, 1460), (4380, 100)]);
        assert_eq!(s.poll_timeout(), Some(Time::ZERO + Dur::from_secs(1)));
    }

    #[test]
    fn three_dupacks_fast_retransmit_then_deflate() {
        let mut s = sender(10, 100 * MSS);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10);
        let t = Time::from_ns(100_000_000);
        out.clear();
        // Segment 0 is lost: nine duplicate ACKs for byte 0.
        s.on_ack(t, 0, &[], &mut out);
        s.on_ack(t, 0, &[], &mut out);
        assert!(out.is_empty());
        s.on_ack(t, 0, &[], &mut out);
        assert_eq!(out, vec![Segment { seq: 0, len: 1460, retx: true, last: false }]);
        // ssthresh = 10/2 = 5 segments, window = 5 + 3 = 8 < flight 10.
        assert_eq!(s.cc.ssthresh(), 5 * MSS);
        out.clear();
        for _ in 0..6 {
            s.on_ack(t, 0, &[], &mut out);
        }
        // Window 8 + 6 = 14 segments: four new ones go out.
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|g| !g.retx));
        out.clear();
        s.on_ack(t, 10 * MSS, &[], &mut out);
        assert_eq!(s.window(), 5 * MSS);
        assert_eq!((s.stats.fast_retx, s.stats.retx_pkts, s.stats.timeouts), (1, 1, 0));
    }

    /// A window of ten segments in which segments 0 and 3 are lost: the
    /// receiver answers segments 1, 2 and 4..9 with duplicate ACKs for byte 0.
    fn two_losses(cc: CcKind) -> (Sender, Vec<Segment>) {
        let mut s = Sender::new(&TcpConfig { iw_bytes: 10 * MSS, cc, ..Default::default() }, Some(100 * MSS));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        out.clear();
        let t = Time::from_ns(100_000_000);
        for _ in 0..8 {
            s.on_ack(t, 0, &[], &mut out);
        }
        (s, out)
    }

    #[test]
    fn newreno_retransmits_on_a_partial_ack_and_stays_in_recovery() {
        let (mut s, out) = two_losses(CcKind::NewReno);
        assert_eq!(out[0], Segment { seq: 0, len: 1460, retx: true, last: false });
        let t = Time::from_ns(200_000_000);
        let mut out = Vec::new();
        // The retransmitted segment 0 fills the first hole: ACK up to segment 3.
        s.on_ack(t, 3 * MSS, &[], &mut out);
        assert_eq!(out[0], Segment { seq: 3 * MSS, len: 1460, retx: true, last: false }, "partial ACK retransmits at once");
        assert_eq!((s.stats.fast_retx, s.stats.timeouts), (1, 0));
        // The full ACK (everything sent before recovery) ends recovery at ssthresh.
        out.clear();
        s.on_ack(t, 10 * MSS, &[], &mut out);
        assert_eq!(s.window(), 5 * MSS);
        assert_eq!(s.stats.retx_pkts, 2);
    }

    #[test]
    fn limited_transmit_segments_stay_out_of_flightsize_at_the_fast_retransmit() {
        // Ten segments out, segment 0 lost: the first two duplicate ACKs each
        // send a new segment (RFC 3042), the third halves the ten sent before
        // them (RFC 5681 section 3.2 step 2), not the twelve in flight.
        let cfg = TcpConfig { iw_bytes: 10 * MSS, cc: CcKind::Reno, limited_transmit: true, ..Default::default() };
        let mut s = Sender::new(&cfg, Some(100 * MSS));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        let t = Time::from_ns(100_000_000);
        let mut sent = Vec::new();
        for _ in 0..3 {
            out.clear();
            s.on_ack(t, 0, &[], &mut out);
            sent.push(out.iter().map(|g| (g.seq / MSS, g.retx)).collect::<Vec<_>>());
        }
        assert_eq!(sent[..2], [vec![(10, false)], vec![(11, false)]]);
        assert_eq!(sent[2][0], (0, true));
        assert_eq!(s.flight(), 12 * MSS);
        assert_eq!(s.cc.ssthresh(), 5 * MSS);
        // A new ACK in between starts the count again: nothing is left out later.
        let mut s = Sender::new(&cfg, Some(100 * MSS));
        s.start(Time::ZERO, &mut out);
        s.on_ack(t, 0, &[], &mut out); // limited transmit: segment 10
        s.on_ack(t, 2 * MSS, &[], &mut out); // a new ACK: 9 in flight, the window opens
        let flight = s.flight();
        for _ in 0..3 {
            s.on_ack(t, 2 * MSS, &[], &mut out);
        }
        assert_eq!(s.cc.ssthresh(), (flight / 2).max(2 * MSS));
    }

    #[test]
    fn limited_transmit_sends_no_old_data_after_a_timeout() {
        // Ten segments out, none acknowledged: the timeout resends segment 0
        // with a window of one. Duplicate ACKs that follow (from segments
        // still arriving) must not resend segments 1 and 2: limited transmit
        // sends previously unsent data only (RFC 3042 section 2).
        let cfg = TcpConfig { iw_bytes: 10 * MSS, cc: CcKind::Reno, limited_transmit: true, ..Default::default() };
        let mut s = Sender::new(&cfg, Some(100 * MSS));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10);
        let deadline = s.poll_timeout().expect("the timer runs");
        out.clear();
        s.on_timeout(deadline, &mut out);
        assert_eq!(out, vec![Segment { seq: 0, len: 1460, retx: true, last: false }]);
        out.clear();
        s.on_ack(deadline + Dur::from_ms(1), 0, &[], &mut out);
        s.on_ack(deadline + Dur::from_ms(2), 0, &[], &mut out);
        assert_eq!(out, vec![]);
        // Past what was sent, it sends new segments again.
        let t = deadline + Dur::from_ms(10);
        s.on_ack(t, 10 * MSS, &[], &mut out);
        let next = s.snd_max / MSS;
        out.clear();
        s.on_ack(t, 10 * MSS, &[], &mut out);
        assert_eq!(out.iter().map(|g| (g.seq / MSS, g.retx)).collect::<Vec<_>>(), vec![(next, false)]);
        // ns-2's singledup_ sends the segment at t_seqno_ all the same: segments 1
        // and 2, within cwnd (1) plus the duplicate ACKs.
        let mut s = Sender::new(&TcpConfig { lt_old_data: true, ..cfg }, Some(100 * MSS));
        out.clear();
        s.start(Time::ZERO, &mut out);
        out.clear();
        s.on_timeout(deadline, &mut out);
        s.on_ack(deadline + Dur::from_ms(1), 0, &[], &mut out);
        s.on_ack(deadline + Dur::from_ms(2), 0, &[], &mut out);
        assert_eq!(out.iter().map(|g| (g.seq / MSS, g.retx)).collect::<Vec<_>>(), vec![(0, true), (1, true), (2, true)]);
    }

    #[test]
    fn ns2s_tahoe_keeps_its_duplicate_ack_count_across_a_timeout() {
        // Ten segments out, a fast retransmit after three duplicate ACKs, then
        // a timeout while duplicate ACKs still arrive. ns-2's Agent/TCP does
        // not clear dupacks_ at the timeout: the count goes on from 3 and
        // send_one sends nothing. Its Reno clears it, and so does the sender
        // with Reno, where the next two duplicate ACKs each send the segment
        // at the go-back's point (ns-2's send_one).
        for (cc, expect) in [(CcKind::Tahoe, vec![]), (CcKind::Reno, vec![(1, true), (2, true)])] {
            let cfg = TcpConfig { iw_bytes: 10 * MSS, cc, limited_transmit: true, lt_old_data: true, ..Default::default() };
            let mut out = Vec::new();
            let mut s = after_dupacks(&cfg, 3, &mut out);
            assert_eq!(s.stats.fast_retx, 1, "{cc:?}");
            let deadline = s.poll_timeout().expect("the timer runs");
            out.clear();
            s.on_timeout(deadline, &mut out);
            assert_eq!(out, vec![Segment { seq: 0, len: 1460, retx: true, last: false }], "{cc:?}");
            out.clear();
            s.on_ack(deadline + Dur::from_ms(1), 0, &[], &mut out);
            s.on_ack(deadline + Dur::from_ms(2), 0, &[], &mut out);
            assert_eq!(out.iter().map(|g| (g.seq / MSS, g.retx)).collect::<Vec<_>>(), expect, "{cc:?}");
            // A new ACK clears the count in both.
            s.on_ack(deadline + Dur::from_ms(3), MSS, &[], &mut out);
            assert_eq!(s.dupacks, 0, "{cc:?}");
        }
        // Without lt_old_data (RFC 5681), the timeout clears the count with Tahoe too.
        let cfg = TcpConfig { iw_bytes: 10 * MSS, cc: CcKind::Tahoe, limited_transmit: true, ..Default::default() };
        let mut out = Vec::new();
        let mut s = after_dupacks(&cfg, 3, &mut out);
        let deadline = s.poll_timeout().expect("the timer runs");
        s.on_timeout(deadline, &mut out);
        assert_eq!(s.dupacks, 0);
    }

    #[test]
    fn timeout_ssthresh_rules() {
        // (rule, ssthresh after a timeout in a fast recovery, after a first
        // timeout with nothing acknowledged, after a second one), in segments.
        let cases = [
            // RFC 5681 eq. (4): half the flight (20 segments out), every time.
            (TimeoutSsthresh::Rfc5681, 10, 10, 10),
            // ns-2: half the window, in a recovery the halved 10 segments
            // without the inflation; after the first timeout a window of one, so 2.
            (TimeoutSsthresh::Ns2, 5, 10, 2),
            // Linux: the recovery's ssthresh kept; a repeated timeout keeps the first's.
            (TimeoutSsthresh::Linux, 10, 10, 10),
        ];
        for (rule, in_recovery, first, second) in cases {
            let cfg = TcpConfig { iw_bytes: 20 * MSS, max_window: 100 * MSS, timeout_ssthresh: rule, ..Default::default() };
            let mut out = Vec::new();
            let mut s = after_dupacks(&cfg, 3, &mut out);
            assert_eq!(s.cc.ssthresh(), 10 * MSS, "{rule:?}: the fast retransmit halves the flight");
            assert_eq!(s.window(), 13 * MSS);
            let t = s.poll_timeout().expect("the timer runs");
            s.on_timeout(t, &mut out);
            assert_eq!(s.cc.ssthresh(), in_recovery * MSS, "{rule:?}, in recovery");
            assert_eq!(s.window(), MSS);

            let mut s = Sender::new(&cfg, Some(100 * MSS));
            s.start(Time::ZERO, &mut out);
            let t = s.poll_timeout().expect("the timer runs");
            s.on_timeout(t, &mut out);
            assert_eq!(s.cc.ssthresh(), first * MSS, "{rule:?}, first timeout");
            let t = s.poll_timeout().expect("the timer runs");
            s.on_timeout(t, &mut out);
            assert_eq!(s.cc.ssthresh(), second * MSS, "{rule:?}, second timeout");
            // An ACK of the retransmission ends the loss: Linux halves again at the next timeout.
            s.on_ack(t + Dur::from_ms(100), MSS, &[], &mut out);
            let t = s.poll_timeout().expect("the timer runs");
            s.on_timeout(t, &mut out);
            let third = match rule {
                // 19 segments still out.
                TimeoutSsthresh::Rfc5681 => 19 * MSS / 2,
                // A window of 2 after one ACK in slow start: int(2 / 2), at least 2.
                _ => 2 * MSS,
            };
            assert_eq!(s.cc.ssthresh(), third, "{rule:?}, after an ACK");
        }
    }

    #[test]
    fn exit_growth_opens_the_window_on_the_ack_that_ends_recovery() {
        // One loss in a window of 10, no byte counting: the ACK that ends recovery
        // deflates cwnd to ssthresh (5 segments); with ns-2's exit growth it then
        // grows as in congestion avoidance, SMSS * SMSS / cwnd. SACK recovery never does.
        for (cc, exit_growth, cwnd) in [
            (CcKind::Reno, false, 5 * MSS),
            (CcKind::Reno, true, 5 * MSS + MSS / 5),
            (CcKind::NewReno, true, 5 * MSS + MSS / 5),
            (CcKind::Sack, true, 5 * MSS),
        ] {
            let cfg = TcpConfig { cc, iw_bytes: 10 * MSS, byte_counting: false, exit_growth, ..Default::default() };
            let mut s = Sender::new(&cfg, Some(100 * MSS));
            let mut out = Vec::new();
            s.start(Time::ZERO, &mut out);
            let t = Time::from_ns(100_000_000);
            for k in 2..5 {
                s.on_ack(t, 0, &[(MSS, k * MSS)], &mut out);
            }
            assert!(s.in_recovery, "{cc:?}");
            s.on_ack(t + Dur::from_ms(100), 10 * MSS, &[], &mut out);
            assert!(!s.in_recovery, "{cc:?}");
            assert_eq!(s.cwnd(), cwnd, "{cc:?}, exit growth {exit_growth}");
        }
    }

    #[test]
    fn a_newreno_partial_ack_deflates_the_window_below_cwnd() {
        // Segments 0 and 8 lost from a window of 10: the fast retransmit sets
        // cwnd = ssthresh = 5 and the window to 5 + 3. The partial ACK of 8
        // segments deflates it by 8 and adds one back (RFC 6582 section 3.2
        // step 3): a window of one segment, below cwnd, which only the
        // retransmission of the hole at 8 fills.
        let cfg = TcpConfig { iw_bytes: 10 * MSS, cc: CcKind::NewReno, ..Default::default() };
        let mut out = Vec::new();
        let mut s = after_dupacks(&cfg, 3, &mut out);
        assert_eq!((s.cwnd(), s.window()), (5 * MSS, 8 * MSS));
        out.clear();
        s.on_ack(Time::from_ns(200_000_000), 8 * MSS, &[], &mut out);
        assert_eq!((s.cwnd(), s.window()), (5 * MSS, MSS));
        assert_eq!(out.iter().map(|g| (g.seq / MSS, g.retx)).collect::<Vec<_>>(), vec![(8, true)]);
        // The full ACK ends recovery at cwnd = ssthresh.
        s.on_ack(Time::from_ns(300_000_000), 10 * MSS, &[], &mut out);
        assert_eq!(s.window(), 5 * MSS);
    }

    #[test]
    fn newreno_restarts_the_timer_on_the_first_partial_ack_only() {
        // Segments 0, 3 and 5 lost from a window of 10 (RFC 6582 section 3.2 step 3).
        let cfg = TcpConfig { iw_bytes: 10 * MSS, cc: CcKind::NewReno, ..Default::default() };
        let mut out = Vec::new();
        let mut s = after_dupacks(&cfg, 7, &mut out);
        let rto = s.rtt.backed_off(0);
        // The first partial ACK (up to the hole at 3) restarts the timer ...
        let t1 = Time::from_ns(200_000_000);
        s.on_ack(t1, 3 * MSS, &[], &mut out);
        assert_eq!(s.poll_timeout(), Some(t1 + rto));
        // ... the second (up to the hole at 5) leaves it where it was.
        s.on_ack(Time::from_ns(300_000_000), 5 * MSS, &[], &mut out);
        assert_eq!(s.poll_timeout(), Some(t1 + rto));
        assert_eq!(out.iter().filter(|g| g.retx).map(|g| g.seq / MSS).collect::<Vec<_>>(), vec![0, 3, 5]);
        // The timer fires in recovery: a timeout, not a third round trip.
        out.clear();
        s.on_timeout(t1 + rto, &mut out);
        assert_eq!(s.stats.timeouts, 1);
        // ns-2's 1998 NewReno restarted it on every partial ACK.
        let cfg = TcpConfig { newreno_recovery: NewRenoRecovery::Ns2Flywheel, ..cfg };
        let mut s = after_dupacks(&cfg, 7, &mut out);
        s.on_ack(t1, 3 * MSS, &[], &mut out);
        let t2 = Time::from_ns(300_000_000);
        s.on_ack(t2, 5 * MSS, &[], &mut out);
        assert_eq!(s.poll_timeout(), Some(t2 + s.rtt.backed_off(0)));
    }

    #[test]
    fn ns2_flywheel_newreno_sends_one_segment_per_two_dupacks() {
        let cfg = TcpConfig {
            iw_bytes: 10 * MSS,
            cc: CcKind::NewReno,
            newreno_recovery: NewRenoRecovery::Ns2Flywheel,
            byte_counting: false,
            ..Default::default()
        };
        let mut s = Sender::new(&cfg, Some(100 * MSS));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        // Segments 0 and 3 lost: eight duplicate ACKs. The third retransmits
        // segment 0; the fifth and seventh each send one new segment.
        let t = Time::from_ns(100_000_000);
        let mut sent = Vec::new();
        for _ in 0..8 {
            out.clear();
            s.on_ack(t, 0, &[], &mut out);
            sent.push(out.iter().map(|g| (g.seq / MSS, g.retx)).collect::<Vec<_>>());
        }
        let want: Vec<Vec<(u64, bool)>> = vec![vec![], vec![], vec![(0, true)], vec![], vec![(10, false)], vec![], vec![(11, false)], vec![]];
        assert_eq!(sent, want);
        // The partial ACK retransmits segment 3 and sends nothing else; the
        // duplicate ACKs count on (9, 10, ...): the ninth sends segment 12.
        out.clear();
        s.on_ack(Time::from_ns(200_000_000), 3 * MSS, &[], &mut out);
        assert_eq!(out, vec![Segment { seq: 3 * MSS, len: 1460, retx: true, last: false }]);
        out.clear();
        s.on_ack(Time::from_ns(210_000_000), 3 * MSS, &[], &mut out);
        assert_eq!(out.iter().map(|g| g.seq / MSS).collect::<Vec<_>>(), vec![12]);
        // The full ACK ends recovery at ssthresh (5 segments) and, as ns-2's
        // opencwnd(), adds 1/cwnd of a segment.
        out.clear();
        s.on_ack(Time::from_ns(300_000_000), 12 * MSS, &[], &mut out);
        assert_eq!(s.state(), State::CongestionAvoidance);
        assert_eq!(s.window(), 5 * MSS + MSS / 5);
        assert_eq!((s.stats.fast_retx, s.stats.retx_pkts, s.stats.timeouts), (1, 2, 0));
        s.check_invariants().unwrap();
    }

    #[test]
    fn only_the_ns2_variants_fast_retransmit_again_right_after_a_recovery() {
        // Segment 0 lost; the recovery ends with the ACK of everything sent
        // before it (10 segments). Segment 10, the first sent in recovery, is
        // lost too: three duplicate ACKs at the old recover point. Floyd's
        // guard (RFC 6582 step 1) waits for a timeout; ns-2 of 1998 did not.
        for (recovery, want) in [(NewRenoRecovery::Rfc6582, 1), (NewRenoRecovery::Ns2Flywheel, 2)] {
            let cfg = TcpConfig { iw_bytes: 10 * MSS, cc: CcKind::NewReno, newreno_recovery: recovery, ..Default::default() };
            let mut s = Sender::new(&cfg, Some(100 * MSS));
            let mut out = Vec::new();
            s.start(Time::ZERO, &mut out);
            for _ in 0..9 {
                s.on_ack(Time::from_ns(100_000_000), 0, &[], &mut out);
            }
            assert!(s.snd_max > 10 * MSS, "new data went out in recovery");
            s.on_ack(Time::from_ns(200_000_000), 10 * MSS, &[], &mut out);
            for _ in 0..3 {
                s.on_ack(Time::from_ns(210_000_000), 10 * MSS, &[], &mut out);
            }
            assert_eq!(s.stats.fast_retx, want, "{recovery:?}");
        }
    }

    #[test]
    fn reno_leaves_recovery_on_a_partial_ack() {
        let (mut s, _) = two_losses(CcKind::Reno);
        let mut out = Vec::new();
        s.on_ack(Time::from_ns(200_000_000), 3 * MSS, &[], &mut out);
        assert!(out.iter().all(|g| !g.retx), "Reno does not retransmit on a partial ACK");
        assert_eq!(s.cc.window(), 5 * MSS);
        // Further duplicate ACKs for segment 3 do not start a second recovery
        // before the recover point is passed: the timer must repair it.
        for _ in 0..5 {
            s.on_ack(Time::from_ns(210_000_000), 3 * MSS, &[], &mut out);
        }
        assert_eq!(s.stats.fast_retx, 1);
    }

    /// A window of ten segments (of `size` bytes in all) sent with ns-2's
    /// 1998 Sack1 recovery, of which segments 0 and 2 are lost; returns the
    /// sender and what it sent for each of the receiver's eight duplicate
    /// ACKs (after segments 1, 3, 4, ..., 9), each with its SACK blocks.
    fn sack1_two_losses(size: u64, stall_at_end: bool) -> (Sender, Vec<Vec<Segment>>) {
        let cfg = TcpConfig {
            iw_bytes: 10 * MSS,
            cc: CcKind::Sack,
            sack_recovery: SackRecovery::Ns2Sack1 { stall_at_end },
            ..Default::default()
        };
        let mut s = Sender::new(&cfg, Some(size));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 10);
        let t = Time::from_ns(100_000_000);
        let mut sent = Vec::new();
        for k in [1u64, 3, 4, 5, 6, 7, 8, 9] {
            let mut blocks = vec![(MSS, 2 * MSS)];
            if k >= 3 {
                blocks.insert(0, (3 * MSS, (k + 1) * MSS));
            }
            out.clear();
            s.on_ack(t, 0, &blocks, &mut out);
            sent.push(out.clone());
        }
        (s, sent)
    }

    #[test]
    fn ns2_sack1_counts_pipe_from_cwnd_minus_three() {
        let (mut s, sent) = sack1_two_losses(100 * MSS, false);
        let seqs: Vec<Vec<(u64, bool)>> = sent.iter().map(|o| o.iter().map(|g| (g.seq / MSS, g.retx)).collect()).collect();
        // Third duplicate ACK: retransmit segment 0; pipe_ = 10 - 3 = 7 and
        // cwnd = 5. ACKs 4 and 5 bring pipe_ to 5; at the sixth it is 4 < 5:
        // the hole at segment 2 goes first, then one new segment per ACK.
        let want: Vec<Vec<(u64, bool)>> =
            vec![vec![], vec![], vec![(0, true)], vec![], vec![], vec![(2, true)], vec![(10, false)], vec![(11, false)]];
        assert_eq!(seqs, want);
        assert_eq!(s.pipe1, 5 * MSS as i64);
        // The partial ACK (segment 0 repaired, up to the hole at 2) takes two
        // segments out of pipe_: two new segments go out.
        let mut out = Vec::new();
        s.on_ack(Time::from_ns(200_000_000), 2 * MSS, &[(3 * MSS, 12 * MSS)], &mut out);
        assert_eq!(out.iter().map(|g| (g.seq / MSS, g.retx)).collect::<Vec<_>>(), vec![(12, false), (13, false)]);
        // The full ACK ends recovery at ssthresh, five segments.
        out.clear();
        s.on_ack(Time::from_ns(210_000_000), 12 * MSS, &[], &mut out);
        assert_eq!((s.window(), s.state()), (5 * MSS, State::CongestionAvoidance));
        assert_eq!((s.stats.fast_retx, s.stats.retx_pkts, s.stats.timeouts), (1, 2, 0));
        s.check_invariants().unwrap();
    }

    #[test]
    fn ns2_sack1_1998_sends_nothing_once_all_data_is_sent() {
        // The transfer is exactly the ten segments: in recovery the 1998 code
        // does not resend the hole at segment 2; the later code does.
        let (_, sent) = sack1_two_losses(10 * MSS, true);
        let retx: Vec<u64> = sent.iter().flatten().map(|g| g.seq / MSS).collect();
        assert_eq!(retx, vec![0]);
        let (_, sent) = sack1_two_losses(10 * MSS, false);
        let retx: Vec<u64> = sent.iter().flatten().map(|g| g.seq / MSS).collect();
        assert_eq!(retx, vec![0, 2]);
    }

    #[test]
    fn ns2_235_sack1_counts_duplicate_acks_with_news_only_and_none_after_a_timeout() {
        // Segment 0 is lost; the duplicate ACKs' SACK blocks grow, but one
        // repeats. ns-2 2.35 (CheckUpdate) ignores the repeat: limited
        // transmit on the first two that tell something new, the fast
        // retransmit on the third. The 1998 code counts the repeat.
        let run = |rule: SackRecovery| {
            let cfg = TcpConfig { iw_bytes: 10 * MSS, cc: CcKind::Sack, limited_transmit: true, sack_recovery: rule, ..Default::default() };
            let mut s = Sender::new(&cfg, Some(100 * MSS));
            let mut out = Vec::new();
            s.start(Time::ZERO, &mut out);
            let t = Time::from_ns(100_000_000);
            let mut sent = Vec::new();
            for hi in [2u64, 2, 3, 4] {
                out.clear();
                s.on_ack(t, 0, &[(MSS, hi * MSS)], &mut out);
                sent.push(out.iter().map(|g| g.seq / MSS).collect::<Vec<_>>());
            }
            (s, sent)
        };
        let (_, old) = run(SackRecovery::Ns2Sack1 { stall_at_end: false });
        assert_eq!(old, vec![vec![10], vec![11], vec![0], vec![]]);
        let (mut s, new) = run(SackRecovery::Ns2Sack1v235);
        assert_eq!(new, vec![vec![10], vec![], vec![11], vec![0]]);
        // pipe_ = the 12 segments outstanding - 3 (1998: cwnd 10 - 3).
        assert_eq!(s.pipe1, 9 * MSS as i64);
        // After a timeout, duplicate ACKs do nothing until an ACK of new data.
        let mut out = Vec::new();
        let at = s.poll_timeout().unwrap();
        s.on_timeout(at, &mut out);
        assert_eq!(out.iter().map(|g| g.seq / MSS).collect::<Vec<_>>(), vec![0]);
        for hi in [5u64, 6, 7] {
            out.clear();
            s.on_ack(at, 0, &[(MSS, hi * MSS)], &mut out);
            assert!(out.is_empty());
        }
        assert_eq!((s.dupacks, s.stats.dupacks), (0, 7));
        out.clear();
        s.on_ack(at + Dur::from_ms(100), 7 * MSS, &[], &mut out);
        assert_eq!(out.iter().map(|g| g.seq / MSS).collect::<Vec<_>>(), vec![7, 8, 9]);
        s.check_invariants().unwrap();
    }

    #[test]
    fn a_fast_retransmit_halves_the_flight_or_as_ns2_the_window() {
        // Twelve segments, all sent, with a congestion window of 20: RFC 5681
        // halves the flight (12), ns-2's slowdown the window, min(cwnd, wnd).
        for (ns2, want) in [(false, 6 * MSS), (true, 10 * MSS)] {
            let cfg = TcpConfig { iw_bytes: 20 * MSS, max_window: 30 * MSS, cc: CcKind::Reno, ns2_fr_halving: ns2, ..Default::default() };
            let mut s = Sender::new(&cfg, Some(12 * MSS));
            let mut out = Vec::new();
            s.start(Time::ZERO, &mut out);
            assert_eq!(out.len(), 12);
            for _ in 0..3 {
                s.on_ack(Time::from_ns(100_000_000), 0, &[], &mut out);
            }
            assert_eq!((s.stats.fast_retx, s.cc.ssthresh(), s.cc.window()), (1, want, want), "ns2 = {ns2}");
        }
    }

    #[test]
    fn rfc6675_sends_sooner_than_ns2_sack1_after_two_losses() {
        // The same losses under RFC 6675: pipe is counted from the scoreboard
        // (the two lost segments are not in the network), so the hole and new
        // data go out before the ns-2 counter allows.
        let cfg = TcpConfig { iw_bytes: 10 * MSS, cc: CcKind::Sack, ..Default::default() };
        let mut s = Sender::new(&cfg, Some(100 * MSS));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        let mut first_new = None;
        for (i, k) in [1u64, 3, 4, 5, 6, 7, 8, 9].into_iter().enumerate() {
            let mut blocks = vec![(MSS, 2 * MSS)];
            if k >= 3 {
                blocks.insert(0, (3 * MSS, (k + 1) * MSS));
            }
            out.clear();
            s.on_ack(Time::from_ns(100_000_000), 0, &blocks, &mut out);
            if first_new.is_none() && out.iter().any(|g| !g.retx) {
                first_new = Some(i + 1);
            }
        }
        assert!(first_new.is_some_and(|n| n < 7), "{first_new:?}");
    }

    /// Ten segments out, the first lost, then an ACK SACKing one more
    /// segment at a time: what each ACK after the fast retransmit sends
    /// (segments), the window in use after each, and cwnd at the full ACK.
    fn one_loss(rule: SackRecovery) -> (Vec<usize>, Vec<u64>, u64) {
        let cfg = TcpConfig { iw_bytes: 10 * MSS, cc: CcKind::Sack, limited_transmit: false, sack_recovery: rule, ..Default::default() };
        let mut s = Sender::new(&cfg, Some(100 * MSS));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        let t = Time::from_ns(100_000_000);
        let (mut sent, mut windows) = (Vec::new(), Vec::new());
        for k in 1..=9u64 {
            out.clear();
            s.on_ack(t, 0, &[(MSS, (k + 1) * MSS)], &mut out);
            if k == 3 {
                assert_eq!(out, vec![Segment { seq: 0, len: 1460, retx: true, last: false }], "the fast retransmit alone");
            } else if k > 3 {
                sent.push(out.len());
                windows.push(s.cwnd() / MSS);
            }
        }
        out.clear();
        s.on_ack(t, 10 * MSS, &[], &mut out);
        assert!(!s.in_recovery);
        (sent, windows, s.cwnd() / MSS)
    }

    #[test]
    fn linux_rate_halving_sends_one_segment_per_two_acks_until_ssthresh() {
        // RFC 6675: cwnd falls to ssthresh (5) at once; nothing goes out
        // until pipe is below it, then a segment per ACK.
        assert_eq!(one_loss(SackRecovery::Rfc6675), (vec![0, 0, 1, 1, 1, 1], vec![5; 6], 5));
        // Rate-halving: the window starts at 10, is pipe + 1 at the fast
        // retransmit (6 + 1), loses a segment every second ACK down to
        // ssthresh (6, 6, 5, 5, 5, 5), and a segment goes out on every
        // second ACK until then; the recovery ends with cwnd 5.
        assert_eq!(one_loss(SackRecovery::LinuxRateHalving), (vec![0, 1, 0, 1, 1, 1], vec![6, 6, 5, 5, 5, 5], 5));
    }

    #[test]
    fn fack_deems_the_head_lost_by_the_highest_sacked_byte() {
        // A window of 10 segments; 0, 1 and 2 are lost, and the ACKs that
        // follow SACK 3, 3-4, 3-5 and 3-6.
        let run = |loss: SackLoss| {
            let cfg = TcpConfig { iw_bytes: 10 * MSS, cc: CcKind::Sack, limited_transmit: false, sack_loss: loss, ..Default::default() };
            let mut s = Sender::new(&cfg, Some(100 * MSS));
            let mut out = Vec::new();
            s.start(Time::ZERO, &mut out);
            let t = Time::from_ns(100_000_000);
            let sent: Vec<Vec<(u64, bool)>> = (1..=4u64)
                .map(|k| {
                    out.clear();
                    s.on_ack(t, 0, &[(3 * MSS, (3 + k) * MSS)], &mut out);
                    out.iter().map(|g| (g.seq / MSS, g.retx)).collect()
                })
                .collect();
            (sent, s.stats.fast_retx)
        };
        // RFC 6675: one SACKed segment above the first is not enough
        // (IsLost needs more than 2 segments' worth); the third duplicate
        // ACK retransmits it, and the fourth (pipe 4 of cwnd 5) segment 1,
        // which 4 SACKed segments above make lost.
        assert_eq!(run(SackLoss::Rfc6675), (vec![vec![], vec![], vec![(0, true)], vec![(1, true)]], 1));
        // FACK: the first ACK's SACK of segment 3 lies 3 segments past the
        // end of segment 0, which is lost at once (Linux's fackets_out 4 >
        // reordering 3); segment 1 is lost from the second ACK (pipe 7) and
        // segment 2 from the third (pipe 5); the fourth (pipe 4) resends 1.
        assert_eq!(run(SackLoss::Fack), (vec![vec![(0, true)], vec![], vec![], vec![(1, true)]], 1));
    }

    #[test]
    fn tahoe_restarts_slow_start_after_fast_retransmit() {
        let (s, out) = two_losses(CcKind::Tahoe);
        assert_eq!(out, vec![Segment { seq: 0, len: 1460, retx: true, last: false }], "one segment, then wait");
        assert_eq!((s.cc.window(), s.cc.ssthresh()), (MSS, 5 * MSS));
        assert_eq!(s.stats.fast_retx, 1);
    }

    #[test]
    fn restart_after_idle_resets_the_window_when_on() {
        for on in [true, false] {
            let cfg = TcpConfig { iw_bytes: 2 * MSS, idle_restart: on, ..Default::default() };
            let mut s = Sender::new(&cfg, Some(0));
            let mut out = Vec::new();
            s.write(Time::ZERO, 20 * MSS, &mut out);
            // Acknowledge everything as it goes: slow start grows the window.
            let mut t = Time::ZERO;
            while !s.is_done() {
                t += Dur::from_ms(100);
                let next = s.snd_nxt();
                out.clear();
                s.on_ack(t, next, &[], &mut out);
            }
            let grown = s.cc.window();
            assert!(grown > 8 * MSS);
            // Idle for more than one RTO (1 s), then more data.
            out.clear();
            s.write(t + Dur::from_secs(3), 20 * MSS, &mut out);
            let expected = if on { 2 * MSS } else { grown };
            assert_eq!(s.cc.window(), expected);
            assert_eq!(out.len() as u64, expected / MSS);
        }
    }

    #[test]
    fn a_delay_sample_is_the_newest_fully_acked_segment_never_retransmitted() {
        use crate::tcp::config::CcKind;
        let min_rtt = |s: &Sender| match &s.cc {
            AnyCc::Cubic(c) => c.hystart_min_rtt(),
            _ => unreachable!(),
        };
        let cfg = TcpConfig { iw_bytes: 4 * MSS, cc: CcKind::Cubic, hystart: true, ..Default::default() };
        let mut s = Sender::new(&cfg, Some(100 * MSS));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 4);
        // Half a segment acknowledged: no segment is fully acknowledged.
        out.clear();
        s.on_ack(Time::from_ns(90_000_000), MSS / 2, &[], &mut out);
        assert_eq!(min_rtt(&s), None);
        // Segments 1-2 at 150 ms: their newest was sent at 0.
        out.clear();
        s.on_ack(Time::from_ns(150_000_000), 2 * MSS, &[], &mut out);
        assert_eq!(min_rtt(&s), Some(Dur::from_ms(150)));
        // Segments 3 and 4 were sent at 0, the two new ones at 150 ms; those
        // come back at 270 ms: 120 ms.
        let sent = out.len() as u64;
        out.clear();
        s.on_ack(Time::from_ns(270_000_000), (4 + sent) * MSS, &[], &mut out);
        assert_eq!(min_rtt(&s), Some(Dur::from_ms(120)));
        // A timeout forgets it; the go-back-N resend's ACK gives no sample.
        let t = Time::from_ns(5_000_000_000);
        out.clear();
        s.on_timeout(t, &mut out);
        assert_eq!(min_rtt(&s), None);
        assert_eq!(out.len(), 1);
        let resent_end = s.snd_nxt();
        out.clear();
        s.on_ack(t + Dur::from_ms(10), resent_end, &[], &mut out);
        assert_eq!(min_rtt(&s), None, "Karn: a retransmitted segment gives no sample");
    }

    #[test]
    fn a_full_interface_queue_stalls_reduces_the_window_and_retransmits_nothing() {
        let cfg = TcpConfig { iw_bytes: 10 * MSS, byte_counting: false, ..Default::default() };
        let mut s = Sender::new(&cfg, Some(1000 * MSS));
        let mut out = Vec::new();
        // Room for 6 of the initial 10 segments: the 7th is a send stall.
        s.set_room(6);
        s.start(Time::ZERO, &mut out);
        assert_eq!(out.len(), 6);
        assert_eq!((s.stats.send_stalls, s.stats.cwr_entries), (1, 1));
        assert_eq!(s.snd_nxt(), 6 * MSS, "the refused segment is not sent");
        // CWR: ssthresh = flight / 2 (Reno's decrease); the window is capped at
        // min(cwnd, flight + 1 SMSS) = 7 segments.
        assert_eq!(s.cc.ssthresh(), 3 * MSS);
        assert_eq!(s.cwnd(), 7 * MSS);
        assert_eq!(s.state(), State::Cwr);
        // ACKs come back one segment at a time with room again: the window
        // loses one SMSS every second ACK, not below ssthresh, and never grows.
        let mut t = Time::from_ns(10_000_000);
        let mut cwnds = Vec::new();
        for k in 1..=6u64 {
            s.set_room(u64::MAX);
            out.clear();
            s.on_ack(t, k * MSS, &[], &mut out);
            cwnds.push(s.cwnd() / MSS);
            assert!(out.iter().all(|g| !g.retx));
            t += Dur::from_ms(1);
        }
        // ACK 1: flight 5, so the cap is 6; ACK 2: one SMSS less; ... ACK 6
        // covers everything sent before CWR: it ends at ssthresh.
        assert_eq!(cwnds, vec![6, 5, 5, 4, 4, 3], "min(cap, flight + 1), one SMSS less per two ACKs, then ssthresh");
        assert_eq!(s.state(), State::CongestionAvoidance);
        assert_eq!((s.stats.retx_pkts, s.stats.fast_retx, s.stats.timeouts), (0, 0, 0));
        assert_eq!(s.stats.send_stalls, 1);
    }

    #[test]
    fn a_stall_with_nothing_in_flight_retries_after_an_rto() {
        let mut s = sender(4, 100 * MSS);
        let mut out = Vec::new();
        s.set_room(0);
        s.start(Time::ZERO, &mut out);
        assert!(out.is_empty());
        assert_eq!(s.stats.send_stalls, 1);
        let retry = s.poll_timeout().expect("a retry is armed");
        s.set_room(u64::MAX);
        s.on_timeout(retry, &mut out);
        // CWR with nothing in flight: ssthresh 2 SMSS, cwnd min(4, 0 + 1) raised to ssthresh.
        assert_eq!(out.len(), 2, "the reduced window goes out when the queue has room");
        assert!(out.iter().all(|g| !g.retx));
        assert_eq!(s.stats.timeouts, 0, "a retry is not a timeout");
    }

    #[test]
    fn without_a_limit_nothing_stalls() {
        let mut s = sender(10, 100 * MSS);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!((out.len(), s.stats.send_stalls, s.cwnd()), (10, 0, 10 * MSS));
    }

    #[test]
    fn timeout_goes_back_to_one_segment_and_backs_off() {
        let mut s = sender(4, 100 * MSS);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        out.clear();
        let t1 = s.poll_timeout().unwrap();
        s.on_timeout(t1, &mut out);
        assert_eq!(out, vec![Segment { seq: 0, len: 1460, retx: true, last: false }]);
        assert_eq!(s.cc.window(), MSS);
        assert_eq!(s.poll_timeout(), Some(t1 + Dur::from_secs(2)));
        out.clear();
        // The ACK of the retransmission gives no RTT sample (Karn) and opens the window.
        s.on_ack(t1 + Dur::from_ms(100), MSS, &[], &mut out);
        assert_eq!(s.rtt.samples(), 0);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|g| g.retx), "go-back-N resends what was outstanding");
    }

    #[test]
    fn gives_up_after_max_retries_timeouts_without_a_new_ack() {
        let cfg = TcpConfig { iw_bytes: 2 * MSS, max_retries: 2, ..Default::default() };
        let mut s = Sender::new(&cfg, Some(100 * MSS));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        // Two timeouts, each a retransmission; a new ACK starts the count again.
        for _ in 0..2 {
            let t = s.poll_timeout().unwrap();
            out.clear();
            s.on_timeout(t, &mut out);
            assert_eq!(out.len(), 1);
        }
        let t = s.poll_timeout().unwrap();
        s.on_ack(t, MSS, &[], &mut out);
        for _ in 0..2 {
            let t = s.poll_timeout().unwrap();
            out.clear();
            s.on_timeout(t, &mut out);
            assert_eq!(out.len(), 1, "the count restarted at the new ACK");
        }
        // The third in a row: no retransmission, no timer, and what arrives
        // after is ignored.
        let t = s.poll_timeout().unwrap();
        out.clear();
        s.on_timeout(t, &mut out);
        assert!(out.is_empty() && s.aborted() && s.poll_timeout().is_none());
        assert_eq!(s.stats.timeouts, 4);
        s.on_ack(t, 3 * MSS, &[], &mut out);
        s.write(t, 10 * MSS, &mut out);
        assert!(out.is_empty() && s.poll_timeout().is_none() && s.snd_una() == MSS);
    }

    #[test]
    fn with_timestamps_the_retransmission_is_timed_and_clears_the_backoff() {
        let cfg = TcpConfig { iw_bytes: 4 * MSS, timestamps: true, ..Default::default() };
        let mut s = Sender::new(&cfg, Some(100 * MSS));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        let t1 = s.poll_timeout().unwrap();
        s.on_timeout(t1, &mut out);
        // A second timeout: the backoff doubles the 1 s RTO twice.
        let t2 = s.poll_timeout().unwrap();
        assert_eq!(t2, t1 + Dur::from_secs(2));
        s.on_timeout(t2, &mut out);
        assert_eq!(s.backoff(), 2);
        assert_eq!(s.poll_timeout(), Some(t2 + Dur::from_secs(4)));
        out.clear();
        // The ACK of the second retransmission, 300 ms later, is a sample
        // (SRTT 300 ms, RTTVAR 150 ms: RTO 900 ms) and clears the backoff.
        s.on_ack(t2 + Dur::from_ms(300), MSS, &[], &mut out);
        assert_eq!((s.rtt.samples(), s.rtt.last_sample()), (1, Some(Dur::from_ms(300))));
        assert_eq!(s.backoff(), 0);
        assert_eq!(s.rtt.rto(), Dur::from_ms(1000), "the 1 s minimum RTO");
        assert_eq!(s.poll_timeout(), Some(t2 + Dur::from_ms(300) + Dur::from_secs(1)));
        // The go-back-N resends are retransmissions too; the first is timed.
        assert_eq!(out.len(), 2);
        s.on_ack(t2 + Dur::from_ms(500), 2 * MSS, &[], &mut out);
        assert_eq!((s.rtt.samples(), s.rtt.last_sample()), (2, Some(Dur::from_ms(200))));
    }
}
