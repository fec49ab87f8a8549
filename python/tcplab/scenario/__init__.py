"""Scenario files: loading, overrides, validation, and normalization for the core.

A scenario is a TOML document (or the equivalent dictionary) with four
tables: ``[sim]``, ``[topology]``, ``[tcp]`` and ``[[apps]]``. Every field has
a default, documented in the README's scenario reference; unknown fields are errors.
:func:`load` returns a validated :class:`Scenario`; :meth:`Scenario.to_core`
produces the normalized form the Rust core runs (integers in nanoseconds,
bytes and bits per second; an explicit list of nodes and links).

The package is split by section: :mod:`.fields` (units and field types),
:mod:`.topology`, :mod:`.tcp`, :mod:`.apps`, :mod:`.instrument` (losses and
traces), :mod:`.model` (the whole scenario) and :mod:`.loading` (files,
overrides, error messages).
"""

from .apps import BulkApp, BurstApp, RepeatApp, WebApp
from .loading import apply_overrides, field_path, load, parse_override_value, read_toml, validate, value_at
from .model import Scenario, Sim
from .tcp import Tcp
from .topology import WIRELESS_PROFILES, Dumbbell, Explicit, Wireless

__all__ = [
    "Scenario", "Sim", "Tcp", "Dumbbell", "Explicit", "Wireless", "WIRELESS_PROFILES", "BulkApp", "RepeatApp", "WebApp", "BurstApp",
    "load", "validate", "apply_overrides", "field_path", "read_toml", "parse_override_value", "value_at",
]  # fmt: skip
