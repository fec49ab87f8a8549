"""``[[apps]]``: the workloads (bulk, repeat, web, burst), their think-time
and object-size distributions, and their normalization for the core."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BeforeValidator, Field, PrivateAttr, model_validator

from pydantic import PlainSerializer

from .. import units
from .fields import Duration, Float, HostCount, Int, PositiveDuration, PositiveInt, Size, PositiveSize, PositiveSizeOrInf, _Model, not_blank
from .tcp import TcpOverride

START_HELP = "a start time such as '2s', or a range { type = 'uniform', min = '2s', max = '4s' } drawn from per seed"


def _parse_start(v: object) -> tuple[int, int]:
    """A start time, or a uniform range of them, as (min, max) nanoseconds."""
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, int) for x in v):
        return int(v[0]), int(v[1])
    if isinstance(v, dict):
        extra = sorted(set(v) - {"type", "min", "max"})
        if extra:
            raise ValueError(f"unknown field(s) {', '.join(extra)}; expected {START_HELP}")
        if v.get("type") != "uniform" or "min" not in v or "max" not in v:
            raise ValueError(f"expected {START_HELP}")
        lo, hi = units.parse_duration(v["min"]), units.parse_duration(v["max"])
        if lo > hi:
            raise ValueError(f"min ({units.format_duration(lo)}) must not exceed max ({units.format_duration(hi)})")
        return lo, hi
    d = units.parse_duration(v)
    return d, d


def _fmt_start(v: tuple[int, int]) -> object:
    lo, hi = v
    if lo == hi:
        return units.format_duration(lo)
    return {"type": "uniform", "min": units.format_duration(lo), "max": units.format_duration(hi)}


#: A request is one packet: with 40 bytes of headers it fills at most the largest IPv4 packet.
Request = Annotated[Size, Field(le=65495)]

#: When an application first acts: a fixed time, or drawn uniformly from a
#: range with the application's own random stream (so per seed, and so per
#: replication of a sweep).
Start = Annotated[tuple[int, int], BeforeValidator(_parse_start), PlainSerializer(_fmt_start)]


#: An application's name; without one, application i is `app{i}`.
AppName = Annotated[Optional[str], not_blank("app{i}")]


def _http_version(v: object) -> object:
    """`http = 1.1` as TOML reads it unquoted (a float) is the version "1.1"."""
    return {1.0: "1.0", 1.1: "1.1"}.get(v, v) if isinstance(v, float) else v


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
    name: AppName = None
    src: str
    dst: str
    size: PositiveSizeOrInf = "1MB"
    """Bytes to transfer, or 'inf'."""
    start: Start = "0s"
    request: Request = "0B"
    """Request bytes the client sends when the connection opens (with tcp.handshake)."""
    tcp: TcpOverride = Field(default_factory=TcpOverride)  # type: ignore[valid-type]


class RepeatApp(_Model):
    type: Literal["repeat"]
    name: AppName = None
    src: str
    dst: str
    size: PositiveSize = "1MB"
    start: Start = "0s"
    think: Think = "0s"
    count: Optional[PositiveInt] = None
    """Transfers to make; unset: until the end of the run."""
    persistent: bool = False
    """Keep the connection open: with no think time and tcp.handshake, each next
    transfer is a request on it (no new handshake or slow start). Each transfer
    is then also a row of res.pages."""
    request: Request = "0B"
    tcp: TcpOverride = Field(default_factory=TcpOverride)  # type: ignore[valid-type]


class ConstantSize(_Model):
    type: Literal["constant"]
    size: Size


class _CappedSize(_Model):
    """A drawn size with a median and a cap: the cap may not be below the median."""

    @model_validator(mode="after")
    def _ordered(self) -> Any:
        if self.max < self.median:  # type: ignore[attr-defined]
            raise ValueError(f"max ({units.format_size(self.max)}) must not be below the median ({units.format_size(self.median)})")  # type: ignore[attr-defined]
        return self


class LognormalSize(_CappedSize):
    type: Literal["lognormal"]
    median: PositiveSize
    sigma: Annotated[Float, Field(ge=0.0)]
    max: Size = "10MB"


class ParetoSize(_CappedSize):
    type: Literal["pareto"]
    median: PositiveSize
    shape: Annotated[Float, Field(gt=0.0)]
    """Tail index alpha; 1.0-1.2 for web objects (Crovella and Bestavros 1996)."""
    max: Size = "10MB"


class EmpiricalSize(_Model):
    type: Literal["empirical"]
    points: list[tuple[Size, Annotated[Float, Field(ge=0.0, le=1.0)]]] = []
    """(size, cumulative probability) pairs, both non-decreasing, the last probability 1."""
    file: Optional[str] = None
    """A CSV file of 'bytes,cdf' lines, instead of points: in a TOML file, a path
    from that file's directory; in a dictionary or an override, from the working directory."""
    _read: list[tuple[float, float]] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _one_source(self) -> "EmpiricalSize":
        if bool(self.points) == bool(self.file):
            raise ValueError("give either points or a file")
        pts = [(float(b), float(c)) for b, c in self.points] if self.points else _read_cdf(self.file)  # type: ignore[arg-type]
        where = "points" if self.points else f"file {self.file!r}"
        for k in range(1, len(pts)):
            if pts[k][0] < pts[k - 1][0] or pts[k][1] < pts[k - 1][1]:
                raise ValueError(f"{where}: point {k + 1} {_pt(pts[k])} goes below point {k} {_pt(pts[k - 1])}; sizes and probabilities must not decrease")
        for k, p in enumerate(pts):
            if not 0.0 <= p[0] <= units.MAX_SIZE:  # nan fails this too
                raise ValueError(f"{where}: point {k + 1} {_pt(p)}: a size must be from 0 to {units.MAX_SIZE:.0e} bytes")
            if not 0.0 <= p[1] <= 1.0:
                raise ValueError(f"{where}: point {k + 1} {_pt(p)}: a cumulative probability must be within [0, 1]")
        if pts[-1][1] != 1.0:
            raise ValueError(f"{where}: the last cumulative probability is {pts[-1][1]:g}; a distribution function ends at 1")
        self._read = pts
        if self.file and not Path(self.file).is_absolute():
            # The file as found, so that the scenario written out as it ran
            # (`tcplab run --out`, Result.save) finds it again from its own
            # directory, where a relative path would be looked for. Set in
            # place: assigning would validate the model again.
            self.__dict__["file"] = str(Path(self.file).resolve())
        return self

    def cdf_points(self) -> list[tuple[float, float]]:
        return self._read


def _pt(p: tuple[float, float]) -> str:
    return f"({p[0]:g}, {p[1]:g})"


def _read_cdf(file: str) -> list[tuple[float, float]]:
    """The 'bytes,cdf' points of a CSV file (see :func:`parse_cdf`)."""
    try:
        text = Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        where = "" if Path(file).is_absolute() else " (a path relative to the working directory)"
        raise ValueError(f"file {file!r}: no such file{where}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"file {file!r}: cannot read it: {getattr(e, 'strerror', None) or e}") from None
    return parse_cdf(text, f"file {file!r}")


def parse_cdf(text: str, where: str) -> list[tuple[float, float]]:
    """The (bytes, cdf) points of CSV text of 'bytes,cdf' lines (a header
    line, blank lines and # comments skipped); `where` names the text in errors."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#") or line[0].isalpha():
            continue
        try:
            b, c = (float(x) for x in line.split(",")[:2])
        except ValueError:
            raise ValueError(f"{where}: line {n}: expected 'bytes,cdf', got {line!r}") from None
        out.append((b, c))
    if not out:
        raise ValueError(f"{where}: no 'bytes,cdf' lines")
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
    name: AppName = None
    src: str
    """The server (data flows from src to dst)."""
    dst: str
    """The client."""
    http: Annotated[Literal["1.0", "1.1"], BeforeValidator(_http_version)] = "1.0"
    """1.0: a connection per object, embedded objects fetched at once after the primary;
    1.1: RFC 2415's rough model, one connection carries the whole page: the embedded
    objects are requested together on it once the primary has arrived."""
    embedded: Annotated[Int, Field(ge=0, le=10**6)] = 3
    primary: SizeDist = DEFAULT_PRIMARY  # type: ignore[assignment]
    object: SizeDist = DEFAULT_OBJECT  # type: ignore[assignment]
    think: Think = {"type": "uniform", "min": "1s", "max": "5s"}  # type: ignore[assignment]
    """Between the end of a page and the next request (RFC 2415: Uniform(1 s, 5 s))."""
    request: Request = "250B"
    """Request (URL) bytes per object; 250 B is about the median HTTP request Mah (1997) measured."""
    pages: Optional[PositiveInt] = None
    cycle: Optional[PositiveDuration] = None
    """A page every `cycle` instead of think times, open loop: each page starts a
    cycle after the previous one started, on a new connection, whether or not
    the previous one has completed. With `pages` set, every page is drawn at the
    start, so the pages table also lists those that never started."""
    closed_loop: bool = False
    """With `cycle`: one page at a time, the next a cycle after the previous one
    started, or as soon as it completes if that is later."""
    think_from: Literal["end", "start"] = "end"
    """Where a think time runs from: the previous page's end, or its start (its
    request; the next page then starts as soon as the previous one completes if
    the think time has already passed)."""
    embedded_start: Literal["after_primary", "with_primary"] = "after_primary"
    """When the embedded objects are asked for: once the primary has arrived,
    or with it (HTTP/1.0: every object of the page on its own connection at
    once; HTTP/1.1: the whole page as one reply on one connection)."""
    persistent: bool = False
    """HTTP/1.1 only, with one-way TCP (no handshake): one connection per client
    for the whole run. Each page is asked for on it as one reply (the whole page
    at once), pipelined behind any page still arriving, so the window carries
    over from page to page; each page completes when its last byte arrives."""
    start: Start = "0s"
    tcp: TcpOverride = Field(default_factory=TcpOverride)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _persistent_is_http11(self) -> "WebApp":
        if self.persistent and self.http != "1.1":
            raise ValueError(f"persistent needs http = '1.1' (got '{self.http}'): HTTP/1.0 opens a connection per object")
        return self

    @model_validator(mode="after")
    def _no_field_without_effect(self) -> "WebApp":
        # A field given where it has no effect is a misreading of the model: refused, not ignored.
        given = self.model_fields_set
        if self.closed_loop and self.cycle is None:
            raise ValueError("closed_loop applies to pages every cycle: give cycle too, or leave closed_loop out")
        if self.cycle is not None:
            for name in ("think", "think_from"):
                if name in given:
                    raise ValueError(f"{name} has no effect with cycle (pages start a cycle apart): leave one of them out")
        if self.persistent and "embedded_start" in given:
            raise ValueError("embedded_start has no effect on a persistent client (each page is one reply): leave it out")
        return self


class BurstApp(_Model):
    type: Literal["burst"]
    name: AppName = None
    src: str
    dst: str
    flows: HostCount = 1
    """Connections opened at the same instant."""
    extra_src: list[str] = Field(default_factory=list)
    """More servers: the connections come from src and these in turn (connection i
    from [src, *extra_src][i mod their number]), so their packets interleave where
    the servers' paths meet, as a page's objects from several hosts do."""
    size: Optional[PositiveSize] = None
    """Bytes per connection (default 1MB); or give total."""
    total: Optional[Size] = None
    """Bytes of the whole burst, split evenly (the first total mod flows connections carry a byte more)."""
    start: Start = "0s"
    request: Request = "0B"
    tcp: TcpOverride = Field(default_factory=TcpOverride)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _one_size(self) -> "BurstApp":
        if self.size is not None and self.total is not None:
            raise ValueError("give size (bytes per connection) or total (bytes split evenly), not both")
        if self.total is not None and self.total < self.flows:
            raise ValueError(f"total ({self.total} bytes) must give each of the {self.flows} connections at least one byte")
        return self

    def total_bytes(self) -> int:
        if self.total is not None:
            return self.total
        return (self.size if self.size is not None else 1_000_000) * self.flows


App = Annotated[Union[BulkApp, RepeatApp, WebApp, BurstApp], Field(discriminator="type")]


def core_app(a: Any) -> dict[str, Any]:
    """The kind-specific fields of application `a` in the core's form."""
    lo, hi = a.start
    out: dict[str, Any] = {"kind": a.type, "src": a.src, "dst": a.dst, "start_ns": lo, "size_bytes": getattr(a, "size", None),
                           "think": None, "count": None, "request_bytes": a.request}  # fmt: skip
    if hi != lo:
        out["start_max_ns"] = hi
    if isinstance(a, RepeatApp):
        out.update(think=_core_think(a.think), count=a.count, persistent=a.persistent)
    elif isinstance(a, WebApp):
        out.update(size_bytes=None, think=_core_think(a.think))
        out["web"] = {"http11": a.http == "1.1", "embedded": a.embedded, "primary": _core_size(a.primary),
                      "object": _core_size(a.object), "pages": a.pages}  # fmt: skip
        if a.think_from == "start":
            out["web"]["think_from_start"] = True
        if a.embedded_start == "with_primary":
            out["web"]["embedded_with_primary"] = True
        if a.persistent:
            out["web"]["persistent"] = True
        if a.cycle is not None:
            out["web"]["cycle_ns"] = a.cycle
            if a.closed_loop:
                out["web"]["cycle_closed"] = True
    elif isinstance(a, BurstApp):
        out.update(size_bytes=a.total_bytes(), flows=a.flows)
        if a.extra_src:
            out["extra_src"] = list(a.extra_src)
    return out


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

