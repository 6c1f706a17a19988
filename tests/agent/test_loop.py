"""The agent loops with the scripted endpoint (real HTTP, the real openai client) and the real check and build
tiers (nvcc): rounds, feedback, labels, transcripts, usage. The GPU path is tests/agent's GPU-marked tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutegen import records
from cutegen.agent.history import History
from cutegen.agent.candidates import _compare
from cutegen.model import Diagnostic, Severity
from cutegen.settings import Settings
from tests.support.llm import llm_settings, no_key_anywhere

KERNEL = """#include <cutegen/abi.h>

__global__ void k(float* y) {
  int i = threadIdx.x;
  y[i] = BROKEN;
}
"""


UNDEFINED = 'identifier "BROKEN" is undefined'


def _diff(old: str, new: str, name: str = "k.cu") -> str:
    return f"```diff\n--- a/{name}\n+++ b/{name}\n@@ -4,3 +4,3 @@\n   int i = threadIdx.x;\n-  {old}\n+  {new}\n }}\n```\n"


def _kernel(kept_path, text=KERNEL) -> Path:
    path = kept_path / "k.cu"
    path.write_text(text)
    return path


def _error(path: Path) -> Diagnostic:
    return Diagnostic(file=str(path), line=5, col=3, end_col=9, severity=Severity.ERROR,
                      message=UNDEFINED, code="edg-error", root=UNDEFINED)


def test_a_failed_round_feeds_the_next_and_only_the_verified_patch_comes_back(agent_with, kept_path, scripted):
    server = scripted([
        {"match": "TASK: diagnose", "reply": "**What**: BROKEN on line 5."},
        {"match": "TASK: patch", "reply": _diff("y[i] = BROKEN;", "y[i] = BROKEN + 1;")},
        {"match": "TASK: diagnose", "reply": "**What**: still BROKEN."},
        {"match": "TASK: patch", "reply": "Here:\n" + _diff("y[i] = BROKEN;", "y[i] = 1.0f;")},
    ])
    path = _kernel(kept_path)
    out = agent_with(llm_settings(server.url)).fix(path, KERNEL, diagnostic=_error(path))
    assert out.ok and out.proposal is not None
    assert [r["verdict"] for r in out.rounds] == ["check-failed", "verified"]
    assert out.proposal.new_text == KERNEL.replace("BROKEN", "1.0f")
    assert out.proposal.label == "compiled and built · not tested: no problem paired with k.cu"
    assert out.proposal.short == "compiled, not tested"
    assert out.usage.calls == 4 and out.usage.prompt_tokens > 0
    # the second round's prompts carry the first attempt and why it failed
    second_patch = server.requests[3]["messages"][-1]["content"]
    assert "y[i] = BROKEN + 1;" in second_patch and UNDEFINED in second_patch
    # transcripts: every step on disk, key-free
    folder = Path(out.transcript).parent
    steps = sorted(p.name for p in folder.glob("*.json"))
    assert "summary.json" in steps and len(steps) == 7  # 4 LLM steps, 2 verifications, the summary
    assert json.loads((folder / "summary.json").read_text())["usage"]["calls"] == 4
    no_key_anywhere(kept_path)


def test_rejected_diffs_are_fed_back_and_never_verified(agent_with, kept_path, scripted):
    server = scripted([
        {"match": "TASK: diagnose", "reply": "d1"},
        {"match": "TASK: patch", "reply": _diff("y[i] = BROKEN;", "y[i] = 0.f;", name="other.cu")},
        {"match": "TASK: diagnose", "reply": "d2"},
        {"match": "TASK: patch", "reply": "```diff\n--- a/k.cu\n+++ b/k.cu\n@@ -4,9 +4,9 @@\n   int i = threadIdx.x;\n-  y[i] = BR",
         "finish_reason": "length"},
        {"match": "TASK: diagnose", "reply": "d3"},
        {"match": "TASK: patch", "reply": _diff("y[i] = BROKEN;", "y[i] = 2.0f;")},
    ])
    path = _kernel(kept_path)
    out = agent_with(llm_settings(server.url)).fix(path, KERNEL, diagnostic=_error(path))
    assert out.ok and [r["verdict"] for r in out.rounds] == ["patch-rejected", "patch-rejected", "verified"]
    assert "only k.cu may change" in out.rounds[0]["message"] and "token limit" in out.rounds[1]["message"]
    assert "only k.cu may change" in server.requests[3]["messages"][-1]["content"]


def test_giving_up_is_reported_with_every_round(agent_with, kept_path, scripted):
    server = scripted([{"match": "TASK: diagnose", "reply": "d"}, {"match": "TASK: patch",
                                                                  "reply": _diff("y[i] = BROKEN;", "y[i] = BROKEN2;")}] * 2)
    path = _kernel(kept_path)
    out = agent_with(llm_settings(server.url, max_rounds=2)).fix(path, KERNEL, diagnostic=_error(path))
    assert not out.ok and out.proposal is None
    assert out.message == "No verified fix after 2 round(s) (round 1: check-failed; round 2: check-failed)."


def test_an_endpoint_that_stays_down_is_reported_plainly(agent_with, kept_path, scripted, monkeypatch):
    monkeypatch.setattr("cutegen.agent.llm.BACKOFF_BASE_S", 0.01)
    server = scripted([{"status": 500}] * 3)
    path = _kernel(kept_path)
    out = agent_with(llm_settings(server.url, llm_retries=2)).fix(path, KERNEL, diagnostic=_error(path))
    assert not out.ok and "HTTP 500" in out.message and "after 3 attempts" in out.message
    assert out.usage.attempts == 3


def test_without_an_llm_everything_says_so(agent_with, kept_path):
    path = _kernel(kept_path)
    agent = agent_with(Settings())
    assert "no LLM endpoint is configured" in agent.fix(path, KERNEL, diagnostic=_error(path)).message
    assert "Optimize needs an LLM" in agent.optimize(path, KERNEL).message


def test_diagnose_without_llm_uses_the_knowledge_base(agent_with, kept_path):
    pytest.importorskip("cutegen.knowledge")
    path = _kernel(kept_path)
    d = Diagnostic(file=str(path), line=5, col=3, end_col=9, severity=Severity.ERROR,
                   message="make_tensor: Dynamic owning tensors not supported", code="cute-static-assert",
                   root="Dynamic owning tensors not supported", data={"api": "cute::make_tensor"})
    out = agent_with(Settings()).diagnose(path, KERNEL, diagnostic=d)
    assert out.ok and out.diagnosis_source == "knowledge" and "static" in out.diagnosis.lower()
    record = records.read(next((kept_path / ".cutegen" / "runs").rglob("latest-diagnose.json")))
    assert record.details["source"] == "knowledge" and record.details["diagnosis"] == out.diagnosis


def test_optimize_without_gpu_is_labelled_as_such(agent_with, kept_path, scripted):
    good = KERNEL.replace("BROKEN", "0.5f")
    (kept_path / "k.py").write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                                   "        return x * 0.5\ndef get_inputs():\n    return [torch.rand(8)]\n"
                                   "def get_init_inputs():\n    return []\n")
    server = scripted([{"match": "TASK: optimize", "reply": "CHANGE: fast-math\n" + _diff("y[i] = 0.5f;", "y[i] = __fmul_rn(1.0f, 0.5f);")}])
    path = _kernel(kept_path, good)
    out = agent_with(llm_settings(server.url)).optimize(path, good)
    assert out.ok and out.proposal.label == "compiled and built · not run: no GPU on this machine · speed not measured"
    assert out.proposal.figures["change"] == "fast-math" and out.proposal.figures["workload"] == "elementwise"
    prompt = server.requests[0]["messages"][-1]["content"]
    assert "ONE change" in prompt and "no GPU" in prompt


def test_optimize_needs_a_passing_kernel(agent_with, kept_path, scripted):
    server = scripted([])
    path = _kernel(kept_path)
    out = agent_with(llm_settings(server.url)).optimize(path, KERNEL)
    assert not out.ok and out.message.startswith("Optimize needs a passing kernel") and not server.requests


def test_faster_only_beyond_noise():
    fast = _compare({"median_ms": 6.0, "spread": 0.01}, {"median_ms": 3.0, "spread": 0.02}, "correct on 5 trials",
                    [], None)
    assert fast.ok and fast.label == "compiles · correct on 5 trials · 2.00× faster than before (6.000 → 3.000 ms)"
    noise = _compare({"median_ms": 6.0, "spread": 0.05}, {"median_ms": 5.8, "spread": 0.01}, "c", [], None)
    assert not noise.ok and noise.verdict == "not-faster" and "not faster beyond noise" in noise.label
    slower = _compare({"median_ms": 5.0, "spread": 0.01}, {"median_ms": 6.0, "spread": 0.01}, "c", [], None)
    assert not slower.ok and "slower" in slower.feedback


def test_generate_then_repair(agent_with, kept_path, scripted):
    problem = kept_path / "relu.py"
    problem.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                       "        return torch.relu(x)\ndef get_inputs():\n    return [torch.rand(8)]\n"
                       "def get_init_inputs():\n    return []\n")
    first = KERNEL.replace("__global__", 'extern "C" int cutegen_forward();\n__global__')
    server = scripted([
        {"match": "TASK: generate", "reply": f"Here it is:\n```cuda\n{first}```\n"},
        {"match": "TASK: diagnose", "reply": "BROKEN"},
        {"match": "TASK: patch", "reply": _diff("y[i] = BROKEN;", "y[i] = 0.f;", "relu.cu").replace("-4,3 +4,3", "-6,3 +6,3")},
    ])
    out = agent_with(llm_settings(server.url)).generate(problem, kept_path / "relu.cu")
    assert out.ok, out.message
    assert out.proposal.new_text.startswith("// cutegen: problem=relu.py\n") and "y[i] = 0.f;" in out.proposal.new_text
    assert out.proposal.base_text == "" and [r["verdict"] for r in out.rounds] == ["check-failed", "verified"]


def test_restore_best(agent_with, kept_path):
    path = _kernel(kept_path, KERNEL.replace("BROKEN", "1.f"))
    fast, slow = KERNEL.replace("BROKEN", "2.f"), KERNEL.replace("BROKEN", "3.f")
    History(kept_path / ".cutegen", path).record({"action": "optimize"}, [(slow, {"median_ms": 5.0}), (fast, {"median_ms": 2.0})])
    out = agent_with(Settings()).restore_best(path, slow)
    assert out.ok and out.proposal.new_text == fast and "2.000 ms" in out.proposal.label
    assert not agent_with(Settings()).restore_best(path, fast).ok  # already the best
