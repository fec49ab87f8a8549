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
            # The first collection after the pause would walk every object
            # built in it (about 0.07 s after a 100,000-flow scenario's
            # set-up): move them straight to the oldest generation instead,
            # as freeze (all tracked objects to the permanent generation)
            # then unfreeze (back into the oldest) do, without a walk. Not
            # when the caller keeps objects frozen: unfreeze would free them.
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
