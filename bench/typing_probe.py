"""Errors while typing, as a new user meets them: edit→diagnostics through the real server, against nvcc.

A plain LSP client (pygls's) starts `python -m cutegen lsp` over stdio in a fresh temporary folder per kernel
(its `.cutegen/` empty: the header set never seen), opens a clean kernel the repository's corpora do not hold
(CUTLASS's own CuTe tutorials from the `nvidia-cutlass` wheel, copied at run time, and a small kernel of our own
written here), then, without saving:

- first edit: `--settle` seconds after the open, the text becomes a broken variant (didChange);
- steady state: `--edits` more didChanges, each appending a comment line to the broken text.

For each version it times didChange → the first publishDiagnostics of that version holding an error, and right
after (interleaved, the server idle) an nvcc check of the same text (the Builder's check tier in this process,
its own cache: never a hit), and prints p50/p90 of both and of their ratio, the line each tier puts the error on,
the typing tier's false errors on the clean text, and the machine's load. `--trace` prints the server's log
lines of each kernel's first edit, timed from the didChange.

    PYTHONPATH=server .venv/bin/python bench/typing_probe.py --out /tmp/typing_probe.json
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
from dataclasses import dataclass
from pathlib import Path

SERVER_DIR = Path(__file__).resolve().parents[1] / "server"
sys.path.insert(0, str(SERVER_DIR))

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402

TYPING = "cutegen (typing)"
# A kernel the size of the repository's examples, written for this probe (in no corpus): a row max.
ROW_MAX = """\
#include <cute/tensor.hpp>
using namespace cute;

// One block per row: each thread reduces a strided slice, then a shared-memory tree.
template <int Threads>
__global__ void row_max_kernel(float const* x, float* out, int rows, int cols)
{
  __shared__ float partial[Threads];
  Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(rows, cols), make_stride(cols, _1{}));
  Tensor gRow = mX(blockIdx.x, _);
  Tensor rAcc = make_tensor<float>(make_shape(_4{}));
  fill(rAcc, -INFINITY);
  for (int j = threadIdx.x; j < cols; j += Threads) {
    rAcc(j % 4) = fmaxf(rAcc(j % 4), gRow(j));
  }
  float m = rAcc(0);
  CUTE_UNROLL
  for (int i = 1; i < size(rAcc); ++i) m = fmaxf(m, rAcc(i));
  partial[threadIdx.x] = m;
  __syncthreads();
  for (int s = Threads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

extern "C" int row_max(float const* x, float* out, int rows, int cols, cudaStream_t stream)
{
  row_max_kernel<256><<<rows, 256, 0, stream>>>(x, out, rows, cols);
  return static_cast<int>(cudaGetLastError());
}
"""


@dataclass
class Kernel:
    name: str
    text: str
    old: str  # the broken variant replaces this text ...
    new: str  # ... with this


def tutorial_dir() -> Path:
    import cutlass_library

    return Path(cutlass_library.__file__).parent / "source" / "examples" / "cute" / "tutorial"


def util_include() -> Path:
    import cutlass_library

    return Path(cutlass_library.__file__).parent / "source" / "tools" / "util" / "include"


def kernels() -> list[Kernel]:
    tut = tutorial_dir()
    out = [Kernel("row_max.cu", ROW_MAX, "make_shape(_4{})", "make_shape(cols)")]  # a dynamic owning tensor
    # An example-sized kernel (99 lines, the ABI header), in a folder the server has never seen: a value layout
    # too small for the 128-bit atom ("TiledCopy uses too few vals").
    softsign = Path(__file__).resolve().parent.parent / "examples" / "softsign" / "softsign.cu"
    out.append(Kernel("softsign.cu", softsign.read_text(), "Layout<Shape<Int<kVecElems>>>{});   // value layout",
                      "Layout<Shape<_2>>{});   // value layout"))
    if tut.is_dir():
        out += [
            # An atom twice as wide as the value layout: "TiledCopy uses too few vals".
            Kernel("tiled_copy.cu", (tut / "tiled_copy.cu").read_text(),
                   "UniversalCopy<uint_byte_t<sizeof(Element) * size(val_layout)>>;",
                   "UniversalCopy<uint_byte_t<2 * sizeof(Element) * size(val_layout)>>;"),
            # The k-tile index dropped: a rank-3 tensor indexed with 2 coordinates.
            Kernel("sgemm_1.cu", (tut / "sgemm_1.cu").read_text(),
                   "copy(tAgA(_,_,k_tile), tAsA);", "copy(tAgA(_,k_tile), tAsA);"),
            # The case: a value layout too small for the 128-bit atom, in a call that spans three lines.
            Kernel("sgemm_2.cu", (tut / "sgemm_2.cu").read_text(),
                   "Layout<Shape< _4,_1>>{}); // Val layout  4x1 m-major",
                   "Layout<Shape< _2,_1>>{}); // Val layout  4x1 m-major"),
        ]
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class Client:
    def __init__(self, root: Path, settings: dict) -> None:
        self.root, self.settings = root, settings
        self.client = LanguageClient("cutegen-typing-probe", "1")
        self.published: dict[tuple[str, int], list[tuple[float, list]]] = {}
        self.log: list[tuple[float, str]] = []
        c = self.client

        @c.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams):
            if params.version is not None:
                self.published.setdefault((params.uri, params.version), []).append(
                    (time.perf_counter(), params.diagnostics))

        @c.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params):
            return [self.settings for _ in params.items]

        @c.feature(types.WINDOW_LOG_MESSAGE)
        def log(params):
            self.log.append((time.perf_counter(), params.message))

        @c.feature(types.WINDOW_SHOW_MESSAGE)
        def show(params):
            print(f"  server says: {params.message}", file=sys.stderr)

    async def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(SERVER_DIR)}
        await self.client.start_io(sys.executable, "-m", "cutegen", "lsp", env=env)
        caps = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(configuration=True))
        await self.client.initialize_async(types.InitializeParams(
            capabilities=caps, root_uri=self.root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name="probe")]))
        self.client.initialized(types.InitializedParams())

    def open(self, uri: str, text: str) -> float:
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="cuda-cpp", version=1, text=text)))
        return time.perf_counter()

    def change(self, uri: str, version: int, text: str) -> float:
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        return time.perf_counter()

    async def first(self, uri: str, version: int, *, error: bool, timeout: float) -> tuple[float, list]:
        """(when, diagnostics) of the first publication of `version` (holding an error, if `error`)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            for when, diags in self.published.get((uri, version), []):
                if not error or any(d.severity == types.DiagnosticSeverity.Error for d in diags):
                    return when, diags
            await asyncio.sleep(0.005)
        raise TimeoutError(f"no diagnostics{' with an error' if error else ''} for version {version}")

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def first_error_line(diags: list) -> int | None:
    lines = [d.range.start.line + 1 for d in diags if d.severity == types.DiagnosticSeverity.Error]
    return lines[0] if lines else None


def nvcc_check(builder: Builder, path: Path, text: str) -> tuple[float, int | None]:
    started = time.perf_counter()
    result = builder.run(Tier.CHECK, path, text)
    seconds = time.perf_counter() - started
    assert not result.cached, "the nvcc check must compile"
    errors = [d for d in result.errors if d.file == str(path)]
    return seconds, (errors[0].line if errors else None)


async def probe(kernel: Kernel, args, forced: dict) -> dict:
    root = Path(tempfile.mkdtemp(prefix="cutegen-typing-"))
    path = root / kernel.name
    path.write_text(kernel.text)  # the saved file is the clean one; every edit stays unsaved
    uri = path.as_uri()
    settings = {"includeDirs": [str(util_include())], **forced}
    builder = Builder(discover(Settings(include_dirs=settings["includeDirs"])), Settings(
        include_dirs=settings["includeDirs"]), root / "nvcc-state")  # its own cache: never a hit
    client = Client(root, settings)
    await client.start()
    opened = client.open(uri, kernel.text)
    when, diags = await client.first(uri, 1, error=False, timeout=args.timeout)
    await asyncio.sleep(2)  # both tiers' open-time results
    false_errors = sorted({(d.source, d.range.start.line + 1, d.message.splitlines()[0])
                           for _, ds in client.published.get((uri, 1), []) for d in ds
                           if d.severity == types.DiagnosticSeverity.Error})
    await asyncio.sleep(max(0.0, opened + args.settle - time.perf_counter()))
    broken = kernel.text.replace(kernel.old, kernel.new)
    assert broken != kernel.text, f"{kernel.name}: the broken variant's anchor is gone"
    rows = []
    for k in range(args.edits + 1):
        text = broken + "".join(f"// note {i}\n" for i in range(k))
        version = k + 2
        log_from = len(client.log)
        sent = client.change(uri, version, text)
        try:
            when, diags = await client.first(uri, version, error=True, timeout=args.timeout)
            served, line = when - sent, first_error_line(diags)
            source = next(d.source for d in diags if d.severity == types.DiagnosticSeverity.Error)
        except TimeoutError:
            served, line, source = math.nan, None, "none"
        if args.trace and k <= 1:
            print(f"  trace {kernel.name} v{version}:")
            for at, message in client.log[log_from:]:
                print(f"    +{at - sent:6.2f} s  {message[:150]}")
        await asyncio.sleep(args.gap)  # the full parse after a first pass: let it land before nvcc runs
        nvcc_s, nvcc_line = await asyncio.to_thread(nvcc_check, builder, path, text)
        rows.append({"edit": k, "typing_s": served, "nvcc_s": nvcc_s, "ratio": served / nvcc_s,
                     "typing_line": line, "nvcc_line": nvcc_line, "source": source})
        print(f"  {kernel.name} v{version}: typing {served:5.2f} s (line {line}, {source}), "
              f"nvcc {nvcc_s:5.2f} s (line {nvcc_line}), ratio {served / nvcc_s:.3f}", flush=True)
    await client.stop()
    return {"kernel": kernel.name, "lines": len(kernel.text.splitlines()), "false_errors_on_clean": false_errors,
            "rows": rows, "load_before": os.getloadavg()}


def summary(result: dict) -> dict:
    def stats(rows: list[dict], key: str) -> dict:
        values = [r[key] for r in rows]
        return {"p50": statistics.median(values), "p90": percentile(values, 0.9), "n": len(values)}

    first, steady = result["rows"][:1], result["rows"][1:]
    return {"first": {k: first[0][k] for k in ("typing_s", "nvcc_s", "ratio")},
            "steady": {k: stats(steady, k) for k in ("typing_s", "nvcc_s", "ratio")} if steady else {},
            "lines_agree": all(r["typing_line"] == r["nvcc_line"] for r in result["rows"])}


async def main(args) -> list[dict]:
    forced = dict(kv.split("=", 1) for kv in args.setting)
    forced = {k: json.loads(v) for k, v in forced.items()}
    chosen = [k for k in kernels() if not args.only or k.name in args.only]
    results = []
    for rep in range(args.repeat):
        for kernel in chosen:
            print(f"[{rep + 1}/{args.repeat}] {kernel.name}  (load {os.getloadavg()[0]:.2f})", flush=True)
            result = await probe(kernel, args, forced)
            result["summary"] = summary(result)
            results.append(result)
            if args.out:  # after each kernel: a later failure keeps what was measured
                args.out.write_text(json.dumps(results, indent=1))
    print(f"\n{'kernel':<16}{'lines':>6}{'first s':>9}{'nvcc s':>8}{'ratio':>7}"
          f"{'steady p50/p90 s':>19}{'nvcc p50':>9}{'ratio p50/p90':>16}{'lines':>7}{'false':>6}")
    for r in results:
        s, f = r["summary"], r["summary"]["first"]
        st = s["steady"]
        print(f"{r['kernel']:<16}{r['lines']:>6}{f['typing_s']:>9.2f}{f['nvcc_s']:>8.2f}{f['ratio']:>7.2f}"
              f"{st['typing_s']['p50']:>10.2f}/{st['typing_s']['p90']:<8.2f}{st['nvcc_s']['p50']:>9.2f}"
              f"{st['ratio']['p50']:>8.3f}/{st['ratio']['p90']:<7.3f}{'same' if s['lines_agree'] else 'DIFF':>7}"
              f"{len(r['false_errors_on_clean']):>6}")
        for fe in r["false_errors_on_clean"]:
            print(f"    false error on the clean text: {fe}")
    print(f"load average at the end: {os.getloadavg()}, cores: {os.cpu_count()}")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="kernel names (row_max.cu, softsign.cu, tiled_copy.cu, sgemm_1.cu, sgemm_2.cu)")
    parser.add_argument("--edits", type=int, default=5, help="steady-state edits after the first")
    parser.add_argument("--repeat", type=int, default=1, help="fresh folders per kernel")
    parser.add_argument("--settle", type=float, default=30.0, help="seconds from the open to the first edit")
    parser.add_argument("--gap", type=float, default=1.0, help="seconds after the error arrives before nvcc runs")
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--setting", action="append", default=[], help="KEY=JSON sent in the cutegen section")
    parser.add_argument("--trace", action="store_true", help="print the server's log of each first edit")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    asyncio.run(main(args))
