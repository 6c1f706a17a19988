"""`cutegen diagnose/fix/optimize/generate` in a terminal against endpoints that behave as real providers do
(the scripted endpoint over real HTTP; the CLI in its own process): every mode ends in a verified patch
(compiled and built; no GPU here, and the label says so) or in a message that names its cause."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent import provider_cases as cases
from tests.support.llm import KEY, KEY_ENV, no_key_anywhere

ROOT = Path(__file__).resolve().parents[2]
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")


def _cutegen(ws: Path, *args: str, url: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, KEY_ENV: KEY, "PYTHONPATH": str(ROOT / "server"),
           "CUTEGEN_LLM_BASE_URL": "", "CUTEGEN_LLM_MODEL": ""}
    llm = ["--llm-base-url", url, "--llm-model", "scripted", "--llm-api-key-env", KEY_ENV,
           "--llm-retries", "1", "--llm-timeout", "30"] if url else []
    return subprocess.run([sys.executable, "-m", "cutegen", *args, *llm, "--state-dir", str(ws / ".cutegen")],
                          cwd=ws, env=env, capture_output=True, text=True, timeout=600)


def _outcome(p: subprocess.CompletedProcess) -> dict:
    assert p.stdout.strip().startswith("{"), p.stderr
    return json.loads(p.stdout)


def _steps(outcome: dict) -> list[dict]:
    folder = Path(outcome["transcript"]).parent
    return [json.loads(f.read_text()) for f in sorted(folder.glob("*-round*.json"))]


@needs_nvcc
def test_fix_with_a_reasoning_model(scripted, provider_workspace):
    ws = provider_workspace
    server = scripted(cases.fix_replies(), reasoning_model=True)
    p = _cutegen(ws, "fix", "kernel.cu", url=server.url)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("--- a/kernel.cu\n+++ b/kernel.cu\n") and "+  if (i < n) y[i] = 0.5f * x[i];" in p.stdout
    assert cases.FIX_LABEL in p.stderr
    sent = [r["params"] for r in server.requests]
    assert "max_tokens" in sent[0] and sent[-1] == {"max_completion_tokens": 4096}  # learned once, then right
    assert len(sent) == 4  # diagnose: 3 requests (two lessons), patch: 1
    assert "max_completion_tokens" in (ws / ".cutegen" / "llm-endpoints.json").read_text()
    assert (ws / "kernel.cu").read_text() == cases.BROKEN  # printed, not applied
    no_key_anywhere(ws)


@needs_nvcc
def test_diagnose_shows_the_answer_not_the_think_block(scripted, provider_workspace):
    server = scripted([{"match": "TASK: diagnose", "think": "Line 6 uses HALF; nothing declares it.",
                        "reply": cases.DIAGNOSIS}])
    p = _cutegen(provider_workspace, "diagnose", "kernel.cu", "--json", url=server.url)
    outcome = _outcome(p)
    assert outcome["diagnosis"] == cases.DIAGNOSIS and "<think>" not in p.stdout + p.stderr
    (step,) = _steps(outcome)
    assert step["reasoning"] == "Line 6 uses HALF; nothing declares it." and step["reply"] == cases.DIAGNOSIS


@needs_nvcc
def test_fix_keeps_reasoning_content_in_the_transcript(scripted, provider_workspace):
    server = scripted(cases.fix_replies(reasoning_content="Undeclared identifier: replace it by 0.5f."))
    outcome = _outcome(_cutegen(provider_workspace, "fix", "kernel.cu", "--json", url=server.url))
    assert outcome["ok"] and outcome["proposal"]["label"] == cases.FIX_LABEL
    assert outcome["diagnosis"] == cases.DIAGNOSIS
    steps = [s for s in _steps(outcome) if s["step"] in ("diagnose", "patch")]
    assert [s["reasoning"] for s in steps] == ["Undeclared identifier: replace it by 0.5f."] * 2


@needs_nvcc
def test_a_refusal_is_named_and_not_retried(scripted, provider_workspace):
    server = scripted([{"match": "TASK: diagnose", "refusal": cases.REFUSAL}] * 4)
    p = _cutegen(provider_workspace, "fix", "kernel.cu", url=server.url)
    assert p.returncode == 1 and cases.REFUSAL in p.stderr and "the model refused the request" in p.stderr
    assert "empty reply" not in p.stderr and len(server.requests) == 1


@needs_nvcc
def test_optimize_through_an_sse_only_endpoint(scripted, provider_workspace):
    server = scripted([{"match": "TASK: optimize", "reply": "(the plain request's stream is not read)"},
                       *cases.optimize_replies()], sse_only=True)
    p = _cutegen(provider_workspace, "optimize", "good.cu", url=server.url)
    assert p.returncode == 0, p.stderr
    assert "+  halve_kernel<<<(unsigned)((n + 511) / 512), 512, 0, s>>>(" in p.stdout
    assert f"block size: {cases.FIX_LABEL} · speed not measured" in p.stderr.replace("\n", " ")
    assert [r["stream"] for r in server.requests] == [False, True]


@needs_nvcc
def test_generate_says_the_reply_was_cut_off(scripted, provider_workspace):
    server = scripted([{"match": "TASK: generate", "reply": "```cuda\n#include <cutegen/abi.h>\n__global__ void k(",
                        "finish_reason": "length"}])
    target = provider_workspace / "generated.cu"
    p = _cutegen(provider_workspace, "generate", "halve.py", "-o", str(target), url=server.url)
    assert p.returncode == 1 and "cut off at the token limit (--max-tokens = 4096)" in p.stderr
    assert "holds no kernel file" not in p.stderr and not target.exists() and len(server.requests) == 1


@needs_nvcc
def test_a_connection_reset_mid_reply_is_named(scripted, provider_workspace):
    server = scripted([{"match": "TASK: diagnose", "reply": "x" * 5000, "reset_after": 1200}] * 2)
    p = _cutegen(provider_workspace, "diagnose", "kernel.cu", url=server.url)
    assert "closed the connection before its reply was complete" in p.stderr + p.stdout
    assert "cannot reach" not in p.stderr + p.stdout and "after 2 attempts" in p.stderr + p.stdout
    server = scripted([{"match": "TASK: diagnose", "reply": "x" * 5000, "reset_after": 1200},
                       *cases.fix_replies()])
    outcome = _outcome(_cutegen(provider_workspace, "fix", "kernel.cu", "--json", url=server.url))
    assert outcome["ok"] and outcome["usage"]["attempts"] == 3  # the reset diagnose was retried once


@needs_nvcc
def test_a_2_mb_diagnosis_is_shown_as_an_excerpt(scripted, provider_workspace):
    huge = "\n".join(f"line {i}: " + "the accumulator is sized at run time; " * 5 for i in range(10000))
    assert len(huge) > 2_000_000
    server = scripted([{"match": "TASK: diagnose", "reply": huge}])
    p = _cutegen(provider_workspace, "diagnose", "kernel.cu", url=server.url)
    assert p.returncode == 0 and len(p.stdout) < 10_000 and p.stdout.startswith("line 0: ")
    assert "more characters of this reply are in the transcript: " in p.stdout
    folder = p.stdout.rsplit("transcript: ", 1)[1].split("]")[0]
    (step,) = [json.loads(f.read_text()) for f in Path(folder).glob("*-diagnose.json")]
    assert step["reply"] == huge


def test_diagnose_with_an_endpoint_but_no_model_says_so_as_fix_does(provider_workspace):
    runs = [_cutegen(provider_workspace, command, "kernel.cu", "--llm-base-url", "http://127.0.0.1:9/v1")
            for command in ("diagnose", "fix")]
    for p in runs:
        assert p.returncode == 2 and "no LLM model is configured (set --llm-model)" in p.stderr


def test_max_tokens_zero_is_refused_with_the_way_to_send_no_limit(provider_workspace):
    p = _cutegen(provider_workspace, "fix", "kernel.cu", "--max-tokens", "0", url="http://127.0.0.1:9/v1")
    assert p.returncode == 2 and "--llm-token-parameter none" in p.stderr


def test_negative_llm_retries_are_refused_naming_the_flag(scripted, provider_workspace):
    server = scripted([{"reply": "never asked"}])
    p = _cutegen(provider_workspace, "fix", "kernel.cu", "--llm-base-url", server.url, "--llm-model", "scripted",
                 "--llm-api-key-env", KEY_ENV, "--llm-retries", "-1")
    assert p.returncode == 2 and "argument --llm-retries: must be at least 0" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and not server.requests  # refused before anything started
