"""The background loop on the H200, through the real server over stdio (pytest-lsp: code-server cannot be
carried to the GPU machine): three saves in a row of softsign's file (tests/support/loop_scenario.py), the real
worker, the real ncu. The second save kills the first's running profile; the third's figures are the CodeLens's.
Prints the table of the time from each save to each figure; with $OUT set, also $OUT/background_loop.json."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_helpers import SERVER_ENV

from cutegen import background, records
from cutegen.state import StateDir
from tests.support import loop_scenario

pytestmark = [pytest.mark.gpu, pytest.mark.asyncio]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "cutegen", "lsp"],
                                              server_env=SERVER_ENV, client_factory=loop_scenario.recording_client))
async def on_gpu(lsp_client: LanguageClient, workspace: Path):
    await loop_scenario.start(lsp_client, workspace)
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 30)
    except Exception:
        pass


async def test_three_saves_on_the_gpu(on_gpu: LanguageClient, workspace: Path):
    result = await loop_scenario.three_saves(on_gpu, workspace)
    print("\n" + loop_scenario.table(result))
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "background_loop.json").write_text(json.dumps(asdict(result) | {"texts": None}, indent=1))
    kernel = str(workspace / "softsign.cu")
    state = StateDir(workspace / ".cutegen")
    digests = {records.text_digest(t): f"v{i + 1}" for i, t in enumerate(result.texts)}
    made = lambda kind: [digests.get(r.source_digest) for r in reversed(records.history(state, kernel, kind))]
    assert result.ncu_killed_s is not None and result.ncu_killed_s < 10  # v2's save killed v1's ncu, whole session
    assert result.ends == ["stopped", "stopped", "idle"]
    assert made("test") == ["v1", "v2", "v3"] and made("bench") == ["v1", "v3"] and made("profile") == ["v3"]
    test, bench, profile = (records.latest(state, kernel, k) for k in ("test", "bench", "profile"))
    assert (test.verdict, bench.verdict, profile.verdict) == ("pass", "pass", "profiled"), profile.message
    assert f"bench: {bench.summary()}" in result.lenses and f"profile: {profile.summary()}" in result.lenses
    assert not any("(stale)" in t or "running" in t for t in result.lenses)
    v1 = next(r for r in records.history(state, kernel, "bench") if digests.get(r.source_digest) == "v1")
    regressed = background.slower(v1, bench)  # 32-thread blocks: expected slower than the vectorized kernel
    message = f"⚠ slower than the last passing version: {v1.timing.median_ms:.3g} → {bench.timing.median_ms:.3g} ms"
    print(f"v1 {v1.summary()}\nv3 {bench.summary()}\nslower beyond the interval: {regressed}")
    assert (message in result.lenses) == regressed, result.lenses
