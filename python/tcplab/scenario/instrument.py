"""``[[losses]]`` (loss injection) and ``[trace]`` (instrumentation)."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import BeforeValidator, Field, model_validator

from .fields import DurationOrNone, Float, PositiveInt, _above_zero, _Model

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
    rate: Annotated[Float, Field(ge=0.0, le=1.0)] = 0.0
    """Drop each matching packet independently with this probability."""


class Trace(_Model):
    interval: Annotated[DurationOrNone, _above_zero("must be above 0s, or 'none' (no periodic samples)")] = "none"
    """Sample traced connections this often ('10ms' as web100); 'none': no periodic samples."""
    on_change: bool = False
    """Also record a row whenever cwnd, ssthresh or the state changes."""
    apps: list[str] = []
    """Applications to trace; empty: all (when interval or on_change is set)."""
    links: list[LinkName] = []
    """Links whose packets are logged (enqueue, dequeue, drop)."""
    pcap: list[LinkName] = []
    """Link directions written to libpcap capture files, one file per direction
    plus one of its drops (``tcplab run --pcap DIR``; see the README's Captures)."""
    web100: bool = False
    """Each periodic sample also writes a row of web100 / RFC 4898 variables
    (Result.web100); the interval defaults to 10 ms, as web100's."""

    @model_validator(mode="after")
    def _apps_need_samples(self) -> "Trace":
        if self.apps and self.interval is None and not self.on_change and not self.web100:
            raise ValueError("apps chooses whose samples are taken: give interval, on_change or web100 too")
        return self

    def interval_ns(self) -> Optional[int]:
        """The sampling interval: as given, or 10 ms for web100."""
        if self.interval is None and self.web100:
            return 10_000_000
        return self.interval
