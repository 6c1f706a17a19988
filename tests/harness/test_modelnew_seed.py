"""The ModelNew judge builds the candidate from the reference's random state (KernelBench's convention), so a
correct candidate with random conv/linear weights passes; a candidate whose weights really differ still fails."""

from __future__ import annotations

from pathlib import Path

from cutegen.harness.worker import _handle

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def judge(modelnew: Path, seed: int = 0) -> dict:
    """One request through the worker's own handler, in this process (CPU: the checks are device-agnostic)."""
    return _handle({"problem": str(KERNELS / "modelnew_depthwise_ref.py"), "modelnew": str(modelnew),
                    "trials": 3, "seed": seed})


def test_random_weight_candidate_is_judged_correct():
    for seed in (0, 7):
        reply = judge(KERNELS / "modelnew_depthwise.py", seed)
        assert reply["verdict"] == "pass", reply["message"]


def test_candidate_with_other_weights_is_still_a_mismatch(tmp_path):
    shifted = tmp_path / "modelnew_shifted.py"
    text = (KERNELS / "modelnew_depthwise.py").read_text()
    # One extra random draw before the layers: the weights now differ from the reference's.
    shifted.write_text(text.replace("        super().__init__()\n", "        super().__init__()\n        torch.rand(1)\n", 1))
    reply = judge(shifted)
    assert reply["verdict"] == "mismatch", reply
