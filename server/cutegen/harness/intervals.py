"""Confidence intervals for timings and the ratios between them, from interleaved rounds (harness/timing.py).

Pure Python (no torch): records.py reads it to show a stored ratio's interval. The interval is the
distribution-free one for a median: two order statistics of the per-round values whose binomial(n, 1/2)
coverage is at least 95 %, so it needs no assumption about the shape of the noise (GPU timings have long
right tails). A ratio is judged on paired rounds: in round r both functions ran back to back, so the drift of
the card (clocks, temperature, a neighbour's load) falls on both alike and cancels in their ratio.
"""

from __future__ import annotations

import math
import statistics

CONFIDENCE = 0.95


def median_interval(values: list[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """(low, high) around the median of `values`. Under 6 values no pair of order statistics reaches 95 %:
    the whole range is returned (wider, never narrower, than the truth)."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        return (math.nan, math.nan)
    j = _lower_rank(n, confidence)
    return (xs[j], xs[n - 1 - j])


def _lower_rank(n: int, confidence: float) -> int:
    """The largest 0-based j such that [x_(j), x_(n-1-j)] covers the median with probability >= confidence:
    coverage = 1 - 2 P(Binomial(n, 1/2) <= j). 0 (the whole range) when even that falls short."""
    best, tail = 0, 0.0
    for j in range(n // 2):
        tail += math.comb(n, j) / 2.0 ** n  # P(B <= j)
        if 1.0 - 2.0 * tail < confidence:
            break
        best = j
    return best


def paired_ratios(numerator: list[float], denominator: list[float]) -> list[float]:
    """numerator[r] / denominator[r] for every round both have (a baseline's time over the kernel's: its speedup)."""
    return [a / b for a, b in zip(numerator, denominator) if b > 0]


def ratio(numerator: list[float], denominator: list[float]) -> tuple[float, float, float] | None:
    """(median, low, high) of the paired per-round ratios, or None without rounds."""
    rs = paired_ratios(numerator, denominator)
    if not rs:
        return None
    low, high = median_interval(rs)
    return statistics.median(rs), low, high


def within_noise(low: float, high: float) -> bool:
    """A ratio whose interval holds 1.0 says "no measurable difference", not a number."""
    return low <= 1.0 <= high
