"""``[topology]``: queue disciplines, the dumbbell and explicit topologies,
and their normalization into the core's explicit list of links."""

from __future__ import annotations

import functools
import json

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BeforeValidator, Discriminator, Field, Tag, model_validator

from .. import units
from .fields import Duration, Float, HostCount, Int, PositiveSize, QueueLimit, Rate, Size, _Model

# ---------------------------------------------------------------- queues


class DropTailQueue(_Model):
    type: Literal["droptail"] = "droptail"
    limit: QueueLimit = "100pkt"
    """Packets waiting for the transmitter, not counting the one being sent."""


def _queue_shorthand(v: object) -> object:
    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
        return {"type": "droptail", "limit": v}
    return v


class RedQueue(_Model):
    """Random Early Detection (Floyd and Jacobson 1993). Defaults are ns-2's
    (thresh_ 5, maxthresh_ 15, linterm_ 10, q_weight_ 0.002, gentle_ true,
    mean_pktsize_ 500); ns-2 takes the limit from the link's queue-limit."""

    type: Literal["red"]
    limit: QueueLimit = "100pkt"
    min_th: Annotated[Float, Field(ge=0.0)] = 5.0
    """Lower threshold of the average queue, packets (bytes with mode = 'bytes')."""
    max_th: Annotated[Float, Field(gt=0.0)] = 15.0
    max_p: Annotated[Float, Field(ge=0.0, le=1.0)] = 0.1
    w_q: Annotated[Float, Field(gt=0.0, le=1.0)] = 0.002
    gentle: bool = True
    mode: Literal["packets", "bytes"] = "packets"
    mean_pkt: PositiveSize = "500B"
    """Mean packet size: the idle-time decay of the average, and byte-mode scaling."""

    @model_validator(mode="after")
    def _ordered(self) -> "RedQueue":
        if self.max_th <= self.min_th:
            raise ValueError(f"max_th ({self.max_th:g}) must be above min_th ({self.min_th:g})")
        return self


class UbrQueue(_Model):
    """A UBR switch output port (ATM links only): a buffer of `buffer` cells,
    the one being sent included, with a drop policy decided at each frame's
    first cell (occupancy X, R = r x buffer): 'epd' refuses the frame if
    X > R; 'sd' (Selective Drop) if X > R and the VC's cells X_i > z X / N_a,
    N_a the VCs with cells in the buffer; 'ubr' never refuses early. Under
    every policy a cell finding the buffer full is dropped with the rest of
    its frame (PPD). Defaults R = 0.8, Z = 0.8 (Goyal et al. 1998)."""

    type: Literal["ubr"]
    buffer: Annotated[Int, Field(ge=1, le=10**9)]
    """Buffer size, cells."""
    policy: Literal["ubr", "epd", "sd"] = "epd"
    r: Annotated[Float, Field(ge=0.0, le=1.0)] = 0.8
    z: Annotated[Float, Field(gt=0.0, le=100.0)] = 0.8


Queue = Annotated[Union[DropTailQueue, RedQueue, UbrQueue], Field(discriminator="type"), BeforeValidator(_queue_shorthand)]


# ---------------------------------------------------------------- topology


def _as_list(v: object) -> object:
    return v if isinstance(v, list) else [v]


class BottleneckParams(_Model):
    """The dumbbell's r0-r1 link, each direction; a field left out keeps its default."""

    rate: Rate = "10Mbps"
    delay: Duration = "20ms"
    queue: Queue = "100pkt"


class AccessParams(_Model):
    rate: Rate = "100Mbps"
    delay: Annotated[list[Duration], BeforeValidator(_as_list)] = "1ms"
    """One delay for every host, or a list with one delay per host."""
    queue: Queue = "1000pkt"


@functools.lru_cache(maxsize=8)
def _dumbbell_nodes(left: int, right: int) -> list[str]:
    # Kept: with 100,000 hosts, building and hashing the names again for each
    # use (the checks, the links, the core's node list) costs a tenth of a second.
    return [f"s{i}" for i in range(left)] + ["r0", "r1"] + [f"k{i}" for i in range(right)]


class Dumbbell(_Model):
    type: Literal["dumbbell"]
    left: HostCount = 1
    """Hosts s0..s{left-1} on the left of router r0."""
    right: HostCount = 1
    """Hosts k0..k{right-1} on the right of router r1."""
    bottleneck: BottleneckParams = {}  # type: ignore[assignment]
    left_access: AccessParams = {}  # type: ignore[assignment]
    right_access: AccessParams = {}  # type: ignore[assignment]
    atm: bool = False
    """Every link is ATM: packets travel as AAL5 cells (LLC/SNAP, 8-byte
    trailer, 53-byte cells), and a 'ubr' queue is a cell switch port."""

    @model_validator(mode="after")
    def _ubr_needs_atm(self) -> "Dumbbell":
        for name in ("bottleneck", "left_access", "right_access"):
            if isinstance(getattr(self, name).queue, UbrQueue) and not self.atm:
                raise ValueError(f"{name}.queue is a ubr (cell) queue: set topology.atm = true")
        return self

    @model_validator(mode="after")
    def _delays_match_hosts(self) -> "Dumbbell":
        for side, n in (("left_access", self.left), ("right_access", self.right)):
            d = getattr(self, side).delay
            if len(d) not in (1, n):
                raise ValueError(f"{side}.delay lists {len(d)} delays for {n} hosts; give one delay or exactly {n}")
        return self

    def nodes(self) -> list[str]:
        """s0.., r0, r1, k0.. (a list shared by every call with these host
        counts; not to be changed)."""
        return _dumbbell_nodes(self.left, self.right)


class LinkOverride(_Model):
    rate: Optional[Rate] = None
    delay: Optional[Duration] = None
    queue: Optional[Queue] = None


class ExplicitLink(_Model):
    src: str = Field(alias="from")
    dst: str = Field(alias="to")
    rate: Rate
    delay: Duration = "0s"
    queue: Queue = "100pkt"
    duplex: bool = True
    """Also create the link in the other direction."""
    atm: bool = False
    """An ATM link (both directions): packets travel as AAL5 cells; a 'ubr' queue needs it."""
    reverse: Optional[LinkOverride] = None
    """Settings of the reverse direction that differ from this one."""

    @model_validator(mode="after")
    def _consistent(self) -> "ExplicitLink":
        if self.reverse is not None and not self.duplex:
            raise ValueError("reverse sets the other direction, which duplex = false leaves out: drop one of them")
        for name, q in (("queue", self.queue), ("reverse.queue", self.reverse.queue if self.reverse else None)):
            if isinstance(q, UbrQueue) and not self.atm:
                raise ValueError(f"{name} is a ubr (cell) queue: set atm = true on this link")
        return self


class Explicit(_Model):
    type: Literal["explicit"]
    nodes: Annotated[list[str], Field(min_length=2)]
    links: Annotated[list[ExplicitLink], Field(min_length=1)]

    def node_list(self) -> list[str]:
        return list(self.nodes)


#: Wireless link profiles (Järvinen et al., IETF 78, 2010): rate, one-way
#: propagation delay, and the "large" buffer the study used (none for LTE).
WIRELESS_PROFILES = {
    "edge": {"rate": "160kbps", "delay": "250ms", "large": "50pkt"},
    "hspa": {"rate": "2Mbps", "delay": "70ms", "large": "50pkt"},
    "lte": {"rate": "50Mbps", "delay": "15ms", "large": None},
}


def wireless_bdp_packets(rate_bps: int, delay_ns: int) -> int:
    """The study's buffer of one BDP: rate times the round trip of the
    wireless link alone (2 x its one-way delay), in 1500-byte packets,
    rounded up (EDGE 6.7 -> 7, HSPA 23.3 -> 24, LTE 125)."""
    bits = rate_bps * 2 * delay_ns
    per_packet = 1500 * 8 * 10**9
    return -(-bits // per_packet)


def _buffer(v: object) -> object:
    if isinstance(v, str) and v.strip().lower() in ("bdp", "large"):
        return v.strip().lower()
    if isinstance(v, (str, int, float)):  # a queue limit, or no such buffer (true is neither)
        units.parse_packets_or_bytes(v, f"'bdp', 'large', {units.LIMIT_HELP}, or a queue table")
    return v


def _buffer_kind(v: object) -> str:
    """The study's buffers by name, or a queue of the user's; so a bad value
    is refused as what it was meant to be, not once for each kind."""
    return "preset" if v in ("bdp", "large") else "queue"


class Wireless(_Model):
    """Servers s0..s{servers-1} reach gateway gw over the Internet side; gw
    reaches the mobile client m0 over a wireless link of one profile. The
    wireless link carries data to m0 (its buffer is the profile's) and ACKs
    back (a large buffer). No wireless errors or allocation delays are modelled."""

    type: Literal["wireless"]
    profile: Literal["edge", "hspa", "lte"]
    buffer: Annotated[
        Union[Annotated[Literal["bdp", "large"], Tag("preset")], Annotated[Queue, Tag("queue")]],
        Discriminator(_buffer_kind), BeforeValidator(_buffer),
    ] = "bdp"
    """'bdp' (rate x 2 x delay in 1500-byte packets, rounded up), 'large' (50 packets; EDGE and HSPA), or a queue."""
    servers: HostCount = 1
    rate: Optional[Rate] = None
    """The wireless link's rate; default: the profile's."""
    delay: Optional[Duration] = None
    """The wireless link's one-way delay; default: the profile's."""
    internet_rate: Rate = "100Mbps"
    internet_delay: Duration = "11ms"
    """One-way delay between the servers and the wireless link."""

    @model_validator(mode="after")
    def _large_exists(self) -> "Wireless":
        if self.buffer == "large" and WIRELESS_PROFILES[self.profile]["large"] is None:
            raise ValueError(f"profile '{self.profile}' has no large buffer in the study (BDP only); give buffer = 'bdp' or a limit such as '933pkt'")
        if isinstance(self.buffer, UbrQueue):
            # The core refused it, naming its own link number.
            raise ValueError("buffer is a ubr (cell) queue, which needs ATM links; the wireless topology has none: give 'bdp', 'large', "
                             "or a droptail or red queue")  # fmt: skip
        return self

    def nodes(self) -> list[str]:
        return [f"s{i}" for i in range(self.servers)] + ["gw", "m0"]

    def wireless_link(self) -> tuple[int, int, Any]:
        """(rate, one-way delay, downlink queue) of the wireless link."""
        from .. import units

        prof = WIRELESS_PROFILES[self.profile]
        rate = self.rate if self.rate is not None else units.parse_rate(prof["rate"])
        delay = self.delay if self.delay is not None else units.parse_duration(prof["delay"])
        if self.buffer == "bdp":
            queue: Any = DropTailQueue(limit=f"{wireless_bdp_packets(rate, delay)}pkt")
        elif self.buffer == "large":
            queue = DropTailQueue(limit=prof["large"])
        else:
            queue = self.buffer
        return rate, delay, queue


Topology = Annotated[Union[Dumbbell, Explicit, Wireless], Field(discriminator="type")]


def _core_queue(q: Union[DropTailQueue, RedQueue, UbrQueue]) -> dict[str, Any]:
    if isinstance(q, UbrQueue):
        return {"type": "ubr", "buffer_cells": q.buffer, "r": q.r, "z": q.z, "policy": q.policy}
    kind, n = q.limit
    out: dict[str, Any] = {"type": q.type, "limit_pkts": n if kind == "pkts" else None, "limit_bytes": n if kind == "bytes" else None}
    if isinstance(q, RedQueue):
        out.update(min_th=q.min_th, max_th=q.max_th, max_p=q.max_p, w_q=q.w_q, gentle=q.gentle,
                   byte_mode=q.mode == "bytes", mean_pkt_bytes=q.mean_pkt)  # fmt: skip
    return out


class LinkTable:
    """A topology's link directions in the core's terms, as columns: nodes by
    index into `nodes`, queues by index into `queues` (each distinct queue
    once). Written out as the plain `links` list or the packed columns."""

    def __init__(self, nodes: list[str]):
        self.nodes = nodes
        self.index = dict(zip(nodes, range(len(nodes))))
        self.cols: dict[str, list[int]] = {"from": [], "to": [], "rate_bps": [], "delay_ns": [], "queue": []}
        self.atm: list[bool] = []
        self.queues: list[dict[str, Any]] = []
        self._queue_ids: dict[str, int] = {}

    def queue(self, q: Any) -> int:
        """The index of queue `q` (a queue model, or one in the core's form)."""
        d = q if isinstance(q, dict) else _core_queue(q)
        text = json.dumps(d, sort_keys=True)
        if text not in self._queue_ids:
            self._queue_ids[text] = len(self.queues)
            self.queues.append(d)
        return self._queue_ids[text]

    def add(self, a: str, b: str, rate: int, delay: int, queue: Any, atm: bool = False) -> None:
        self.extend([self.index[a]], [self.index[b]], rate, [delay], self.queue(queue), atm)

    def extend(self, frm: list[int], to: list[int], rate: int, delays: list[int], queue: int, atm: bool) -> None:
        """Links frm[i] -> to[i], all of one rate, queue and kind."""
        c = self.cols
        n = len(frm)
        c["from"] += frm
        c["to"] += to
        c["rate_bps"] += [rate] * n
        c["delay_ns"] += delays
        c["queue"] += [queue] * n
        self.atm += [atm] * n

    def names(self) -> set[str]:
        """Every link direction as 'from->to'."""
        n = self.nodes
        return {f"{n[a]}->{n[b]}" for a, b in zip(self.cols["from"], self.cols["to"])}

    def dicts(self) -> list[dict[str, Any]]:
        """The core's plain `links`: one table per link direction."""
        n, c = self.nodes, self.cols
        out = []
        for a, b, rate, delay, q, atm in zip(c["from"], c["to"], c["rate_bps"], c["delay_ns"], c["queue"], self.atm):
            d = {"from": n[a], "to": n[b], "rate_bps": rate, "delay_ns": delay, "queue": self.queues[q]}
            if atm:  # only when set, so stored run ids of other scenarios stay valid
                d["atm"] = True
            out.append(d)
        return out

    def packed(self) -> dict[str, Any]:
        """The core's packed `link_columns` (with `atm` only if some link is)."""
        cols: dict[str, Any] = dict(self.cols)
        if any(self.atm):
            cols["atm"] = self.atm
        return cols


def _interleave(a: Any, b: Any) -> list[Any]:
    """a[0], b[0], a[1], b[1], ...: for 100,000 hosts, slice assignment is
    several times faster than a comprehension."""
    out: list[Any] = [None] * (2 * len(a))
    out[0::2] = a
    out[1::2] = b
    return out


def _twice(a: list[Any]) -> list[Any]:
    """a[0], a[0], a[1], a[1], ..."""
    return _interleave(a, a)


def _core_topology(t: Union[Dumbbell, Explicit, Wireless]) -> LinkTable:
    if isinstance(t, Wireless):
        lt = LinkTable(t.nodes())
        big = _core_queue(DropTailQueue(limit="1000pkt"))
        for i in range(t.servers):
            lt.add(f"s{i}", "gw", t.internet_rate, t.internet_delay, big)
            lt.add("gw", f"s{i}", t.internet_rate, t.internet_delay, big)
        rate, delay, queue = t.wireless_link()
        lt.add("gw", "m0", rate, delay, queue)
        lt.add("m0", "gw", rate, delay, big)
        return lt
    if isinstance(t, Dumbbell):
        # Hosts s0.. are nodes 0..left-1, then r0 and r1, then hosts k0...
        lt = LinkTable(t.nodes())
        r0, r1 = t.left, t.left + 1
        for side, n, router, first in (("left_access", t.left, r0, 0), ("right_access", t.right, r1, t.left + 2)):
            acc: AccessParams = getattr(t, side)
            q = lt.queue(acc.queue)
            delays = _twice(acc.delay if len(acc.delay) > 1 else acc.delay * n)
            hosts = range(first, first + n)
            # Each host's two directions in turn: outward from the host first on the left, inward first on the right.
            out_first = side == "left_access"
            frm = _interleave(hosts, [router] * n) if out_first else _interleave([router] * n, hosts)
            to = _interleave([router] * n, hosts) if out_first else _interleave(hosts, [router] * n)
            lt.extend(frm, to, acc.rate, delays, q, t.atm)
            if out_first:
                b = t.bottleneck
                lt.extend([r0, r1], [r1, r0], b.rate, [b.delay, b.delay], lt.queue(b.queue), t.atm)
        return lt
    lt = LinkTable(t.node_list())
    for link in t.links:
        lt.add(link.src, link.dst, link.rate, link.delay, link.queue, link.atm)
        if link.duplex:
            r = link.reverse or LinkOverride()
            lt.add(
                link.dst,
                link.src,
                r.rate if r.rate is not None else link.rate,
                r.delay if r.delay is not None else link.delay,
                r.queue if r.queue is not None else link.queue,
                link.atm,
            )
    return lt
