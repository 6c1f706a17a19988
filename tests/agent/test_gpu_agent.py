"""On the GPU (H200), through the language server: Optimize proposes a verified, really faster diff
for the slow softsign (scripted replies: a broken grid first, then 128-bit vectorization), and Tune
finds a block size faster than the current one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lsprotocol import types

from tests.support.llm import no_key_anywhere
from tests.support.editor import open_in_editor

pytestmark = [pytest.mark.gpu, pytest.mark.asyncio]

ROOT = Path(__file__).resolve().parents[2]
SLOW = ROOT / "tests" / "kernels" / "slow_correct.cu"
PROBLEM = ROOT / "examples" / "softsign" / "softsign.py"
REPLIES = json.loads((ROOT / "tests" / "agent" / "replies" / "optimize_slow_softsign.json").read_text())


def _kernel(workspace: Path, block: int = 64) -> Path:
    path = workspace / "slow_correct.cu"  # the name the scripted diffs use
    text = SLOW.read_text().replace("problem=../../examples/softsign/softsign.py", f"problem={PROBLEM}")
    path.write_text(text.replace("kBlockThreads = 64;", f"kBlockThreads = {block};"))
    return path


async def _run(client, command: str, **arg):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=[arg]))


@pytest.mark.replies(REPLIES)
@pytest.mark.cutegen_settings({"maxRounds": 3, "testTimeout": 300})
async def test_optimize_proposes_a_verified_faster_diff(client, workspace):
    uri = open_in_editor(client, _kernel(workspace))
    reply = await _run(client, "cutegen.server.optimize", uri=uri, version=1)
    assert "patch" in reply, reply["message"]
    patch = reply["patch"]
    m = re.fullmatch(r"compiles · correct on 5 trials · (\d+\.\d+)× faster than before \((\S+) → (\S+) ms\)",
                     patch["verified"])
    assert m, patch["verified"]
    figures = patch["figures"]
    assert figures["speedup"] > 1.2 and figures["speedup"] > 1 + figures["noise"]
    assert figures["tiers"] == ["check", "build", "test", "time"] and figures["rounds"] == 2
    assert "vectorized" in figures["change"] and "float4" in patch["new_text"]
    # round 1 (a grid that skips 3/4 of the elements) was caught by the harness, not proposed
    summary = json.loads(next((workspace / ".cutegen" / "agent").rglob("*-optimize/summary.json")).read_text())
    assert [r["verdict"] for r in summary["rounds"]] == ["mismatch", "verified"]

    applied = await _run(client, "cutegen.server.applyPatch", id=patch["id"], uri=uri, version=1)
    assert applied["applied"] is True and client.docs[uri][1] == patch["new_text"]
    # the history holds both measured versions; the applied one is the best
    best = await _run(client, "cutegen.server.restoreBest", uri=uri, version=2)
    assert "already the best measured version" in best["message"]
    no_key_anywhere(workspace)


@pytest.mark.cutegen_settings({"testTimeout": 300})
async def test_tune_finds_a_faster_block_size(client, workspace):
    path = _kernel(workspace, block=32)  # 32-thread blocks: half the H200's threads per SM at most
    uri = open_in_editor(client, path)
    reply = await _run(client, "cutegen.server.tune", uri=uri, version=1)
    assert "patch" in reply, reply["message"]
    figures = reply["patch"]["figures"]
    timed = {v["assignment"]["kBlockThreads"]: v["median_ms"] for v in figures["variants"]}
    assert set(timed) == {32, 64, 128, 256, 512, 1024}  # every variant built and passed
    best = min(timed, key=timed.get)
    assert figures["assignment"] == {"kBlockThreads": best} and best != 32
    assert figures["speedup"] > 1 + figures["noise"]
    assert f"constexpr int kBlockThreads = {best};" in reply["patch"]["new_text"]
