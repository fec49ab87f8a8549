from __future__ import annotations

import copy
import signal
from typing import Any

import pytest

MSS = 1460
HDR = 40


def dumbbell(
    *,
    left: int = 1,
    right: int = 1,
    bottleneck_rate: str = "10Mbps",
    bottleneck_delay: str = "50ms",
    bottleneck_queue: Any = "1000pkt",
    access_rate: str = "1Gbps",
    access_delay: Any = "1ms",
    access_queue: Any = "1000pkt",
    duration: str = "none",
    seed: int = 1,
    tcp: dict[str, Any] | None = None,
    apps: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A dumbbell scenario dictionary, for tests."""
    return {
        "sim": {"duration": duration, "seed": seed},
        "topology": {
            "type": "dumbbell",
            "left": left,
            "right": right,
            "bottleneck": {"rate": bottleneck_rate, "delay": bottleneck_delay, "queue": bottleneck_queue},
            "left_access": {"rate": access_rate, "delay": access_delay, "queue": access_queue},
            "right_access": {"rate": access_rate, "delay": "1ms" if isinstance(access_delay, list) else access_delay, "queue": access_queue},
        },
        "tcp": copy.deepcopy(tcp) if tcp else {},
        "apps": copy.deepcopy(apps) if apps else [{"type": "bulk", "src": "s0", "dst": "k0", "size": "1MB"}],
    }


@pytest.fixture(autouse=True)
def ctrl_c_as_in_a_terminal():
    """Python's own Ctrl-C handler in every test, as in a terminal. A
    process started in the background by a non-interactive shell (a CI
    script's job, `cmd &`) inherits SIGINT ignored, and Python then installs
    no handler: the tests that send SIGINT to themselves would see nothing
    happen (a study or sweep they mean to stop then runs to its end)."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

