"""Every ratio comes with its interval, from interleaved rounds: the order-statistic interval of the median, the
paired per-round ratio, "within noise" when the interval holds 1.0, and the one-line summary showing it."""

from __future__ import annotations

import random

import pytest

from cutegen.harness import intervals
from cutegen.harness.timing import _calls, _summary
from cutegen.records import RunRecord, Timing


def test_the_median_interval_uses_the_binomial_ranks():
    xs = list(range(1, 21))  # n = 20: the 95 % interval is the 6th and 15th values
    assert intervals.median_interval(xs) == (6, 15)
    assert intervals.median_interval(list(range(10))) == (1, 8)
    assert intervals.median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)  # too few for 95 %: the whole range


def test_paired_ratios_cancel_the_drift_of_the_card():
    """Both functions slow down together round by round (clocks, a neighbour): the paired ratio stays tight where
    the ratio of the two medians would carry the drift of both."""
    rng = random.Random(1)
    drift = [1.0 + 0.5 * (r % 7) / 7 for r in range(60)]
    kernel = [0.040 * d * rng.uniform(0.99, 1.01) for d in drift]
    eager = [0.080 * d * rng.uniform(0.99, 1.01) for d in drift]
    median, low, high = intervals.ratio(eager, kernel)
    assert median == pytest.approx(2.0, rel=0.01) and high - low < 0.04


def test_the_interval_covers_the_true_ratio_about_95_percent_of_the_time():
    rng = random.Random(7)
    covered = 0
    for _ in range(400):
        kernel = [0.04 * rng.lognormvariate(0, 0.05) for _ in range(30)]
        base = [0.05 * rng.lognormvariate(0, 0.05) for _ in range(30)]
        _, low, high = intervals.ratio(base, kernel)
        covered += low <= 1.25 <= high
    assert 0.92 <= covered / 400 <= 0.995


def timing(blocks: list[float]) -> Timing:
    return Timing(sorted(blocks)[len(blocks) // 2], min(blocks), max(blocks), 0.1, len(blocks), block_ms=blocks)


def record(kernel: list[float], eager: list[float], compiled: list[float] | None = None) -> RunRecord:
    r = RunRecord(kind="bench", file="k.cu", verdict="pass", timing=timing(kernel))
    r.baselines["eager"] = timing(eager)
    if compiled:
        r.baselines["torch_compile"] = timing(compiled)
    return r


def test_the_summary_shows_each_ratio_with_its_interval_or_within_noise():
    kernel = [1.00, 1.01, 0.99, 1.02, 1.00, 0.98, 1.01, 1.00, 0.99, 1.00]
    eager = [3.35 * k for k in kernel]
    noisy = [k * f for k, f in zip(kernel, [0.97, 1.03, 1.01, 0.98, 1.02, 0.99, 1.04, 0.96, 1.0, 1.01])]
    r = record(kernel, eager, noisy)
    text = r.summary()
    assert "3.35× eager [3.35–3.35]" in text and "≈ torch.compile (within noise, 0.97–1.03×)" in text
    assert r.speedup("eager") == pytest.approx(3.35) and r.speedup_interval("torch_compile") == (0.97, 1.03)


def test_a_record_without_rounds_keeps_its_plain_ratio():
    r = RunRecord(kind="bench", file="k.cu", verdict="pass", timing=Timing(1.0, 0.9, 1.1, 0.2, 10))
    r.baselines["eager"] = Timing(2.0, 1.9, 2.1, 0.1, 10)
    assert "2.00× eager" in r.summary() and r.speedup_interval("eager") is None


def test_round_trip_keeps_the_rounds(tmp_path):
    from cutegen import records
    from cutegen.state import StateDir

    r = record([1.0] * 10, [2.0, 2.1, 1.9, 2.0, 2.0, 2.05, 1.95, 2.0, 2.0, 2.0])
    path = records.write(StateDir(tmp_path / ".cutegen"), "bench", "k.cu", r)
    back = records.read(path)
    assert back.summary() == r.summary() and back.baselines["eager"].block_ms == r.baselines["eager"].block_ms


def test_blocks_grow_for_short_kernels_and_stay_single_for_long_ones():
    assert _calls(0.040, 0.075) == 18  # ~2 ms of [flush, call] per round
    assert _calls(3.0, 0.075) == 1
    assert _calls(0.001, 0.001) == 32  # capped
    t = _summary([0.04, 0.05, 0.04, 0.06] * 5, [0.045] * 5, 4)
    assert (t.trials, t.calls_per_block, t.median_ms, t.low_ms, t.high_ms) == (20, 4, 0.045, 0.045, 0.045)
