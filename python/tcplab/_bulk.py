"""Building many Python objects at once."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large scenario or result is
    built: its objects hold no cycles, and with it running, each batch of new
    objects makes it walk every object built so far (quadratic in the size)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
