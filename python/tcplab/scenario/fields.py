"""Field types of scenario files: human units parsed into the core's base
units (and written back in a form that parses to the same value), and the
base model every table derives from (unknown fields are errors)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError
from pydantic_core import core_schema as cs

from .. import units

# ---------------------------------------------------------------- field types


def _inf_or(parser):
    def parse(v: object):
        if isinstance(v, str) and v.strip().lower() in ("inf", "infinite", "unlimited"):
            return None
        if v == float("inf"):  # TOML's bare inf, a float: the same unlimited value
            return None
        return parser(v)

    return parse


def _none_or(parser):
    def parse(v: object):
        if v is None or (isinstance(v, str) and v.strip().lower() == "none"):
            return None
        return parser(v)

    return parse


class _Prebuilt:
    """A field type's validation and serialization, built into a core schema
    once and given to each field of the type: built per field from
    validators and serializers in the annotation, the models' 180 fields
    took about 20 ms more of every process's start on a slow machine."""

    __slots__ = ("schema",)

    def __init__(self, parse, inner: cs.CoreSchema, write) -> None:
        ser = cs.plain_serializer_function_ser_schema(write, return_schema=cs.any_schema())
        self.schema = cs.no_info_before_validator_function(parse, inner, serialization=ser)

    def __get_pydantic_core_schema__(self, source: object, handler: object) -> cs.CoreSchema:
        return {**self.schema}  # a copy per field: what building one field's schema adds reaches no other


def _ser(fmt, none: str | None = None):
    return lambda v: none if v is None else fmt(v)


_INT, _OPT_INT = cs.int_schema(), cs.nullable_schema(cs.int_schema())
_AMOUNT = cs.tuple_schema([cs.str_schema(), cs.int_schema()])


def _fmt_amount(v: tuple[str, int]) -> str:
    kind, n = v
    return f"{n}pkt" if kind == "pkts" else units.format_size(n)


# Each type parses human units into base units, and writes them back in a
# form that parses to the same value, so a dumped scenario reloads exactly.
Rate = Annotated[int, _Prebuilt(units.parse_rate, _INT, _ser(units.format_rate))]
Duration = Annotated[int, _Prebuilt(units.parse_duration, _INT, _ser(units.format_duration))]
Size = Annotated[int, _Prebuilt(units.parse_size, _INT, _ser(units.format_size))]
SizeOrInf = Annotated[Optional[int], _Prebuilt(_inf_or(units.parse_size), _OPT_INT, _ser(units.format_size, "inf"))]
DurationOrNone = Annotated[Optional[int], _Prebuilt(_none_or(units.parse_duration), _OPT_INT, _ser(units.format_duration, "none"))]


def _at_least(least: int, message: str):
    def check(v: Optional[int]) -> Optional[int]:
        if v is not None and v < least:
            raise ValueError(message)
        return v

    return AfterValidator(check)


def _at_most(most: int, message: str):
    def check(v: Optional[int]) -> Optional[int]:
        if v is not None and v > most:
            raise ValueError(message)
        return v

    return AfterValidator(check)


def not_blank(default: str):
    """A text field whose default stands in when it is left out: given empty
    or blank, it is refused instead of taken (`name = ""` made app{i}
    without a word; a sweep's `store = ""` a database in memory)."""

    def check(v: Optional[str]) -> Optional[str]:
        if v is not None and not v.strip():
            raise ValueError(f"must not be empty; leave it out for the default, {default}")
        return v

    return AfterValidator(check)


def _above_zero(message: str):
    return _at_least(1, message)


#: A duration of which zero makes no sense: a cycle of pages.
PositiveDuration = Annotated[Duration, _above_zero("must be above 0s")]
#: A retransmission timer's first or largest value: 0 made instant timeouts,
#: and a nanosecond's RTO a timeout per nanosecond of a connection that
#: cannot deliver (datacenter studies go down to some tens of microseconds).
TimerDuration = Annotated[Duration, _at_least(1_000, "must be at least 1us")]
#: A random wait before each data segment leaves (tcp.send_jitter): at most 10 s, as the core allows.
JitterDuration = Annotated[Duration, _at_most(10_000_000_000, "must be at most 10s")]
#: A size of which zero makes no sense: a transfer's (one of nothing would never start, so never end), a mean packet's.
PositiveSize = Annotated[Size, _above_zero("must be at least 1 byte")]
PositiveSizeOrInf = Annotated[SizeOrInf, _above_zero("must be at least 1 byte, or 'inf'")]
QueueLimit = Annotated[tuple[str, int], _Prebuilt(lambda v: units.parse_packets_or_bytes(v, units.LIMIT_HELP), _AMOUNT, _ser(_fmt_amount))]
Window = Annotated[tuple[str, int], _Prebuilt(lambda v: units.parse_packets_or_bytes(v, units.WINDOW_HELP), _AMOUNT, _ser(_fmt_amount))]
Ssthresh = Annotated[Optional[tuple[str, int]], _Prebuilt(lambda v: _parse_ssthresh(v), cs.nullable_schema(_AMOUNT), lambda v: _fmt_ssthresh(v))]
IW_HELP = "an initial window in segments such as 4, in bytes such as '4380B', or 'rfc3390' or 'rfc6928'"


def _parse_iw(v: object) -> tuple[str, int]:
    if isinstance(v, str) and v.strip().lower() in ("rfc3390", "rfc6928"):
        return v.strip().lower(), 0
    kind, n = units.parse_packets_or_bytes(v, IW_HELP)
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


InitialWindow = Annotated[tuple[str, int], _Prebuilt(_parse_iw, _AMOUNT, _fmt_iw)]


def _parse_retries(v: object) -> Optional[int]:
    if isinstance(v, str) and v.strip().lower() == "none":
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError("expected a count of retransmissions such as 15, or 'none' (never give up)")
    if not 0 <= v <= 10**6:
        raise ValueError("out of range: a count from 0 to 1000000, or 'none'")
    return v


def _parse_clock_phase(v: object) -> Optional[int]:
    if isinstance(v, str) and v.strip().lower() == "random":
        return None
    try:
        return units.parse_duration(v)
    except ValueError as e:
        raise ValueError(f"{e}; or 'random' (a phase drawn for each connection)") from None


#: Where a TCP clock's ticks fall: a duration past each multiple of the
#: granularity, or None ('random'): drawn for each connection.
ClockPhase = Annotated[Optional[int], _Prebuilt(_parse_clock_phase, _OPT_INT, _ser(units.format_duration, "random"))]
#: A retransmission count, or None ('none'): no limit.
RetryCount = Annotated[Optional[int], _Prebuilt(_parse_retries, _OPT_INT, lambda v: "none" if v is None else v)]


def _no_bool(kind: str, words: str):
    """Refuses TOML's true and false where a number goes: pydantic would
    read them as 1 and 0 (`seed = true` ran seed 1)."""

    def check(v: object) -> object:
        if isinstance(v, bool):
            raise PydanticCustomError(kind, words)
        return v

    return BeforeValidator(check)


#: A whole number or a number, not true or false (Field(...) bounds go beside it).
Int = Annotated[int, _no_bool("int_type", "Input should be a valid integer")]
Float = Annotated[float, _no_bool("float_type", "Input should be a valid number")]
#: Counts fit the core's 64-bit integers; counts of hosts, flows or objects have their own, smaller bounds.
PositiveInt = Annotated[Int, Field(ge=1, le=2**63 - 1)]
HostCount = Annotated[Int, Field(ge=1, le=10**7)]
CcName = Literal["tahoe", "reno", "newreno", "sack", "highspeed", "cubic"]


class _Refusing(type(BaseModel)):  # type: ignore[misc]
    """The models' metaclass: a model built in code (`Scenario(...)`) is
    refused as a file is, with a ScenarioError naming the field, not
    pydantic's ValidationError. Not `__init__`: pydantic calls a model's own
    `__init__` for every nested model it validates, which is slower and
    would lose the field's path."""

    def __call__(cls, *args: Any, **data: Any) -> Any:
        origins = None
        if getattr(cls, "__expands_copies__", False) and not args:  # a Scenario's applications may set copies
            from .loading import expand_copies

            data, origins = expand_copies(data)
        try:
            return super().__call__(*args, **data)
        except ValidationError as e:
            raise _refused(e, data, cls, origins) from None


class _Model(BaseModel, metaclass=_Refusing):
    # validate_assignment: `sc.tcp.iw = 10` is read as the file's `iw = 10`
    # is (it stored the bare 10, which the core form could not use), and a
    # bad value is refused at once.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, allow_inf_nan=False, validate_assignment=True)

    def __setattr__(self, name: str, value: Any) -> None:
        try:
            super().__setattr__(name, value)
        except ValidationError as e:
            raise _refused(e, {name: value}, type(self)) from None


def _refused(err: ValidationError, doc: dict[str, Any], model: type[BaseModel], origins: Any = None) -> Exception:
    from ..errors import ScenarioError
    from .loading import _as_written, _problems_from  # loading imports the models

    problems = _problems_from(err, doc, model)
    return ScenarioError(_as_written(problems, origins) if origins else problems)


