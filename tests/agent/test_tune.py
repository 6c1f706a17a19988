"""Tune: markers, variants, and (here, without a GPU) building every variant."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cutegen.agent.tune import _choose, TuneResult, Variant, find_tunables, tune, variants
from cutegen.agent.candidates import Verifier

ROOT = Path(__file__).resolve().parents[2]
SLOW = ROOT / "tests" / "kernels" / "slow_correct.cu"


def test_markers_on_constexpr_and_template_parameters():
    text = ("constexpr int kBlockThreads = 64;  // cutegen: tunable\n"
            "template <int kVec = 4, int kUnroll = 2>  // cutegen: tunable kUnroll=1,2,8\n"
            "constexpr int kTile = 96;  // cutegen: tunable 32, 64\n"
            "constexpr int kOther = 7;\n")
    found = find_tunables(text)
    assert [(t.name, t.line, t.value, t.values) for t in found] == [
        ("kBlockThreads", 0, 64, [16, 32, 64, 128, 256]),  # default: powers of two around the value
        ("kUnroll", 1, 2, [1, 2, 8]),
        ("kTile", 2, 96, [32, 64, 96]),  # the current value is always measured
    ]
    vs = variants(text, found)
    assert len(vs) == 32  # of 5 * 3 * 3: capped (tune says so)
    v = next(v for v in vs if v.assignment == {"kBlockThreads": 64, "kUnroll": 8, "kTile": 32})
    assert v.text.splitlines()[:3] == ["constexpr int kBlockThreads = 64;  // cutegen: tunable",
                                       "template <int kVec = 4, int kUnroll = 8>  // cutegen: tunable kUnroll=1,2,8",
                                       "constexpr int kTile = 32;  // cutegen: tunable 32, 64"]


def test_the_slow_example_declares_its_block_size():
    (t,) = find_tunables(SLOW.read_text())
    assert t.name == "kBlockThreads" and t.value == 64 and {64, 256, 1024} <= set(t.values)


def test_choice_needs_a_win_beyond_noise(tmp_path):
    def v(n, ms, spread=0.01):
        return Variant({"k": n}, f"k={n}", built=True, verdict="pass", median_ms=ms, spread=spread)

    result = _choose(tmp_path / "k.cu", "k=64", TuneResult(False, "", [], [v(64, 5.0), v(128, 4.0), v(256, 4.1)]), {"k": 64})
    assert result.proposal.new_text == "k=128" and result.proposal.figures["speedup"] == 1.25
    assert result.proposal.label.startswith("k=128 · correct · 1.25× faster than k=64")
    close = _choose(tmp_path / "k.cu", "k=64", TuneResult(False, "", [], [v(64, 5.0, 0.05), v(128, 4.9)]), {"k": 64})
    assert close.ok and close.proposal is None and "fastest within noise" in close.message


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_tune_builds_every_variant(kept_path, builder):
    kernel = kept_path / "slow.cu"
    text = re.sub(r"// cutegen: tunable .*", "// cutegen: tunable 64,128", SLOW.read_text())
    kernel.write_text(text.replace("// cutegen: problem=../../examples/softsign/softsign.py",
                                   f"// cutegen: problem={ROOT / 'examples/softsign/softsign.py'}"))
    verifier = Verifier(builder, None, state_dir=kept_path / ".cutegen", gpu=False)
    result = tune(kernel, kernel.read_text(), verifier)
    assert [v.built for v in result.variants] == [True, True], [v.build_error for v in result.variants]
    assert result.proposal is None and result.message == ("built 2 of 2 variants; not run: no GPU on this machine, "
                                                          "so no fastest one can be named")
