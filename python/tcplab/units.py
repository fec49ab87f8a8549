"""Human units in scenario files: rates, durations, sizes, queue limits.

Every parser accepts either a string with a unit ("1.5Mbps", "50ms", "64KiB",
"25pkt") or a bare number in the base unit (bits per second, seconds, bytes,
packets), and returns an integer in the core's base unit (bits per second,
nanoseconds, bytes). Bad input raises ``ValueError`` with a message that says
what is allowed; the scenario loader adds the field name and the value.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

_NUM = r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+)"

RATE_UNITS = {"bps": 1, "kbps": 10**3, "Kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9, "Tbps": 10**12}
DURATION_UNITS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9}
SIZE_UNITS = {
    "B": 1,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}
RATE_HELP = "a rate such as '1.5Mbps', '10Gbps', '64kbps' (units: bps, kbps, Mbps, Gbps, Tbps)"
DURATION_HELP = "a duration such as '50ms', '1.5s', '200us' (units: ns, us, ms, s, min)"
SIZE_HELP = "a size such as '1460B', '64KiB', '1MB' (units: B, kB, MB, GB, KiB, MiB, GiB)"
LIMIT_HELP = "a queue limit in packets such as '25pkt', or in bytes such as '64KiB'"
WINDOW_HELP = "a window in segments such as '1000pkt', or in bytes such as '64KiB'"


def _split(value: object, units: dict[str, int] | tuple[str, ...], help_text: str) -> tuple[Decimal, str | None]:
    if isinstance(value, bool):
        raise ValueError(f"expected {help_text}")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"expected {help_text}")
        return Decimal(str(value)), None
    if not isinstance(value, str):
        raise ValueError(f"expected {help_text}")
    m = re.fullmatch(_NUM + r"\s*([A-Za-z]*)", value.strip())
    if not m:
        raise ValueError(f"expected {help_text}")
    try:
        number = Decimal(m.group(1))
    except InvalidOperation:  # pragma: no cover - the regex admits only numbers
        raise ValueError(f"expected {help_text}") from None
    unit = m.group(2) or None
    if unit is not None and unit not in units:
        raise ValueError(f"unknown unit '{unit}': expected {help_text}")
    return number, unit


#: What the core can represent, with room for sums: rates up to 10 Tb/s,
#: durations up to 10^8 s (simulated time is a u64 count of nanoseconds,
#: 584 years), sizes up to 10^15 bytes, queue limits up to 10^9 packets.
MAX_RATE = 10**13
MAX_DURATION = 10**17
MAX_SIZE = 10**15
MAX_PACKETS = 10**9


def _at_most(v: int, most: int, fmt, what: str) -> int:
    if v > most:
        raise ValueError(f"{what} out of range: at most {fmt(most)}")
    return v


def _to_int(x: Decimal, what: str) -> int:
    if x < 0:
        raise ValueError(f"{what} must not be negative")
    return int(x.to_integral_value(rounding="ROUND_HALF_EVEN"))


def _memo(parse):
    """Remember `parse`'s answer for each string or integer seen: a scenario
    with 100,000 applications repeats a handful of values ("0s", "1MB").
    Errors are remembered too, and raised afresh with the same message."""
    seen: dict[tuple[type, object], tuple[bool, object]] = {}

    def cached(value: object):
        if type(value) not in (str, int):
            return parse(value)
        key = (type(value), value)
        hit = seen.get(key)
        if hit is None:
            try:
                hit = (True, parse(value))
            except ValueError as e:
                hit = (False, str(e))
            if len(seen) < 4096:
                seen[key] = hit
        ok, out = hit
        if not ok:
            raise ValueError(out)
        return out

    cached.__doc__ = parse.__doc__
    cached.__name__ = parse.__name__
    return cached


@_memo
def parse_rate(value: object) -> int:
    """Bits per second."""
    number, unit = _split(value, RATE_UNITS, RATE_HELP)
    bps = _to_int(number * RATE_UNITS[unit or "bps"], "a rate")
    if bps <= 0:
        raise ValueError("a rate must be positive")
    return _at_most(bps, MAX_RATE, format_rate, "rate")


@_memo
def parse_duration(value: object) -> int:
    """Nanoseconds; a bare number is in seconds."""
    number, unit = _split(value, DURATION_UNITS, DURATION_HELP)
    return _at_most(_to_int(number * DURATION_UNITS[unit or "s"], "a duration"), MAX_DURATION, format_duration, "duration")


@_memo
def parse_size(value: object) -> int:
    """Bytes; a bare number is in bytes."""
    number, unit = _split(value, SIZE_UNITS, SIZE_HELP)
    return _at_most(_to_int(number * SIZE_UNITS[unit or "B"], "a size"), MAX_SIZE, format_size, "size")


PACKET_UNITS = ("pkt", "pkts", "packets")


def parse_packets_or_bytes(value: object, help_text: str) -> tuple[str, int]:
    """('pkts', n) or ('bytes', n). A bare number, written with no unit (as
    an integer, a float or a string), counts packets and must be whole, so
    that `25`, `25.0` and `"25"` all mean 25 packets."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"expected {help_text}; it must not be negative")
        return "pkts", _at_most(value, MAX_PACKETS, lambda n: f"{n}pkt", "packet count")
    try:
        number, unit = _split(value, (*SIZE_UNITS, *PACKET_UNITS), help_text)
    except ValueError as e:
        if str(e).startswith("unknown unit"):
            raise
        raise ValueError(f"expected {help_text}") from None
    if unit is None or unit in PACKET_UNITS:
        if number < 0:
            raise ValueError(f"expected {help_text}; it must not be negative")
        if number != number.to_integral_value():
            raise ValueError(f"expected {help_text}; a count of packets must be whole")
        return "pkts", _at_most(int(number), MAX_PACKETS, lambda n: f"{n}pkt", "packet count")
    try:
        return "bytes", parse_size(value)
    except ValueError as e:
        if "out of range" in str(e):
            raise
        raise ValueError(f"expected {help_text}") from None


def _exact(n: int, table: dict[str, int], order: tuple[str, ...], base: str) -> str:
    """The largest unit in `order` that shows `n` exactly with at most 3 decimals."""
    for unit in order:
        q = Decimal(n) / Decimal(table[unit])
        if q >= 1 and q == q.quantize(Decimal("0.001")):
            return f"{q.normalize():f}{unit}"
    return f"{n}{base}"


def format_rate(bps: int) -> str:
    return _exact(bps, RATE_UNITS, ("Tbps", "Gbps", "Mbps", "kbps"), "bps")


def format_duration(ns: int) -> str:
    if ns == 0:
        return "0s"
    return _exact(ns, DURATION_UNITS, ("s", "ms", "us"), "ns")


def format_size(n: int) -> str:
    if n == 0:
        return "0B"
    # The shorter of the binary and the decimal spelling that exists (binary
    # on a tie): 2,000,000 bytes are '2MB', not '1953.125KiB'; 65,536 are
    # '64KiB'; 1,460 are '1.46kB'.
    plain = f"{n}B"
    both = [_exact(n, SIZE_UNITS, ("GiB", "MiB", "KiB"), "B"), _exact(n, SIZE_UNITS, ("GB", "MB", "kB"), "B")]
    return min((t for t in both if t != plain), key=len, default=plain)


def format_percent(fraction: float) -> str:
    """A fraction as a percentage, as exact as given: 0.95 is '95%', 0.999
    '99.9%' and 0.57 '57%' (`int(conf * 100)` wrote 99% and 56%)."""
    return f"{fraction * 100:.6g}%"
