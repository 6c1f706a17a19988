"""Language-server latency under load.

Starts the real server (`python -m cutegen lsp`) over stdio, opens a broken CuTe kernel and saves it
repeatedly with a new text each time, so that uncached checks run in the background. Meanwhile it
sends hover and codeAction requests and measures their latency (target: p95 <= 50 ms). For every
save it also measures the time from didSave to the published diagnostics, divided by the check
tier's own time for the same text (Builder.run in this process, uncached; target: <= 1.1).

    PYTHONPATH=server python bench/lsp_latency.py --out lsp_latency.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

SERVER_DIR = Path(__file__).resolve().parents[1] / "server"
sys.path.insert(0, str(SERVER_DIR))

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402

KERNEL = """\
#include <cute/tensor.hpp>
using namespace cute;

__global__ void row_sum_kernel(float const* x, float* out, int rows, int cols, int cols_per_thread)
{
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(rows, cols), make_stride(cols, _1{}));
  Tensor gRow = mX(blockIdx.x, _);
  Tensor rAcc = make_tensor<float>(make_shape(cols_per_thread));  // BUG: dynamic owning tensor
  clear(rAcc);
  for (int j = 0; j < size(rAcc); ++j) rAcc(j) = gRow(threadIdx.x * size(rAcc) + j);
  float s = 0.f;
  for (int j = 0; j < size(rAcc); ++j) s += rAcc(j);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}
"""
BUG_LINE, KERNEL_LINE = 7, 3  # 0-based


def text_for(i: int) -> str:
    return KERNEL + f"// save {i}\n"  # a new text per save: every check is a real compile


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class Bench:
    def __init__(self, root: Path) -> None:
        self.root, self.path = root, root / "row_sum.cu"
        self.uri = self.path.as_uri()
        self.client = LanguageClient("cutegen-bench", "1")
        self.published: dict[int, float] = {}  # version → when its diagnostics arrived
        self.latencies: dict[str, list[float]] = {"hover": [], "codeAction": []}
        self.checking = asyncio.Event()  # set while a save's check runs in the server
        self._handlers()

    def _handlers(self) -> None:
        c = self.client

        @c.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams):
            if params.uri == self.uri and params.version is not None:
                self.published.setdefault(params.version, time.perf_counter())

        @c.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params):
            return [{} for _ in params.items]

        @c.feature(types.WINDOW_SHOW_MESSAGE)
        def show(params):
            print(f"server says: {params.message}", file=sys.stderr)

        @c.feature(types.WINDOW_LOG_MESSAGE)
        def log(params):
            pass

    async def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(SERVER_DIR)}
        await self.client.start_io(sys.executable, "-m", "cutegen", "lsp", env=env)
        caps = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(configuration=True))
        await self.client.initialize_async(types.InitializeParams(
            capabilities=caps, root_uri=self.root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name="bench")]))
        self.client.initialized(types.InitializedParams())

    async def save(self, version: int, text: str, timeout: float = 120) -> float:
        """Change + save; returns seconds from didSave to the diagnostics of that version."""
        self.path.write_text(text)
        if version == 1:
            self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
                uri=self.uri, language_id="cuda-cpp", version=1, text=text)))
        else:
            self.client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        started = time.perf_counter()
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri)))
        self.checking.set()
        try:
            deadline = started + timeout
            while version not in self.published:
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"no diagnostics for version {version}")
                await asyncio.sleep(0.002)
        finally:
            self.checking.clear()
        return self.published[version] - started

    async def requests(self, total: int, stop: asyncio.Event) -> None:
        """hover over the diagnostic, hover over the kernel name, codeAction: round robin, only while
        a check runs in the server (that is the load being measured)."""
        doc = types.TextDocumentIdentifier(uri=self.uri)
        bug = types.Range(start=types.Position(line=BUG_LINE, character=4), end=types.Position(line=BUG_LINE, character=8))
        i = 0
        while i < total and not stop.is_set():
            await self.checking.wait()
            started = time.perf_counter()
            if i % 3 == 2:
                await self.client.text_document_code_action_async(types.CodeActionParams(
                    text_document=doc, range=bug, context=types.CodeActionContext(diagnostics=[])))
                self.latencies["codeAction"].append(time.perf_counter() - started)
            else:
                at = bug.start if i % 3 == 0 else types.Position(line=KERNEL_LINE, character=20)
                await self.client.text_document_hover_async(types.HoverParams(text_document=doc, position=at))
                self.latencies["hover"].append(time.perf_counter() - started)
            i += 1
            await asyncio.sleep(0.05)

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def direct_check(builder: Builder, path: Path, text: str) -> float:
    started = time.perf_counter()
    result = builder.run(Tier.CHECK, path, text)
    assert not result.cached and result.errors, "the direct check must be an uncached failing compile"
    return time.perf_counter() - started


async def main(args) -> dict:
    root = Path(tempfile.mkdtemp(prefix="cutegen-bench-"))
    bench = Bench(root)
    settings = Settings()
    builder = Builder(discover(settings), settings, root / "direct-state")  # its own cache: never a hit
    await bench.start()
    await bench.save(1, text_for(0))  # warm-up: toolchain discovery, first compile
    stop = asyncio.Event()
    load = asyncio.create_task(bench.requests(args.requests, stop))
    rows = []
    i = 0
    while i < args.saves or not load.done():  # more saves if the requests need more time
        i += 1
        direct = await asyncio.to_thread(direct_check, builder, bench.path, text_for(i))
        served = await bench.save(i + 1, text_for(i))
        rows.append({"save": i, "direct_s": direct, "lsp_s": served, "ratio": served / direct})
    stop.set()
    await bench.stop()
    return report(rows, bench.latencies)


def report(rows: list[dict], latencies: dict[str, list[float]]) -> dict:
    all_requests = latencies["hover"] + latencies["codeAction"]
    summary = {
        "requests": {name: {"n": len(v), "p50_ms": 1000 * statistics.median(v), "p95_ms": 1000 * percentile(v, 0.95),
                            "max_ms": 1000 * max(v)} for name, v in {**latencies, "all": all_requests}.items() if v},
        "saves": rows,
        "diagnostics_ratio": {"median": statistics.median(r["ratio"] for r in rows),
                              "max": max(r["ratio"] for r in rows)},
        "targets": {"request_p95_ms": 50, "diagnostics_ratio": 1.1},
    }
    print(f"{'requests':<12}{'n':>5}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for name, s in summary["requests"].items():
        print(f"{name:<12}{s['n']:>5}{s['p50_ms']:>9.1f}{s['p95_ms']:>9.1f}{s['max_ms']:>9.1f}")
    print(f"\n{'save':<6}{'direct s':>10}{'lsp s':>9}{'ratio':>8}")
    for r in rows:
        print(f"{r['save']:<6}{r['direct_s']:>10.2f}{r['lsp_s']:>9.2f}{r['ratio']:>8.3f}")
    ratio = summary["diagnostics_ratio"]
    print(f"\ndiagnostics latency / check time: median {ratio['median']:.3f}, max {ratio['max']:.3f} (target <= 1.1)")
    print(f"request p95: {summary['requests']['all']['p95_ms']:.1f} ms (target <= 50)")
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=8, help="background checks to time")
    parser.add_argument("--requests", type=int, default=200, help="hover + codeAction requests to send")
    parser.add_argument("--out", type=Path, help="write the results here as JSON")
    args = parser.parse_args()
    results = asyncio.run(main(args))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
