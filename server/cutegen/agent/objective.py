"""What "better" means when a candidate is compared with the version it came from (`cutegen.optimizeObjective`).

- time (default): the median ms/call; its noise is the timing's spread, (p90 - p10) / median over the calls.
- energy: the median J/call (harness/energy.py); its noise is the width of its 95 % interval over the median.
- edp (energy × delay): ms/call × J/call. The two figures come from different runs of the kernel (interleaved
  timing blocks, then energy windows), so there are no paired blocks to multiply; the noise is combined
  conservatively instead: both figures at the far ends of their noise at once, (1 + time's) × (1 + energy's) - 1.

A candidate is better only when the ratio before / after exceeds 1 + the larger noise of the two versions (and
never less than NOISE_FLOOR). A figure that was not measured (no NVML for energy) is no comparison: the candidate
is not called better, and the label says why; there is no silent fall back to time.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutegen.records import joules_text

OBJECTIVES = ("time", "energy", "edp")  # settings.CHOICES["optimize_objective"] is this tuple
NOISE_FLOOR = 0.02  # a gain must beat the measured noise, and never less than 2 %


@dataclass(frozen=True)
class Score:
    value: float  # lower is better
    noise: float  # relative
    text: str  # the figure as a person reads it: '0.412 ms', '58.3 mJ/call', '0.412 ms × 58.3 mJ'


@dataclass(frozen=True)
class Words:
    better: str  # '{gain:.2f}× {better}': 'faster', 'less energy per call'
    worse: str  # 'slower'
    what: str  # 'faster', 'lower in energy': "not {what} beyond noise"
    ratio: str  # after a ratio in a column ('1.30× energy'): '' for time, whose ratio needs no word


WORDS = {"time": Words("faster", "slower", "faster", ""),
         "energy": Words("less energy per call", "more energy per call", "lower in energy", "energy"),
         "edp": Words("lower energy × delay", "higher energy × delay", "lower in energy × delay", "EDP")}


def score(objective: str, figures: dict) -> Score | str:
    """A version's figures (Verifier's: median_ms, spread, j_per_call, energy_spread) under `objective`, or why
    they cannot be scored (the energy's one-line reason)."""
    ms, spread = figures.get("median_ms"), figures.get("spread") or 0.0
    if objective == "time":
        return Score(ms, spread, f"{ms:.3f} ms") if ms else "not timed"
    joules, noise = figures.get("j_per_call"), figures.get("energy_spread") or 0.0
    if not joules:
        return figures.get("energy_unmeasured") or "energy not measured"
    if objective == "energy":
        return Score(joules, noise, f"{joules_text(joules)}/call")
    if not ms:
        return "not timed"
    return Score(ms * joules, (1 + spread) * (1 + noise) - 1, f"{ms:.3f} ms × {joules_text(joules)}")


def known(objective: object) -> str:
    """The objective a tree or a history recorded, or time: older records name none, and an unknown name is not
    guessed at."""
    return objective if isinstance(objective, str) and objective in OBJECTIVES else "time"


def gain(before: Score, after: Score) -> tuple[float, float]:
    """(before / after, the noise it must beat): > 1 + noise is better, < 1 - noise worse."""
    ratio = before.value / after.value if after.value else 0.0
    return ratio, max(NOISE_FLOOR, before.noise, after.noise)


def change(before: Score, after: Score) -> str:
    """'6.000 → 3.000 ms', '100 → 95 mJ/call'; both in full where their units differ or are a product."""
    b_number, _, b_unit = before.text.partition(" ")
    _, _, a_unit = after.text.partition(" ")
    if b_unit == a_unit and " " not in b_unit:
        return f"{b_number} → {after.text}"
    return f"{before.text} → {after.text}"


def goal_text(goal: str, figures: dict) -> str:
    """What the optimize prompt adds to the current version's figures when the objective is not time."""
    now = score(goal, figures)
    shown = now.text if isinstance(now, Score) else now
    return f"; a change is kept only if it is {WORDS[goal].what} beyond noise (now {shown}), not merely faster"
