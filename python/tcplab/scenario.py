"""Scenario files: loading, overrides, validation, and normalization for the core.

A scenario is a TOML document (or the equivalent dictionary) with four
tables: ``[sim]``, ``[topology]``, ``[tcp]`` and ``[[apps]]``. Every field has
a default, documented in ``docs/scenario.md``; unknown fields are errors.
:func:`load` returns a validated :class:`Scenario`; :meth:`Scenario.to_core`
produces the normalized form the Rust core runs (integers in nanoseconds,
bytes and bits per second; an explicit list of nodes and links).
"""

from __future__ import annotations

import copy
import tomllib
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, ValidationError, model_validator

from . import units
from .errors import FieldProblem, ScenarioError

# ---------------------------------------------------------------- field types


def _inf_or(parser):
    def parse(v: object):
        if isinstance(v, str) and v.strip().lower() in ("inf", "infinite", "unlimited"):
            return None
        return parser(v)

    return parse


def _none_or(parser):
    def parse(v: object):
        if v is None or (isinstance(v, str) and v.strip().lower() == "none"):
            return None
        return parser(v)

    return parse


def _ser(fmt, none: str | None = None):
    return PlainSerializer(lambda v: none if v is None else fmt(v), return_type=Optional[str])


def _fmt_amount(v: tuple[str, int]) -> str:
    kind, n = v
    return f"{n}pkt" if kind == "pkts" else units.format_size(n)


# Each type parses human units into base units, and writes them back in a
# form that parses to the same value, so a dumped scenario reloads exactly.
Rate = Annotated[int, BeforeValidator(units.parse_rate), _ser(units.format_rate)]
Duration = Annotated[int, BeforeValidator(units.parse_duration), _ser(units.format_duration)]
Size = Annotated[int, BeforeValidator(units.parse_size), _ser(units.format_size)]
SizeOrInf = Annotated[Optional[int], BeforeValidator(_inf_or(units.parse_size)), _ser(units.format_size, "inf")]
DurationOrNone = Annotated[Optional[int], BeforeValidator(_none_or(units.parse_duration)), _ser(units.format_duration, "none")]
QueueLimit = Annotated[tuple[str, int], BeforeValidator(lambda v: units.parse_packets_or_bytes(v, units.LIMIT_HELP)), _ser(_fmt_amount)]
Window = Annotated[tuple[str, int], BeforeValidator(lambda v: units.parse_packets_or_bytes(v, units.WINDOW_HELP)), _ser(_fmt_amount)]
Ssthresh = Annotated[Optional[tuple[str, int]], BeforeValidator(lambda v: _parse_ssthresh(v)), PlainSerializer(lambda v: _fmt_ssthresh(v))]
IW_HELP = "an initial window in segments such as 4, in bytes such as '4380B', or 'rfc3390' or 'rfc6928'"


def _parse_iw(v: object) -> tuple[str, int]:
    if isinstance(v, str) and v.strip().lower() in ("rfc3390", "rfc6928"):
        return v.strip().lower(), 0
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 1:
            raise ValueError(f"expected {IW_HELP}; it must be at least 1")
        return "pkts", v
    try:
        kind, n = units.parse_packets_or_bytes(v, IW_HELP)
    except ValueError:
        raise ValueError(f"expected {IW_HELP}") from None
    if n < 1:
        raise ValueError(f"expected {IW_HELP}; it must be at least 1")
    return kind, n


def _fmt_iw(v: tuple[str, int]) -> object:
    kind, n = v
    return n if kind == "pkts" else (f"{n}B" if kind == "bytes" else kind)


def _parse_ssthresh(v: object):
    if isinstance(v, str) and v.strip().lower() == "bdp":
        return ("bdp", 0)
    return _inf_or(lambda x: units.parse_packets_or_bytes(x, units.WINDOW_HELP + ", 'inf' or 'bdp'"))(v)


def _fmt_ssthresh(v) -> str:
    if v is None:
        return "inf"
    return "bdp" if v[0] == "bdp" else _fmt_amount(v)


InitialWindow = Annotated[tuple[str, int], BeforeValidator(_parse_iw), PlainSerializer(_fmt_iw)]
PositiveInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
CcName = Literal["tahoe", "reno", "newreno", "sack", "highspeed", "cubic"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True)


# ---------------------------------------------------------------- [sim]


class Sim(_Model):
    duration: DurationOrNone = "none"
    """Stop time. ``"none"``: run until every transfer completes."""
    seed: NonNegInt = 1


# ---------------------------------------------------------------- queues


class DropTailQueue(_Model):
    type: Literal["droptail"] = "droptail"
    limit: QueueLimit = "100pkt"
    """Packets waiting for the transmitter, not counting the one being sent."""


def _queue_shorthand(v: object) -> object:
    if isinstance(v, (str, int)) and not isinstance(v, bool):
        return {"type": "droptail", "limit": v}
    return v


class RedQueue(_Model):
    """Random Early Detection (Floyd and Jacobson 1993). Defaults are ns-2's
    (thresh_ 5, maxthresh_ 15, linterm_ 10, q_weight_ 0.002, gentle_ true,
    mean_pktsize_ 500); ns-2 takes the limit from the link's queue-limit."""

    type: Literal["red"]
    limit: QueueLimit = "100pkt"
    min_th: Annotated[float, Field(ge=0.0)] = 5.0
    """Lower threshold of the average queue, packets (bytes with mode = 'bytes')."""
    max_th: Annotated[float, Field(gt=0.0)] = 15.0
    max_p: Annotated[float, Field(ge=0.0, le=1.0)] = 0.1
    w_q: Annotated[float, Field(gt=0.0, le=1.0)] = 0.002
    gentle: bool = True
    mode: Literal["packets", "bytes"] = "packets"
    mean_pkt: Size = "500B"
    """Mean packet size: the idle-time decay of the average, and byte-mode scaling."""

    @model_validator(mode="after")
    def _ordered(self) -> "RedQueue":
        if self.max_th <= self.min_th:
            raise ValueError(f"max_th ({self.max_th:g}) must be above min_th ({self.min_th:g})")
        return self


Queue = Annotated[Union[DropTailQueue, RedQueue], Field(discriminator="type"), BeforeValidator(_queue_shorthand)]


# ---------------------------------------------------------------- topology


def _as_list(v: object) -> object:
    return v if isinstance(v, list) else [v]


class LinkParams(_Model):
    rate: Rate
    delay: Duration = "0s"
    queue: Queue = "100pkt"


class AccessParams(_Model):
    rate: Rate = "100Mbps"
    delay: Annotated[list[Duration], BeforeValidator(_as_list)] = "1ms"
    """One delay for every host, or a list with one delay per host."""
    queue: Queue = "1000pkt"


class Dumbbell(_Model):
    type: Literal["dumbbell"]
    left: PositiveInt = 1
    """Hosts s0..s{left-1} on the left of router r0."""
    right: PositiveInt = 1
    """Hosts k0..k{right-1} on the right of router r1."""
    bottleneck: LinkParams = {"rate": "10Mbps", "delay": "20ms"}  # type: ignore[assignment]
    left_access: AccessParams = {}  # type: ignore[assignment]
    right_access: AccessParams = {}  # type: ignore[assignment]

    @model_validator(mode="after")
    def _delays_match_hosts(self) -> "Dumbbell":
        for side, n in (("left_access", self.left), ("right_access", self.right)):
            d = getattr(self, side).delay
            if len(d) not in (1, n):
                raise ValueError(f"{side}.delay lists {len(d)} delays for {n} hosts; give one delay or exactly {n}")
        return self

    def nodes(self) -> list[str]:
        return [f"s{i}" for i in range(self.left)] + ["r0", "r1"] + [f"k{i}" for i in range(self.right)]


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
    reverse: Optional[LinkOverride] = None
    """Settings of the reverse direction that differ from this one."""


class Explicit(_Model):
    type: Literal["explicit"]
    nodes: Annotated[list[str], Field(min_length=2)]
    links: Annotated[list[ExplicitLink], Field(min_length=1)]

    def node_list(self) -> list[str]:
        return list(self.nodes)


Topology = Annotated[Union[Dumbbell, Explicit], Field(discriminator="type")]

# ---------------------------------------------------------------- [tcp]


class Tcp(_Model):
    cc: CcName = "reno"
    """tahoe, reno, newreno, sack (RFC 6675), highspeed (RFC 3649), cubic (RFC 9438)."""
    iw: InitialWindow = 1
    """Initial window: segments (4), bytes ('4380B'), 'rfc3390' or 'rfc6928'."""
    mss: Annotated[Size, Field(ge=1)] = "1460B"
    header: Size = "40B"
    """Header bytes on every packet (data and ACK)."""
    window: Window = "64KiB"
    """Maximum (receiver) window: '64KiB' or '1000pkt' (segments of mss)."""
    window_scaling: bool = True
    """RFC 7323 window scaling; without it the window is at most 65535 bytes."""
    ssthresh: Ssthresh = "inf"
    """Initial slow-start threshold: 'inf', 'bdp' (the path's bandwidth-delay product), or an amount."""
    rto_initial: Duration = "1s"
    rto_min: Duration = "1s"
    rto_max: Duration = "60s"
    clock_granularity: Duration = "1ms"
    max_backoff: NonNegInt = 6
    dupack_threshold: PositiveInt = 3
    abc_limit: PositiveInt = 2
    byte_counting: bool = True
    """RFC 3465 byte counting (Reno family); false: one segment per ACK of new data, as in RFC 2581 and ns-2."""
    delayed_ack: bool = False
    delack_timeout: Duration = "200ms"
    delack_segments: PositiveInt = 2
    limited_transmit: bool = False
    """RFC 3042: a new segment for each of the first two duplicate ACKs."""
    idle_restart: bool = True
    """RFC 5681 section 4.1: after an idle RTO, restart from min(IW, cwnd)."""
    sack_blocks: Annotated[int, Field(ge=1, le=4)] = 3
    """Most SACK blocks per ACK (sack, highspeed and cubic use SACK)."""
    handshake: bool = False
    """SYN / SYN-ACK / request before data and FIN at the end (two-way TCP)."""

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
    ns: dict[str, Any] = {"__annotations__": {}}
    for fname, f in model.model_fields.items():
        ns["__annotations__"][fname] = Optional[f.rebuild_annotation()]  # type: ignore[attr-defined]
        ns[fname] = None
    return types.new_class(name, (_Model,), {}, lambda d: d.update(ns))


TcpOverride = _optional_model(Tcp, "TcpOverride")

# ---------------------------------------------------------------- [[apps]]


class ConstantThink(_Model):
    type: Literal["constant"] = "constant"
    value: Duration = "0s"


class UniformThink(_Model):
    type: Literal["uniform"]
    min: Duration
    max: Duration

    @model_validator(mode="after")
    def _ordered(self) -> "UniformThink":
        if self.min > self.max:
            raise ValueError("min must not exceed max")
        return self


class ExponentialThink(_Model):
    type: Literal["exponential"]
    mean: Duration


def _think_shorthand(v: object) -> object:
    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
        return {"type": "constant", "value": v}
    return v


Think = Annotated[Union[ConstantThink, UniformThink, ExponentialThink], Field(discriminator="type"), BeforeValidator(_think_shorthand)]


class BulkApp(_Model):
    type: Literal["bulk"]
    name: Optional[str] = None
    src: str
    dst: str
    size: SizeOrInf = "1MB"
    """Bytes to transfer, or 'inf'."""
    start: Duration = "0s"
    request: Size = "0B"
    """Request bytes the client sends when the connection opens (with tcp.handshake)."""
    tcp: TcpOverride = {}  # type: ignore[valid-type]


class RepeatApp(_Model):
    type: Literal["repeat"]
    name: Optional[str] = None
    src: str
    dst: str
    size: Size = "1MB"
    start: Duration = "0s"
    think: Think = "0s"
    count: Optional[PositiveInt] = None
    """Transfers to make; unset: until the end of the run."""
    persistent: bool = False
    """Keep the connection open: with no think time and tcp.handshake, each next
    transfer is a request on it (no new handshake or slow start). Each transfer
    is then also a row of res.pages."""
    request: Size = "0B"
    tcp: TcpOverride = {}  # type: ignore[valid-type]


class ConstantSize(_Model):
    type: Literal["constant"]
    size: Size


class LognormalSize(_Model):
    type: Literal["lognormal"]
    median: Size
    sigma: Annotated[float, Field(ge=0.0)]
    max: Size = "10MB"


class ParetoSize(_Model):
    type: Literal["pareto"]
    median: Size
    shape: Annotated[float, Field(gt=0.0)]
    """Tail index alpha; 1.0-1.2 for web objects (Crovella and Bestavros 1996)."""
    max: Size = "10MB"


class EmpiricalSize(_Model):
    type: Literal["empirical"]
    points: list[tuple[Size, Annotated[float, Field(ge=0.0, le=1.0)]]] = []
    """(size, cumulative probability) pairs, both non-decreasing."""
    file: Optional[str] = None
    """A CSV file of 'bytes,cdf' lines (relative to the working directory), instead of points."""

    @model_validator(mode="after")
    def _one_source(self) -> "EmpiricalSize":
        if bool(self.points) == bool(self.file):
            raise ValueError("give either points or a file")
        return self

    def cdf_points(self) -> list[tuple[float, float]]:
        if self.points:
            return [(float(b), float(c)) for b, c in self.points]
        out = []
        for line in Path(self.file).read_text().splitlines():  # type: ignore[arg-type]
            line = line.strip()
            if not line or line.startswith("#") or line[0].isalpha():
                continue
            b, c = line.split(",")[:2]
            out.append((float(b), float(c)))
        return out


SizeDist = Annotated[Union[ConstantSize, LognormalSize, ParetoSize, EmpiricalSize], Field(discriminator="type")]

#: Default object sizes of the web model: Pareto with tail index 1.2 (the
#: heavy tail of Crovella and Bestavros 1996 and Cunha, Bestavros and Crovella
#: 1995), scaled so that the median fits in two 1460-byte segments, as RFC
#: 2415 says of Mah's (1997) primary and in-line objects; capped at 2 MB.
DEFAULT_PRIMARY = {"type": "pareto", "median": "2kB", "shape": 1.2, "max": "2MB"}
DEFAULT_OBJECT = {"type": "pareto", "median": "2kB", "shape": 1.2, "max": "2MB"}


class WebApp(_Model):
    type: Literal["web"]
    name: Optional[str] = None
    src: str
    """The server (data flows from src to dst)."""
    dst: str
    """The client."""
    http: Literal["1.0", "1.1"] = "1.0"
    """1.0: a connection per object, embedded objects fetched at once after the primary;
    1.1: RFC 2415's rough model, one connection carries the whole page: the embedded
    objects are requested together on it once the primary has arrived."""
    embedded: NonNegInt = 3
    primary: SizeDist = DEFAULT_PRIMARY  # type: ignore[assignment]
    object: SizeDist = DEFAULT_OBJECT  # type: ignore[assignment]
    think: Think = {"type": "uniform", "min": "1s", "max": "5s"}  # type: ignore[assignment]
    """Between the end of a page and the next request (RFC 2415: Uniform(1 s, 5 s))."""
    request: Size = "250B"
    """Request (URL) bytes per object; 250 B is about the median HTTP request Mah (1997) measured."""
    pages: Optional[PositiveInt] = None
    start: Duration = "0s"
    tcp: TcpOverride = {}  # type: ignore[valid-type]


App = Annotated[Union[BulkApp, RepeatApp, WebApp], Field(discriminator="type")]


def _link_name(v: object) -> object:
    if isinstance(v, str):
        parts = [p.strip() for p in v.split("->")]
        if len(parts) == 2 and all(parts):
            return v.replace(" ", "")
    raise ValueError("expected a link direction such as 'r0->r1'")


LinkName = Annotated[str, BeforeValidator(_link_name)]
PacketKindName = Literal["data", "ack", "syn", "synack", "request", "close"]


class Loss(_Model):
    link: LinkName
    """The link direction, 'from->to'."""
    app: Optional[str] = None
    """Only packets of this application; unset: all."""
    kind: Optional[PacketKindName] = None
    """Only packets of this kind; unset: all."""
    packets: list[PositiveInt] = []
    """Drop the n-th matching packets that reach the link (1-based; retransmissions count)."""
    rate: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0
    """Drop each matching packet independently with this probability."""


class Trace(_Model):
    interval: DurationOrNone = "none"
    """Sample traced connections this often ('10ms' as web100); 'none': no periodic samples."""
    on_change: bool = False
    """Also record a row whenever cwnd, ssthresh or the state changes."""
    apps: list[str] = []
    """Applications to trace; empty: all (when interval or on_change is set)."""
    links: list[LinkName] = []
    """Links whose packets are logged (enqueue, dequeue, drop)."""

# ---------------------------------------------------------------- the scenario


class Scenario(_Model):
    sim: Sim = {}  # type: ignore[assignment]
    topology: Topology
    tcp: Tcp = {}  # type: ignore[assignment]
    apps: Annotated[list[App], Field(min_length=1)]
    losses: list[Loss] = []
    trace: Trace = {}  # type: ignore[assignment]

    def node_names(self) -> list[str]:
        t = self.topology
        return t.nodes() if isinstance(t, Dumbbell) else t.node_list()

    def app_name(self, i: int) -> str:
        return self.apps[i].name or f"app{i}"

    # -- semantic checks that need the whole scenario
    def problems(self) -> list[FieldProblem]:
        out: list[FieldProblem] = []
        nodes = self.node_names()
        known = set(nodes)
        allowed = _short_list(nodes)
        t = self.topology
        if isinstance(t, Explicit):
            seen: set[str] = set()
            for i, n in enumerate(t.nodes):
                if n in seen:
                    out.append(FieldProblem(f"topology.nodes[{i}]", "node declared twice", n, True))
                seen.add(n)
            for i, link in enumerate(t.links):
                for attr, key in (("src", "from"), ("dst", "to")):
                    v = getattr(link, attr)
                    if v not in known:
                        out.append(FieldProblem(f"topology.links[{i}].{key}", f"unknown node; allowed: {allowed}", v, True))
                if link.src == link.dst:
                    out.append(FieldProblem(f"topology.links[{i}].to", "a link must join two different nodes", link.dst, True))
        names: dict[str, int] = {}
        for i, a in enumerate(self.apps):
            for attr in ("src", "dst"):
                v = getattr(a, attr)
                if v not in known:
                    out.append(FieldProblem(f"apps[{i}].{attr}", f"unknown node; allowed: {allowed}", v, True))
            if a.src == a.dst:
                out.append(FieldProblem(f"apps[{i}].dst", "must differ from src", a.dst, True))
            name = self.app_name(i)
            if name in names:
                out.append(FieldProblem(f"apps[{i}].name", f"already used by apps[{names[name]}]; names must be unique", name, True))
            names[name] = i
            tcp = self.tcp_for(i)
            if tcp.rto_min > tcp.rto_max:
                out.append(FieldProblem(f"apps[{i}].tcp.rto_min" if a.tcp.rto_min is not None else "tcp.rto_min", "must not exceed rto_max", units.format_duration(tcp.rto_min), True))
            if not tcp.window_scaling and _window_bytes(tcp.window, tcp.mss) > 65535:
                where = f"apps[{i}].tcp.window" if a.tcp.window is not None else "tcp.window"
                out.append(FieldProblem(where, f"is {_window_bytes(tcp.window, tcp.mss)} bytes, above 65535 without window scaling; set tcp.window_scaling = true or a window up to 64KiB", _fmt_amount(tcp.window), True))
            if _window_bytes(tcp.window, tcp.mss) < tcp.mss:
                out.append(FieldProblem("tcp.window", f"must hold at least one segment of mss = {tcp.mss} bytes", _fmt_amount(tcp.window), True))
            if self.sim.duration is None:
                endless = (isinstance(a, BulkApp) and a.size is None) or (isinstance(a, (RepeatApp, WebApp)) and getattr(a, "count", getattr(a, "pages", None)) is None)
                if endless:
                    out.append(FieldProblem("sim.duration", f"is 'none' but apps[{i}] never ends; set a duration such as '60s'"))
        links = self.link_names()
        app_names = [self.app_name(i) for i in range(len(self.apps))]
        for where, names in [(f"losses[{i}].link", [l.link]) for i, l in enumerate(self.losses)] + [("trace.links", self.trace.links)]:
            for k, name in enumerate(names):
                if name not in links:
                    f = where if where != "trace.links" else f"trace.links[{k}]"
                    out.append(FieldProblem(f, f"no such link; links: {_short_list(sorted(links))}", name, True))
        for i, l in enumerate(self.losses):
            if l.app is not None and l.app not in app_names:
                out.append(FieldProblem(f"losses[{i}].app", f"unknown application; allowed: {_short_list(app_names)}", l.app, True))
            if not l.packets and l.rate == 0.0:
                out.append(FieldProblem(f"losses[{i}]", "drops nothing: give packets = [...] or a rate"))
        for k, name in enumerate(self.trace.apps):
            if name not in app_names:
                out.append(FieldProblem(f"trace.apps[{k}]", f"unknown application; allowed: {_short_list(app_names)}", name, True))
        return out

    def link_names(self) -> set[str]:
        _, links = _core_topology(self.topology)
        return {f"{l['from']}->{l['to']}" for l in links}

    def tcp_for(self, i: int) -> Tcp:
        t = self.apps[i].tcp
        over = {k: getattr(t, k) for k in type(t).model_fields if getattr(t, k) is not None}
        return self.tcp.model_copy(update=over)

    def to_core(self) -> dict[str, Any]:
        """The normalized scenario for the core (see crates/tcplab-core/src/scenario.rs)."""
        nodes, links = _core_topology(self.topology)
        apps = []
        for i, a in enumerate(self.apps):
            app: dict[str, Any] = {
                "name": self.app_name(i),
                "kind": a.type,
                "src": a.src,
                "dst": a.dst,
                "start_ns": a.start,
                "size_bytes": getattr(a, "size", None),
                "think": None,
                "count": None,
                "request_bytes": a.request,
                "tcp": _core_tcp(self.tcp_for(i)),
            }
            if isinstance(a, RepeatApp):
                app["think"] = _core_think(a.think)
                app["count"] = a.count
                app["persistent"] = a.persistent
            if isinstance(a, WebApp):
                app["size_bytes"] = None
                app["think"] = _core_think(a.think)
                app["web"] = {
                    "http11": a.http == "1.1",
                    "embedded": a.embedded,
                    "primary": _core_size(a.primary),
                    "object": _core_size(a.object),
                    "pages": a.pages,
                }
            apps.append(app)
        losses = []
        for loss in self.losses:
            a, b = loss.link.split("->")
            losses.append({"from": a, "to": b, "app": loss.app, "kind": loss.kind, "nth": list(loss.packets), "rate": loss.rate or None})
        tr = self.trace
        trace = {
            "interval_ns": tr.interval,
            "on_change": tr.on_change,
            "apps": list(tr.apps),
            "links": [name.split("->") for name in tr.links],
        }
        return {
            "seed": self.sim.seed,
            "stop_ns": self.sim.duration,
            "nodes": nodes,
            "links": links,
            "apps": apps,
            "losses": losses,
            "trace": trace,
        }


def _short_list(names: list[str], most: int = 12) -> str:
    if len(names) <= most:
        return ", ".join(names)
    return ", ".join(names[: most - 2]) + f", ... , {names[-1]} ({len(names)} nodes)"


def _window_bytes(w: tuple[str, int], mss: int) -> int:
    kind, n = w
    return n * mss if kind == "pkts" else n


def _core_queue(q: Union[DropTailQueue, RedQueue]) -> dict[str, Any]:
    kind, n = q.limit
    out: dict[str, Any] = {"type": q.type, "limit_pkts": n if kind == "pkts" else None, "limit_bytes": n if kind == "bytes" else None}
    if isinstance(q, RedQueue):
        out.update(min_th=q.min_th, max_th=q.max_th, max_p=q.max_p, w_q=q.w_q, gentle=q.gentle,
                   byte_mode=q.mode == "bytes", mean_pkt_bytes=q.mean_pkt)  # fmt: skip
    return out


def _core_link(a: str, b: str, rate: int, delay: int, queue: Any) -> dict[str, Any]:
    return {"from": a, "to": b, "rate_bps": rate, "delay_ns": delay, "queue": _core_queue(queue)}


def _core_topology(t: Union[Dumbbell, Explicit]) -> tuple[list[str], list[dict[str, Any]]]:
    links: list[dict[str, Any]] = []
    if isinstance(t, Dumbbell):
        for side, n, router, prefix in (("left_access", t.left, "r0", "s"), ("right_access", t.right, "r1", "k")):
            acc: AccessParams = getattr(t, side)
            for i in range(n):
                d = acc.delay[i] if len(acc.delay) > 1 else acc.delay[0]
                host = f"{prefix}{i}"
                if side == "left_access":
                    links.append(_core_link(host, router, acc.rate, d, acc.queue))
                    links.append(_core_link(router, host, acc.rate, d, acc.queue))
                else:
                    links.append(_core_link(router, host, acc.rate, d, acc.queue))
                    links.append(_core_link(host, router, acc.rate, d, acc.queue))
            if side == "left_access":
                b = t.bottleneck
                links.append(_core_link("r0", "r1", b.rate, b.delay, b.queue))
                links.append(_core_link("r1", "r0", b.rate, b.delay, b.queue))
        return t.nodes(), links
    for link in t.links:
        links.append(_core_link(link.src, link.dst, link.rate, link.delay, link.queue))
        if link.duplex:
            r = link.reverse or LinkOverride()
            links.append(
                _core_link(
                    link.dst,
                    link.src,
                    r.rate if r.rate is not None else link.rate,
                    r.delay if r.delay is not None else link.delay,
                    r.queue if r.queue is not None else link.queue,
                )
            )
    return t.node_list(), links


def _core_tcp(t: Tcp) -> dict[str, Any]:
    return {
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


def _core_size(d: Any) -> dict[str, Any]:
    if isinstance(d, ConstantSize):
        return {"type": "constant", "bytes": d.size}
    if isinstance(d, LognormalSize):
        return {"type": "lognormal", "median_bytes": float(d.median), "sigma": d.sigma, "max_bytes": d.max}
    if isinstance(d, ParetoSize):
        return {"type": "pareto", "median_bytes": float(d.median), "shape": d.shape, "max_bytes": d.max}
    return {"type": "empirical", "points": d.cdf_points()}


def _core_think(th: Union[ConstantThink, UniformThink, ExponentialThink]) -> dict[str, Any]:
    if isinstance(th, ConstantThink):
        return {"type": "constant", "ns": th.value}
    if isinstance(th, UniformThink):
        return {"type": "uniform", "min_ns": th.min, "max_ns": th.max}
    return {"type": "exponential", "mean_ns": th.mean}


# ---------------------------------------------------------------- loading and overrides


def read_toml(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"file not found: {p}") from None
    except OSError as e:
        raise ScenarioError(f"cannot read {p}: {e.strerror}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"not valid TOML: {e}", source=str(p)) from None


def parse_override_value(text: str) -> Any:
    """A TOML value (`4`, `true`, `"x"`, `[1, 2]`) or, failing that, the bare text (`2Mbps`)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_overrides(doc: dict[str, Any], overrides: dict[str, Any] | None) -> dict[str, Any]:
    """Set dotted paths (``tcp.iw``, ``apps.0.size``) in a copy of `doc`."""
    out = copy.deepcopy(doc)
    for path, value in (overrides or {}).items():
        if not isinstance(path, str) or not path or any(not part for part in path.split(".")):
            raise ScenarioError([FieldProblem("--set", "expected a dotted field path such as 'tcp.iw'", path, True)])
        parts = path.split(".")
        node: Any = out
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            where = ".".join(parts[: depth + 1])
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    raise ScenarioError([FieldProblem(where, f"no such list element; indices 0..{len(node) - 1}")])
                key: Any = int(part)
            elif isinstance(node, dict):
                key = part
            else:
                raise ScenarioError([FieldProblem(where, f"'{'.'.join(parts[:depth])}' is a value, not a table")])
            if last:
                node[key] = value
            else:
                if isinstance(node, dict) and key not in node:
                    node[key] = {}
                node = node[key]
    return out


def validate(doc: dict[str, Any], source: str | None = None) -> Scenario:
    """Validate a scenario document; raise :class:`ScenarioError` naming every bad field."""
    if not isinstance(doc, dict):
        raise ScenarioError("a scenario is a table (dictionary) of tables", source)
    try:
        sc = Scenario.model_validate(doc)
    except ValidationError as e:
        raise ScenarioError(_problems_from(e, doc), source) from None
    problems = sc.problems()
    if problems:
        raise ScenarioError(problems, source)
    return sc


def load(source: str | Path | dict[str, Any], overrides: dict[str, Any] | None = None, seed: int | None = None) -> Scenario:
    """Load a scenario from a TOML path or a dictionary, apply overrides and validate it."""
    if isinstance(source, dict):
        doc, where = source, None
    else:
        doc, where = read_toml(source), str(source)
    over = dict(overrides or {})
    if seed is not None:
        over["sim.seed"] = seed
    return validate(apply_overrides(doc, over), where)


# ---------------------------------------------------------------- error messages


def _unwrap(ann: Any) -> Any:
    """Strip Annotated/Optional down to a model class, a list, or a union."""
    while True:
        origin = typing.get_origin(ann)
        if origin is Annotated:
            ann = typing.get_args(ann)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(ann) if a is not type(None)]
            if len(args) == 1:
                ann = args[0]
            else:
                return ann
        else:
            return ann


def _field_names(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _walk(loc: tuple[Any, ...]) -> tuple[str, Optional[type[BaseModel]]]:
    """Render a pydantic location as `a.b[0].c`, dropping union tags, and
    return the model class that holds the last element."""
    path = ""
    current: Any = Scenario
    parent: Optional[type[BaseModel]] = None
    for elem in loc:
        ann = _unwrap(current)
        if typing.get_origin(ann) in (Union, types.UnionType):
            tags = {}
            for arg in typing.get_args(ann):
                arg = _unwrap(arg)
                if isinstance(arg, type) and issubclass(arg, BaseModel) and "type" in arg.model_fields:
                    for t in typing.get_args(arg.model_fields["type"].annotation):
                        tags[t] = arg
            if elem in tags:
                current = tags[elem]
                continue
            ann = None
        if typing.get_origin(ann) in (list, tuple) and isinstance(elem, int):
            path += f"[{elem}]"
            current = typing.get_args(ann)[0]
            continue
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            if elem not in ann.model_fields and "type" in ann.model_fields and elem in typing.get_args(ann.model_fields["type"].annotation):
                continue  # the tag of a one-member tagged union
            parent = ann
            field = ann.model_fields.get(elem) or next((f for f in ann.model_fields.values() if f.alias == elem), None)
            current = field.annotation if field is not None else None
        else:
            parent, current = None, None
        path += f".{elem}" if path else str(elem)
    return path or "scenario", parent


def _lookup(doc: Any, loc: tuple[Any, ...]) -> tuple[bool, Any]:
    node = doc
    for elem in loc:
        if isinstance(node, dict) and elem in node:
            node = node[elem]
        elif isinstance(node, list) and isinstance(elem, int) and 0 <= elem < len(node):
            node = node[elem]
        elif isinstance(node, dict) and node.get("type") == elem:
            continue
        elif not isinstance(node, (dict, list)):
            return True, node  # a shorthand (queue = "25pkt") stands for the whole table
        else:
            return False, None
    return True, node


def _problems_from(err: ValidationError, doc: dict[str, Any]) -> list[FieldProblem]:
    out: list[FieldProblem] = []
    for e in err.errors(include_url=False):
        loc = tuple(e["loc"])
        kind = e["type"]
        path, parent = _walk(loc)
        has, value = _lookup(doc, loc)
        ctx = e.get("ctx") or {}
        if kind == "extra_forbidden":
            allowed = ", ".join(_field_names(parent)) if parent else "see docs/scenario.md"
            out.append(FieldProblem(path, f"unknown field; allowed fields here: {allowed}"))
            continue
        if kind == "missing":
            out.append(FieldProblem(path, "required field is missing"))
            continue
        if kind == "value_error":
            msg = str(ctx.get("error", e["msg"]))
        elif kind == "literal_error":
            msg = f"not allowed; allowed values: {ctx.get('expected')}"
        elif kind == "union_tag_invalid":
            msg = f"unknown type; allowed: {ctx.get('expected_tags')}"
            path = f"{path}.type" if path != "scenario" else "type"
            has, value = True, ctx.get("tag")
        elif kind == "union_tag_not_found":
            msg = "a 'type' field is required to tell which kind this is"
            path = f"{path}.type"
            has = False
        elif kind in ("model_type", "model_attributes_type", "dict_type"):
            msg = "expected a table"
        elif kind == "list_type":
            msg = "expected a list"
        elif kind == "too_short":
            msg = f"needs at least {ctx.get('min_length')} item(s)"
        else:
            msg = e["msg"]
        # Tables and lists are not repeated in the message: the path names them.
        out.append(FieldProblem(path, msg, value, has and not isinstance(value, (dict, list))))
    return out
