"""Human units: each value is written back in a form that parses to it
exactly, in the shortest spelling the units give."""

from __future__ import annotations

import pytest

from tcplab import units


@pytest.mark.parametrize("n, text", [
    (0, "0B"), (1, "1B"), (999, "999B"), (1000, "1kB"), (1024, "1KiB"), (1460, "1.46kB"), (1536, "1.5KiB"),
    (65_536, "64KiB"), (180_000, "180kB"), (1_048_576, "1MiB"), (2_000_000, "2MB"), (10**9, "1GB"), (10**15, "1000000GB"),
    (1_234_567, "1234.567kB"), (1_234_567_891, "1234567.891kB"),
])  # fmt: skip
def test_a_size_is_written_in_its_shorter_exact_spelling(n: int, text: str) -> None:
    assert units.format_size(n) == text
    assert units.parse_size(text) == n


@pytest.mark.parametrize("value, parsed", [
    (25, ("pkts", 25)), (25.0, ("pkts", 25)), ("25", ("pkts", 25)), (" 25 pkts ", ("pkts", 25)), ("1e3pkt", ("pkts", 1000)),
    ("25B", ("bytes", 25)), ("1.5kB", ("bytes", 1500)), ("64KiB", ("bytes", 65_536)),
])  # fmt: skip
def test_a_bare_number_of_a_queue_or_window_counts_packets(value: object, parsed: tuple[str, int]) -> None:
    assert units.parse_packets_or_bytes(value, "a limit") == parsed


@pytest.mark.parametrize("value, message", [
    (1.5, "expected a limit; a count of packets must be whole"),
    ("2.5pkt", "expected a limit; a count of packets must be whole"),
    (-3.0, "expected a limit; it must not be negative"),
    ("3zz", "unknown unit 'zz': expected a limit"),
    (float("nan"), "expected a limit"),
    (10**12, "packet count out of range: at most 1000000000pkt"),
])  # fmt: skip
def test_a_count_that_is_not_whole_or_too_large_is_refused(value: object, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        units.parse_packets_or_bytes(value, "a limit")
    assert str(exc.value) == message
