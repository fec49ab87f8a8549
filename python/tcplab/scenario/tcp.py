"""``[tcp]``: the TCP settings every application uses unless its own
``tcp = { ... }`` overrides them, and their normalization for the core."""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Literal, Optional

from pydantic import ConfigDict, Field, TypeAdapter, model_serializer, model_validator

from .fields import CcName, ClockPhase, Duration, InitialWindow, Int, JitterDuration, PositiveInt, RetryCount, Size, Ssthresh, TimerDuration, Window, _Model

class Tcp(_Model):
    cc: CcName = "reno"
    """tahoe, reno, newreno, sack (RFC 6675), highspeed (RFC 3649), cubic (RFC 9438)."""
    iw: InitialWindow = 1
    """Initial window: segments (4), bytes ('4380B'), 'rfc3390' or 'rfc6928'."""
    mss: Annotated[Size, Field(ge=1, le=65495)] = "1460B"
    """At most 65495 bytes: with 40 bytes of headers, a segment fills the largest IPv4 packet (and TCP's 16-bit MSS option)."""
    header: Annotated[Size, Field(le=1000)] = "40B"
    """Header bytes on every packet (data and ACK)."""
    window: Window = "64KiB"
    """Maximum (receiver) window: '64KiB' or '1000pkt' (segments of mss)."""
    window_scaling: bool = True
    """RFC 7323 window scaling; without it the window is at most 65535 bytes."""
    ssthresh: Ssthresh = "inf"
    """Initial slow-start threshold: 'inf', 'bdp' (the path's bandwidth-delay product), or an amount."""
    rto_initial: TimerDuration = "1s"
    rto_min: Duration = "1s"
    rto_max: TimerDuration = "60s"
    clock_granularity: Duration = "1ms"
    max_backoff: Annotated[Int, Field(ge=0, le=62)] = 6
    max_retries: RetryCount = 15
    """Retransmissions of one segment (or of the SYN, the SYN-ACK, a client message) after which the
    connection gives up unanswered and closes (RFC 9293 3.8.3's R2; Linux's tcp_retries2 = 15). 'none': never, as ns-2."""
    dupack_threshold: Annotated[Int, Field(ge=1, le=10**6)] = 3
    abc_limit: Annotated[Int, Field(ge=1, le=10**6)] = 2
    byte_counting: bool = True
    """RFC 3465 byte counting in slow start (Reno family and cubic); false: one segment per ACK of new data, as in RFC 2581, ns-2 and Linux's tcp_abc = 0."""
    hystart: bool = False
    """cubic only: HyStart, as Linux's CUBIC from 2.6.29 (on by default there): slow start ends when
    an ACK train spans half the minimum RTT or a round's RTT rises above the minimum by RTT/16 (2-16 ms)."""
    delayed_ack: bool = False
    delack_timeout: Duration = "200ms"
    delack_segments: Annotated[Int, Field(ge=1, le=10**6)] = 2
    quickack: Annotated[Int, Field(ge=0, le=10**6)] = 0
    """With delayed ACKs, the first this many ACKs of a connection go out at once (Linux's quick-ACK mode; Linux allows 16)."""
    timestamps: bool = False
    """RTT measurement with RFC 7323 timestamps (on by default in Linux): a
    retransmitted segment is timed too, so the first ACK after a timeout
    gives an RTT sample and clears the RTO backoff. False: Karn's rule."""
    limited_transmit: bool = False
    """RFC 3042: a new segment for each of the first two duplicate ACKs."""
    idle_restart: bool = True
    """RFC 5681 section 4.1: after an idle RTO, restart from min(IW, cwnd)."""
    sack_blocks: Annotated[Int, Field(ge=1, le=4)] = 3
    """Most SACK blocks per ACK (sack, highspeed and cubic use SACK)."""
    handshake: bool = False
    """SYN / SYN-ACK / request before data and FIN at the end (two-way TCP)."""
    local_congestion: Literal["none", "linux"] = "none"
    """What a segment meets when the sending host's interface queue (its first
    link's queue: the txqueuelen) is full. 'none': it is offered and dropped
    there, like any queue. 'linux': as Linux 2.4, it is not sent (a send
    stall, web100 SendStall) and the connection enters congestion window
    reduction, without a retransmission."""
    window_growth: Literal["none", "linux"] = "none"
    """The receiver's advertised window: 'none': `window` from the start;
    'linux': as Linux 2.4, 4 segments at first, then 2 more for each data
    segment received, up to `window` (the socket buffer)."""
    sack_recovery: Literal["rfc6675", "ns2-1998", "ns2", "linux"] = "rfc6675"
    """What SACK recovery sends. 'rfc6675': pipe from the scoreboard (IsLost,
    NextSeg). 'ns2-1998': ns-2's Sack1 agent as of 1998 (the ns-2.1b3 era): a
    pipe counter set to cwnd - 3 segments at the third duplicate ACK, one less
    per ACK (two per partial ACK), one more per segment sent, holes below the
    highest SACKed segment first; and, as that code, nothing is sent in
    recovery once every byte written has been sent once. 'ns2': ns-2 2.35's
    Sack1 (oldCode_ off): the same counter, but set to the segments
    outstanding (limited transmit's included) - 3, and no stall at the end.
    'linux': Linux 2.6's rate-halving (tcp_cwnd_down): RFC 6675's scoreboard,
    but the window starts at cwnd and loses one segment every second ACK that
    SACKs or acknowledges new data, down to ssthresh, kept at most pipe + 1
    segment, so one segment goes out per two such ACKs; the recovery ends
    with cwnd = min(that window, ssthresh)."""
    sack_loss: Literal["rfc6675", "fack"] = "rfc6675"
    """Which segments SACK recovery (with sack_recovery 'rfc6675' or 'linux')
    deems lost. 'rfc6675': IsLost, more than dupack_threshold - 1 segments'
    worth of SACKed bytes above the segment. 'fack': forward acknowledgement,
    on by default in Linux from 2.2 to 4.10 (tcp_fack): lost once the highest SACKed
    byte lies more than dupack_threshold - 1 segments past the segment's end,
    the bytes between SACKed or not. Either way a fast retransmit starts at
    the dupack_threshold-th duplicate ACK, or sooner once the first segment
    is lost so."""
    newreno_recovery: Literal["rfc6582", "ns2-1998"] = "rfc6582"
    """How newreno recovers. 'rfc6582': window inflation, partial ACKs deflate
    by the amount acknowledged, only the first partial ACK restarts the
    retransmission timer, and a new recovery only after the ACK passes the
    recover point. 'ns2-1998': ns-2's Newreno agent with newreno_changes_ 1
    (Hoe's algorithm as Allman wrote it, the ns-2.1b3 era): one new segment for
    every second duplicate ACK in recovery (the 'flywheel'), a partial ACK
    deflates to cwnd, restarts the retransmission timer and retransmits the
    next hole only, the full ACK also
    grows the window, and no guard against a fast retransmit right after a
    fast recovery."""
    timeout_ssthresh: Literal["rfc5681", "ns2", "linux"] = "rfc5681"
    """What a retransmission timeout does to ssthresh. 'rfc5681': half the
    flight (at least 2 segments), at every timeout. 'ns2': as ns-2's TCP
    agents, half the congestion window (at most the receiver's window;
    without a fast recovery's inflation, which ns-2's Reno agents zero first,
    but after NewReno's partial-ACK deflation) in whole segments, at every
    timeout: in a fast recovery, half the window the fast retransmit had
    already halved. 'linux':
    as Linux's tcp_enter_loss, half the congestion window in whole segments,
    but a timeout during a fast recovery, or a repeated timeout before any
    retransmission is acknowledged, keeps ssthresh."""
    rtt_estimator: Literal["rfc6298", "ns2"] = "rfc6298"
    """How the retransmission timeout is estimated. 'rfc6298': SRTT and
    RTTVAR from each sample, RTO = SRTT + max(clock_granularity, 4 RTTVAR).
    'ns2': as ns-2's TCP agents without timestamps (TcpAgent::rtt_update): a
    sample is the number of clock ticks it spans (clock_granularity is ns-2's
    tcpTick_), at least one; SRTT and RTTVAR are kept in eighths and quarters
    of a tick; RTO = SRTT + 4 RTTVAR in whole ticks, at least rto_min and two
    ticks; once timeouts have backed the timer off past 8 times the RTO, the
    next sample starts the estimate afresh (rtt_backoff)."""
    clock_phase: ClockPhase = "0s"
    """With rtt_estimator = 'ns2', where the clock's ticks fall: this long
    after each multiple of clock_granularity (less than one granularity), or
    'random': drawn for each connection from the seed, uniformly within one
    granularity, as each ns-2 agent draws its boot_time_. No effect with
    'rfc6298'."""
    limited_transmit_data: Literal["unsent", "ns2"] = "unsent"
    """What limited transmit may send on the first duplicate ACKs. 'unsent':
    previously unsent data only (RFC 5681 section 3.2 step 1). 'ns2': the next
    segment even when a timeout's go-back has pulled it below the highest
    sent, as ns-2's singledup_ (send_one) does; with tahoe, a timeout also
    keeps the count of duplicate ACKs, as ns-2's Agent/TCP does, so those
    still arriving after it send nothing. No effect without
    limited_transmit."""
    recovery_exit: Literal["rfc5681", "ns2"] = "rfc5681"
    """The ACK that ends a fast recovery. 'rfc5681': it deflates the window to
    ssthresh (RFC 5681 section 3.2 step 6; RFC 6582 and RFC 6675 alike).
    'ns2': as ns-2's Reno and Newreno agents, the ACK that ends a reno or
    newreno recovery then also grows the window as any ACK of new data would
    (recv_newack_helper calls opencwnd); SACK recovery is unchanged, as in
    ns-2's Sack1. newreno_recovery = 'ns2-1998' always grows."""
    sack_option_bytes: Literal["rfc2018", "ns2"] = "rfc2018"
    """What an ACK's SACK option adds to its size. 'rfc2018': 2 bytes plus 8
    per block (RFC 2018 section 3) after two NOPs, as stacks send it. 'ns2':
    8 bytes per block, as ns-2's Sack1 sink counts it. Captures show the
    option as stacks send it either way."""
    ca_increment: Literal["rfc5681", "ns2"] = "rfc5681"
    """Congestion avoidance's growth per ACK when ACKs are counted
    (byte_counting = false), for tahoe, reno, newreno and sack. 'rfc5681':
    SMSS*SMSS/cwnd in whole bytes, at least one (RFC 5681 equation 3).
    'ns2': the fraction of a byte is kept, as ns-2's cwnd_ (a double, in
    segments) grows by 1/cwnd_. No effect with byte counting."""
    fast_retransmit_ssthresh: Literal["rfc5681", "ns2"] = "rfc5681"
    """What a fast retransmit halves. 'rfc5681': the flight, leaving out
    what limited transmit sent (RFC 5681 section 3.2 step 2); cwnd = ssthresh.
    'ns2': the window, min(cwnd, window), as ns-2's slowdown: for tahoe, reno,
    newreno and sack, ssthresh is half of it in whole segments (at least 2,
    at a timeout too) and cwnd the half itself, fraction and all."""
    hstcp_lookup: Literal["formula", "table", "linux"] = "formula"
    """How highspeed finds a(w) and b(w): RFC 3649's closed forms; its table,
    row at or below the window; or the table's next row above, as Linux."""
    send_jitter: JitterDuration = "0s"
    """Each opportunity to send waits a random time, uniform in
    [0, send_jitter] and drawn from the seed for each connection, and then
    every segment held back goes out together (ns-2's overhead_: send_much
    sets its delayed-send timer to Random::uniform(overhead_) and, when it
    fires, sends all the window allows). It breaks the phase effects of a
    deterministic drop-tail network (Floyd and Jacobson 1992). '0s': at once."""

    def iw_bytes(self) -> int:
        kind, n = self.iw
        mss = self.mss
        if kind == "pkts":
            return n * mss
        if kind == "bytes":
            return n
        if kind == "rfc3390":
            return min(4 * mss, max(2 * mss, 4380))
        return min(10 * mss, max(2 * mss, 14600))


def _optional_model(model: type[_Model], name: str) -> type[_Model]:
    """The same fields as `model`, each optional and unset by default."""
    # Every default is None: there is nothing to validate, and a scenario of
    # 100,000 applications would otherwise check 28 unset fields of each.
    ns: dict[str, Any] = {"__annotations__": {}, "model_config": ConfigDict(extra="forbid", populate_by_name=True, validate_default=False)}
    for fname, f in model.model_fields.items():
        ns["__annotations__"][fname] = Optional[f.rebuild_annotation()]  # type: ignore[attr-defined]
        ns[fname] = None
    # A key given as None is left unset, so that a set field whose value is
    # None ('inf' ssthresh, 'none' max_retries) overrides the shared one;
    # such a field is written back as the shared model writes that value
    # ('inf', 'none'), an unset one as None.
    ns["_given_only"] = model_validator(mode="before")(classmethod(lambda cls, d: {k: v for k, v in d.items() if v is not None} if isinstance(d, dict) else d))
    # How each such field writes None, found on the first dump that needs it
    # (a TypeAdapter per field costs start-up some 15 ms).
    nullable = {fname: f.rebuild_annotation() for fname, f in model.model_fields.items() if _accepts_none(f.rebuild_annotation())}  # type: ignore[attr-defined]
    none_as: dict[str, Any] = {}

    def dump(self: Any, handler: Any) -> Any:
        out = handler(self)
        for k in self.model_fields_set & nullable.keys():
            if getattr(self, k) is None:
                if k not in none_as:
                    none_as[k] = TypeAdapter(nullable[k]).dump_python(None, mode="json")
                out[k] = none_as[k]
        return out

    ns["_set_none_as_written"] = model_serializer(mode="wrap")(dump)
    # Named as this module's attribute (the caller assigns it to `name` here),
    # so that pickle finds the class: a Scenario, and so a Result, could not
    # be pickled (a multiprocessing pool could not return one).
    ns["__module__"], ns["__qualname__"] = __name__, name
    return types.new_class(name, (_Model,), {}, lambda d: d.update(ns))


def _accepts_none(annotation: Any) -> bool:
    """Whether a field's parsed value may be None ('inf', 'none')."""
    return type(None) in typing.get_args(typing.get_args(annotation)[0] if typing.get_origin(annotation) is Annotated else annotation)


TcpOverride = _optional_model(Tcp, "TcpOverride")


def _window_bytes(w: tuple[str, int], mss: int) -> int:
    kind, n = w
    return n * mss if kind == "pkts" else n



def _core_tcp(t: Tcp) -> dict[str, Any]:
    core = {
        "cc": t.cc,
        "mss": t.mss,
        "header": t.header,
        "iw_bytes": t.iw_bytes(),
        "max_window_bytes": _window_bytes(t.window, t.mss),
        "initial_ssthresh_bytes": None if t.ssthresh is None or t.ssthresh[0] == "bdp" else _window_bytes(t.ssthresh, t.mss),
        "ssthresh_bdp": t.ssthresh is not None and t.ssthresh[0] == "bdp",
        "rto_initial_ns": t.rto_initial,
        "rto_min_ns": t.rto_min,
        "rto_max_ns": t.rto_max,
        "granularity_ns": t.clock_granularity,
        "dupack_threshold": t.dupack_threshold,
        "max_backoff": t.max_backoff,
        "abc_limit": t.abc_limit,
        "delayed_ack": t.delayed_ack,
        "delack_timeout_ns": t.delack_timeout,
        "delack_segments": t.delack_segments,
        "limited_transmit": t.limited_transmit,
        "idle_restart": t.idle_restart,
        "sack_blocks": t.sack_blocks,
        "handshake": t.handshake,
        "byte_counting": t.byte_counting,
    }
    # Options added later appear only when set, so the run ids (hashes of
    # this document) of existing sweep stores stay valid.
    if t.local_congestion != "none":
        core["local_congestion"] = True
    if t.window_growth != "none":
        core["window_growth"] = True
    if t.sack_recovery != "rfc6675":
        core["sack_recovery"] = t.sack_recovery
    if t.sack_loss != "rfc6675":
        core["sack_loss"] = t.sack_loss
    if t.newreno_recovery != "rfc6582":
        core["newreno_recovery"] = t.newreno_recovery
    if t.timeout_ssthresh != "rfc5681":
        core["timeout_ssthresh"] = t.timeout_ssthresh
    if t.rtt_estimator != "rfc6298":
        core["rtt_estimator"] = t.rtt_estimator
    if t.clock_phase is None:
        core["clock_phase_random"] = True
    elif t.clock_phase:
        core["clock_phase_ns"] = t.clock_phase
    if t.limited_transmit_data != "unsent":
        core["lt_old_data"] = True
    if t.recovery_exit != "rfc5681":
        core["exit_growth"] = True
    if t.sack_option_bytes != "rfc2018":
        core["ns2_sack_bytes"] = True
    if t.ca_increment != "rfc5681":
        core["ns2_ca_fraction"] = True
    if t.fast_retransmit_ssthresh != "rfc5681":
        core["ns2_fr_halving"] = True
    if t.hstcp_lookup != "formula":
        core["hstcp_lookup"] = t.hstcp_lookup
    if t.quickack:
        core["quickack"] = t.quickack
    if t.max_retries != 15:  # the core's default
        core["max_retries"] = t.max_retries  # None: never
    if t.timestamps:
        core["timestamps"] = True
    if t.send_jitter:
        core["send_jitter_ns"] = t.send_jitter
    if t.hystart:
        core["hystart"] = True
    return core

