"""The background loop's latency: the time from a save to each figure (check, verdict, timing, profile), three
saves in a row of one kernel (tests/support/loop_scenario.py), the real server over stdio, a real LSP client.

    PYTHONPATH=server:. python bench/background_loop.py [--repeat N] [--out loop.json]       # on a GPU machine
    PYTHONPATH=server:. python bench/background_loop.py --standin                            # here: the path only

Each repeat starts a fresh server in a fresh workspace, so every build is cold and the worker starts cold (the
first timing includes torch.compile's compile of the baseline): what a user's first saves after opening the
editor cost. `--standin` runs the same scenario with the GPU stand-ins of tests/support/gpu_standin.py: it
checks the script on a machine without a GPU; its verdict, timing and profile figures are not measurements.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from pytest_lsp import ClientServerConfig  # noqa: E402

from tests.support import loop_scenario  # noqa: E402
from tests.support.gpu_standin import BIN  # noqa: E402

STANDIN_SAYS = ["// standin: ncu_s=60 median_ms=3.17", "// standin: test_s=3", "// standin: median_ms=4.7"]


async def once(standin: bool) -> loop_scenario.Result:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    module = "tests.support.gpu_standin" if standin else "cutegen"
    config = ClientServerConfig(server_command=[sys.executable, "-m", module, "lsp"], server_env=env,
                                client_factory=loop_scenario.recording_client)
    client = await config.start()
    with tempfile.TemporaryDirectory(prefix="cutegen-loop-") as tmp:
        workspace = Path(tmp)
        await loop_scenario.start(client, workspace, {"ncu": str(BIN / "ncu")} if standin else {})
        texts = [t + say + "\n" for t, say in zip(loop_scenario.versions(), STANDIN_SAYS)] if standin else None
        try:
            return await loop_scenario.three_saves(client, workspace, texts=texts)
        finally:
            await asyncio.wait_for(client.shutdown_session(), 30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--standin", action="store_true", help="GPU stand-ins (a machine without a GPU)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    results = []
    for i in range(args.repeat):
        result = asyncio.run(once(args.standin))
        print(f"\nrun {i + 1}{' (stand-ins: not measurements)' if args.standin else ''}\n{loop_scenario.table(result)}")
        results.append(result)
    if args.repeat > 1:
        for figure in ("check", "verdict", "timing", "profile"):
            v3 = [r.rows[2][figure] for r in results if r.rows[2].get(figure) is not None]
            if v3:
                print(f"v3 save → {figure}: median {statistics.median(v3):.1f} s (min {min(v3):.1f}, max {max(v3):.1f})")
    if args.out:
        args.out.write_text(json.dumps([asdict(r) | {"texts": None} for r in results], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
