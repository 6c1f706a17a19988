"""On the GPU: NVML's energy counter moves while a kernel runs, a bench record carries J/call with its interval,
and Optimize with `cutegen.optimizeObjective` = energy offers a candidate for using less energy per call."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from cutegen import records
from cutegen.harness import energy
from cutegen.harness.run import verify_kernel
from lsprotocol import types

from tests.support.editor import open_in_editor

ROOT = Path(__file__).resolve().parents[2]
SOFTSIGN = ROOT / "examples" / "softsign" / "softsign.cu"
SLOW = ROOT / "tests" / "kernels" / "slow_correct.cu"
PROBLEM = ROOT / "examples" / "softsign" / "softsign.py"
REPLIES = json.loads((ROOT / "tests" / "agent" / "replies" / "optimize_slow_softsign.json").read_text())
ENGINE_SETTINGS = {"test_timeout": 300}  # the `engine` fixture's (tests/conftest.py)


@pytest.mark.gpu
def test_the_energy_counter_moves_while_a_kernel_runs():
    import torch

    m = energy.meter()  # raises "energy not measured: ..." with the reason where NVML cannot be read
    period = m.period()
    assert 0 < period < 1.0
    a = torch.randn(8192, 8192, device="cuda")
    torch.cuda.synchronize()
    before, started = m.energy_mj(), time.perf_counter()
    while time.perf_counter() - started < max(0.5, 10 * period):
        a @ a
        torch.cuda.synchronize()
    after, took = m.energy_mj(), time.perf_counter() - started
    watts = (after - before) / 1e3 / took
    assert 30 < watts < 2000, f"{watts:.0f} W over {took:.2f} s"  # a board under a matmul load, not a stuck counter
    assert m.sm_mhz() > 0 and m.power_w() > 0


@pytest.mark.gpu
def test_a_bench_record_carries_joules_per_call_with_an_interval(engine):
    builder, worker, state = engine
    record = verify_kernel(SOFTSIGN, builder, worker, state_dir=state, timing=True, baselines=())
    assert record.verdict == "pass", record.message
    back = records.read(Path(record.path))
    e = back.energy
    assert e is not None, back.energy_unmeasured
    assert e.low_j <= e.j_per_call <= e.high_j and e.windows == energy.WINDOWS
    assert 30 < e.watts < 2000 and e.sm_mhz and e.period_ms > 0
    # the windows' GPU time per call: the timed call's, plus the hand-off, less the L2 flush's share
    assert 0.5 * back.timing.median_ms < e.call_ms < 3 * (back.timing.median_ms + (back.details.get("handoff_ms") or 0))
    assert re.search(r" ms · \d[\d.]* (J|mJ|µJ)/call", back.summary()), back.summary()
    assert back.energy_text().startswith("energy ") and " W · SM " in back.energy_text()


@pytest.mark.gpu
@pytest.mark.asyncio
@pytest.mark.replies(REPLIES)
@pytest.mark.cutegen_settings({"maxRounds": 3, "testTimeout": 300, "optimizeObjective": "energy"})
async def test_the_energy_objective_chooses_the_candidate_that_uses_less_energy(client, workspace):
    path = workspace / "slow_correct.cu"  # the name the scripted diffs use: 64-thread scalar softsign
    path.write_text(SLOW.read_text().replace("problem=../../examples/softsign/softsign.py", f"problem={PROBLEM}"))
    uri = open_in_editor(client, path)
    reply = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="cutegen.server.optimize", arguments=[{"uri": uri, "version": 1}]))
    assert "patch" in reply, reply["message"]
    patch = reply["patch"]
    assert re.fullmatch(r"compiles · correct on 5 trials · \d+\.\d+× less energy per call than before "
                        r"\(\S+ → \S+ (J|mJ|µJ)/call\)", patch["verified"]), patch["verified"]
    figures = patch["figures"]
    assert figures["objective"] == "energy" and figures["gain"] > 1 + figures["noise"]
    assert figures["j_per_call"] > 0 and figures["energy_spread"] >= 0
