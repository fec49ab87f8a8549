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


@pytest.mark.parametrize("fraction, text", [(0.95, "95%"), (0.999, "99.9%"), (0.57, "57%"), (0.5, "50%"), (0.9, "90%"), (0.995, "99.5%")])
def test_a_confidence_level_is_shown_as_given(fraction: float, text: str) -> None:
    """`int(conf * 100)` titled a 99.9% interval "99%" and a 57% one "56%"."""
    assert units.format_percent(fraction) == text


def test_analyze_titles_its_table_with_the_confidence_level_given(tmp_path) -> None:
    from click.testing import CliRunner

    from tcplab.cli import main

    (tmp_path / "base.toml").write_text('[sim]\nduration = "5s"\n[topology]\ntype = "dumbbell"\n'
                                        '[[apps]]\ntype = "bulk"\nsrc = "s0"\ndst = "k0"\nsize = "100kB"\n')  # fmt: skip
    (tmp_path / "sw.toml").write_text('[sweep]\nscenario = "base.toml"\nreplications = 2\n[factors]\n"tcp.iw" = [1, 4]\n')
    store = str(tmp_path / "s.duckdb")
    r = CliRunner().invoke(main, ["sweep", str(tmp_path / "sw.toml"), "--store", store, "-q", "--jobs", "1"])
    assert r.exit_code == 0, r.output
    for conf, title in [("0.999", "fct_s by tcp.iw (99.9% CIs)"), ("0.57", "fct_s by tcp.iw (57% CIs)")]:
        r = CliRunner().invoke(main, ["analyze", store, "--metric", "fct_s", "--by", "iw", "--conf", conf])
        assert r.exit_code == 0 and r.output.splitlines()[0].strip() == title, r.output
    r = CliRunner().invoke(main, ["analyze", store, "--metric", "fct_s", "--anova", "--factors", "iw", "--conf", "0.999"])
    assert r.exit_code == 0 and "Effects (99.9% confidence intervals)" in r.output, r.output
