"""Building many objects with the cyclic collector paused (`tcplab._bulk.no_gc`)."""

from __future__ import annotations

import gc

from tcplab._bulk import no_gc


class Node:
    pass


def test_objects_built_in_the_pause_go_to_the_oldest_generation_unwalked() -> None:
    assert gc.isenabled()
    with no_gc():
        assert not gc.isenabled()
        built = [Node() for _ in range(1000)]
    assert gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(o) in oldest for o in built)
    assert gc.get_count()[0] < 10  # the young generation starts afresh: nothing for a collection to walk


def test_objects_the_caller_froze_stay_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with no_gc():
            built = [Node() for _ in range(100)]
        assert gc.get_freeze_count() == frozen > 0
        assert not any(o is built for o in gc.get_objects(generation=2))  # the list was left young
    finally:
        gc.unfreeze()


def test_a_collector_paused_before_stays_paused() -> None:
    gc.disable()
    try:
        with no_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
