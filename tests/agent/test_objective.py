"""The optimization objective (`cutegen.optimizeObjective`): a candidate is better by time, energy or energy × delay,
and only beyond the noise of that figure; the setting, its manifest entry and the CLI flag agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutegen.agent import objective
from cutegen.agent.candidates import Verifier, _compare
from cutegen.settings import CHOICES, Settings

MANIFEST = Path(__file__).resolve().parents[2] / "vscode-client" / "package.json"


def figures(ms: float, spread: float, joules: float | None = None, energy_spread: float = 0.0) -> dict:
    out = {"median_ms": ms, "spread": spread}
    if joules is not None:
        out.update(j_per_call=joules, energy_spread=energy_spread)
    return out


def test_time_stays_the_default_and_reads_as_before():
    fast = _compare(figures(6.0, 0.01, 0.6), figures(3.0, 0.02, 0.6), "correct on 5 trials", [], None)
    assert fast.ok and fast.label == "compiles · correct on 5 trials · 2.00× faster than before (6.000 → 3.000 ms)"
    assert fast.figures["objective"] == "time" and fast.figures["speedup"] == 2.0


def test_five_percent_less_energy_inside_the_energy_noise_is_not_better():
    v = _compare(figures(1.0, 0.01, 0.100, 0.08), figures(1.0, 0.01, 0.095, 0.01), "c", [], None, "energy")
    assert not v.ok and v.verdict == "not-faster"
    assert v.label == "compiles · c · not lower in energy beyond noise: 100 → 95 mJ/call (1.05×, noise ±8%)"


def test_less_energy_beyond_its_noise_is_better_even_when_no_faster():
    v = _compare(figures(1.0, 0.01, 0.100, 0.01), figures(1.0, 0.01, 0.080, 0.01), "c", [], None, "energy")
    assert v.ok and v.short == "1.25× less energy per call, correct"
    assert v.label == "compiles · c · 1.25× less energy per call than before (100 → 80 mJ/call)"
    assert v.figures["speedup"] == 1.0  # the time ratio is still kept for the transcript


def test_a_faster_kernel_that_burns_more_energy_is_worse_by_energy():
    v = _compare(figures(2.0, 0.01, 0.100, 0.01), figures(1.0, 0.01, 0.150, 0.01), "c", [], None, "energy")
    assert not v.ok and "more energy per call" in v.label


def test_edp_multiplies_the_figures_and_combines_their_noise_at_worst():
    before, after = figures(2.0, 0.03, 0.100, 0.04), figures(1.92, 0.01, 0.099, 0.01)
    s = objective.score("edp", before)
    assert s.value == pytest.approx(0.2) and s.noise == pytest.approx(1.03 * 1.04 - 1)
    v = _compare(before, after, "c", [], None, "edp")  # 1.05× lower, inside the combined ±7.1 %
    assert not v.ok and "not lower in energy × delay beyond noise" in v.label and "noise ±7%" in v.label
    better = _compare(before, figures(1.5, 0.01, 0.090, 0.01), "c", [], None, "edp")  # 1.48×
    assert better.ok and better.short == "1.48× lower energy × delay, correct"


def test_without_an_energy_figure_nothing_is_called_better_and_the_reason_is_given():
    unmeasured = {**figures(1.0, 0.01), "energy_unmeasured": "energy not measured: the nvidia-ml-py package "
                  "(pynvml) is not installed"}
    v = _compare(figures(2.0, 0.01, 0.1, 0.01), unmeasured, "c", [], None, "energy")
    assert not v.ok and v.short == "not compared (energy)"
    assert v.label == ("compiles · c · not compared by energy: energy not measured: the nvidia-ml-py package "
                       "(pynvml) is not installed")
    base = _compare(figures(2.0, 0.01), figures(1.0, 0.01, 0.1, 0.01), "c", [], None, "edp")
    assert not v.ok and "the current version's: energy not measured" in base.label


def test_the_setting_its_manifest_entry_the_objectives_and_the_cli_agree():
    prop = json.loads(MANIFEST.read_text())["contributes"]["configuration"]["properties"]["cutegen.optimizeObjective"]
    assert prop["default"] == Settings().optimize_objective == "time"
    assert prop["enum"] == list(CHOICES["optimize_objective"]) == list(objective.OBJECTIVES) == list(objective.WORDS)
    settings, problems = Settings.from_dict({"optimizeObjective": "energy"})
    assert settings.optimize_objective == "energy" and not problems
    settings, problems = Settings.from_dict({"optimizeObjective": "power"})
    assert settings.optimize_objective == "time"
    assert problems == ["cutegen.optimizeObjective must be one of time, energy, edp, not 'power'"]
    cli = Settings()
    cli.interface = "cli"
    assert cli.name_of("optimize_objective") == "--objective"


def test_the_agent_hands_its_objective_to_the_verifier(tmp_path, make_session):
    session = make_session(Settings(optimize_objective="edp"), state_dir=tmp_path / ".cutegen")
    agent = session.agent(tmp_path / "k.cu", gpu=False)
    assert agent.verifier.objective == "edp"
    assert Verifier.__init__.__kwdefaults__["objective"] == "time"


def test_the_optimize_prompt_says_what_better_means():
    assert objective.goal_text("energy", figures(1.0, 0.01, 0.0583, 0.01)) == (
        "; a change is kept only if it is lower in energy beyond noise (now 58.3 mJ/call), not merely faster")
    assert "(now energy not measured: no CUDA device)" in objective.goal_text(
        "edp", {**figures(1.0, 0.01), "energy_unmeasured": "energy not measured: no CUDA device"})
