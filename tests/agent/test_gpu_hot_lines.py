"""On the GPU (H200): the Optimize prompt carries the hot lines. For three kernels (softsign, the Level-1 fp32
GEMM, softmax) one Optimize round runs against the scripted endpoint (real HTTP, the real openai client); the
prompt the model got must quote the line profile measured in the same run: each hot line's number, share and
code, its stall reasons and the knowledge base's advice, and they must be the lines the H200 captures showed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.llm import llm_settings, no_key_anywhere

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
CASES = {  # kernel → lines of the H200 captures (tests/profiler/fixtures) that must be among the prompt's hot lines
    "examples/softsign/softsign.cu": {("softsign.cu", 33), ("softsign.cu", 59)},
    "examples/kernelbench/level1/1_Square_matrix_multiplication_.cu": {("gemm_3xtf32.cuh", 380)},
    "examples/softmax/softmax.cu": {("softmax.cu", 197)},
}


@pytest.mark.parametrize("kernel", list(CASES), ids=lambda k: Path(k).stem)
def test_the_optimize_prompt_holds_the_hot_lines(kernel, make_session, scripted, kept_path):
    server = scripted([{"match": "TASK: optimize", "reply": "CHANGE: none\nNo edit this time."}])
    state = kept_path / ".cutegen"  # kept: the examples' builds outlive the run
    session = make_session(llm_settings(server.url, max_rounds=1, test_timeout=300), state_dir=state)
    path = ROOT / kernel
    session.agent(path).optimize(path, path.read_text())
    session.close()  # the worker stops
    files = sorted((state / "agent").rglob("*.json"))  # the transcript's steps, beside history.json and summary.json
    steps = [s for s in (json.loads(p.read_text()) for p in files) if "step" in s]
    context = next((s for s in steps if s["step"] == "context"), None)
    baseline = next((s for s in steps if s["step"] == "baseline"), {}).get("verification", {})
    assert context is not None, f"Optimize stopped before profiling; the baseline: {baseline.get('label')} {baseline}"
    lines = (context.get("profile") or {}).get("lines")
    assert lines, f"no line profile in the run: {context.get('profile_problem')}"
    hot = lines["lines"][:5]
    assert lines["user_samples"] / lines["total_samples"] >= 0.9
    prompt = next(s for s in steps if s["step"] == "optimize")["messages"][-1]["content"]
    assert "Hot lines (share of the kernel's warp samples" in prompt
    for h in hot:
        name = Path(h["file"]).name
        where = f"line {h['line']}" if name == Path(kernel).name else f"{name}:{h['line']}"
        assert f"- {where} ({h['share']:.1%}): `{h['text']}`" in prompt, (where, prompt[-3000:])
    assert "advice for " in prompt
    assert CASES[kernel] <= {(Path(h["file"]).name, h["line"]) for h in hot}, hot
    print(Path(kernel).name, [(Path(h["file"]).name, h["line"], round(h["share"], 3)) for h in hot])
    no_key_anywhere(kept_path)
