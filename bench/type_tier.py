"""The type tier against the nvcc check tier, interleaved in one process so that both see the same load.

Starts the real server (`python -m cutegen lsp`, checkOnType on) over stdio in a scratch workspace holding copies
of the repository's kernels, opens each file (the first parse builds its header set's PCH: not timed), edits each
once and waits for the server's background work to end (a slow file's warm header set, typecheck/warm.py: the
time to it is reported, not part of a round), then per round: a didChange with a new text → the time until that
version's `cutegen (typing)` diagnostics are published (for a file with a warm header set, both its first pass and
its full parse, which replaces it: checker.py); then, in this process, the check tier (`Builder.run(Tier.CHECK)`, uncached: a new text) on the same
text. It reports per file the median of each, their ratio (median of the per-round ratios, with min–max), the
load average, the server's resident memory with all files open (the server alone, and with its parser
process), and what the PCHs take on disk.

    PYTHONPATH=server python bench/type_tier.py [--rounds 3] [--hopper-rounds 2] [--out type_tier.json]

Targets (issue 29): p50 <= 1.5 s and <= 0.35x the check tier on the activations and Level-1 GEMMs, <= 0.5x on the
Hopper GEMM; server RSS with five open CuTe files <= 1.5 GB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER_DIR = ROOT / "server"
sys.path.insert(0, str(SERVER_DIR))

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

from cutegen.compile import Builder, Tier  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.typecheck.warm import QUIET_FOR_S  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402

ACTIVATIONS = ["examples/softsign/softsign.cu", "examples/kernelbench/level1/26_GELU_.cu"]
GEMMS_L1 = ["examples/kernelbench/level1/1_Square_matrix_multiplication_.cu",
            "examples/kernelbench/level1/18_Matmul_with_transposed_both.cu"]
HOPPER = ["examples/gemm_bf16/gemm_bf16.cu"]
TYPING = "cutegen (typing)"


class Server:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = LanguageClient("cutegen-bench", "1")
        self.arrived: dict[tuple[str, int], list[float]] = {}  # (uri, version) → when each publication came
        self.first_passes: set[tuple[str, int]] = set()  # (file name, version): the server published a first pass
        self.first_seconds: float | None = None  # the last change's first pass, when it had one
        self.versions: dict[str, int] = {}
        self.saved_checks = 0  # save-tier results published (each refreshes the CodeLens)
        c = self.client

        @c.feature(types.WORKSPACE_CODE_LENS_REFRESH)
        def refresh(params):
            self.saved_checks += 1

        @c.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams):
            # Only the type tier publishes for versions after the first (nothing is saved); the first may be
            # either tier's.
            if params.version is not None:
                self.arrived.setdefault((params.uri, params.version), []).append(time.perf_counter())

        @c.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params):
            return [{"checkOnType": True, "debounceMs": 1} for _ in params.items]

        @c.feature(types.WINDOW_LOG_MESSAGE)
        def log(params):
            found = re.match(r"(.+?): typing first pass for version (\d+)", params.message)
            if found:
                self.first_passes.add((found[1], int(found[2])))
            if os.environ.get("BENCH_VERBOSE"):
                print(f"  server: {params.message[:300]}", file=sys.stderr, flush=True)

        @c.feature(types.WINDOW_SHOW_MESSAGE)
        def show(params):
            print(f"  server says: {params.message[:300]}", file=sys.stderr, flush=True)

    async def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(SERVER_DIR)}
        await self.client.start_io(sys.executable, "-m", "cutegen", "lsp", env=env)
        caps = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
            configuration=True, code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=True)))
        await self.client.initialize_async(types.InitializeParams(
            capabilities=caps, root_uri=self.root.as_uri(), initialization_options={"checkOnType": True, "debounceMs": 1},
            workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name="bench")]))
        self.client.initialized(types.InitializedParams())

    @property
    def pid(self) -> int:
        return self.client._server.pid

    async def open(self, path: Path) -> None:
        uri = path.as_uri()
        self.versions[uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="cuda-cpp", version=1, text=path.read_text())))
        await self.wait(uri, 1, 900)

    async def change(self, path: Path, text: str, timeout: float = 600) -> float:
        """didChange → seconds until the typing diagnostics of that version are published (debounce 1 ms): the
        full parse's (a first pass, where the server sends one, is `self.first_seconds`)."""
        uri = path.as_uri()
        version = self.versions[uri] = self.versions[uri] + 1
        started = time.perf_counter()
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        first = await self.wait(uri, version, timeout) - started
        # The server logs a first pass before publishing it, so by its publication the log is here.
        passes = 2 if (path.name, version) in self.first_passes else 1
        self.first_seconds = first if passes == 2 else None
        return await self.wait(uri, version, timeout, passes) - started

    async def wait(self, uri: str, version: int, timeout: float, count: int = 1) -> float:
        """When the `count`-th publication for that version came."""
        deadline = time.perf_counter() + timeout
        while len(self.arrived.get((uri, version), [])) < count:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no typing diagnostics for {uri} version {version}")
            await asyncio.sleep(0.005)
        return self.arrived[(uri, version)][count - 1]

    async def open_checks_done(self, count: int, timeout: float = 1800) -> None:
        """The nvcc checks didOpen started must be over before timing: they would load the rounds."""
        deadline = time.perf_counter() + timeout
        while self.saved_checks < count:
            if time.perf_counter() > deadline:
                raise TimeoutError("the open files' nvcc checks did not finish")
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


class Memory:
    """Peak resident memory of the server process, and of the server plus its children (the parser)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.server, self.total = pid, 0, 0
        self.at_peak: list[str] = []  # the children at the total's peak (what the memory went to)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            own = _rss(self.pid)
            kids = {c: _rss(c) for c in _children(self.pid)}
            self.server = max(self.server, own)
            if own + sum(kids.values()) > self.total:
                self.total = own + sum(kids.values())
                self.at_peak = [f"{_command(c)} {rss / 2**20:.0f} MB" for c, rss in kids.items()]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def mark(self) -> tuple[int, int, list[str]]:
        """The peaks so far (and the children at the total's), and a new start: the opening (nvcc checks and warm
        builds beside the first parses) and the typing rounds are told apart."""
        peaks, self.server, self.total = (self.server, self.total, self.at_peak), 0, 0
        return peaks


def _command(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    return " ".join(Path(a.decode(errors="replace")).name for a in argv[:2] if a)


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def nvcc_check(builder: Builder, path: Path, text: str) -> float:
    started = time.perf_counter()
    result = builder.run(Tier.CHECK, path, text)
    assert not result.cached, "the baseline must be a real compile"
    return time.perf_counter() - started


async def run(args) -> dict:
    root = Path(tempfile.mkdtemp(prefix="cutegen-typetier-"))
    (root / ".git").mkdir()  # the workspace root: .cutegen/ goes here
    files = []
    for rel in [*ACTIVATIONS, *GEMMS_L1, *HOPPER]:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, target)
        files.append((rel, target))
    for shared in ("idioms", "kernelbench/level1/common"):  # the headers the GEMMs include
        shutil.copytree(ROOT / "examples" / shared, root / "examples" / shared, dirs_exist_ok=True)
    builder = Builder(discover(Settings()), Settings(), root / ".cutegen-baseline")
    server = Server(root)
    await server.start()
    memory = Memory(server.pid)
    rows = []
    try:
        for rel, path in files:
            await server.open(path)
            print(f"  opened {rel}", flush=True)
        await server.open_checks_done(len(files))
        print(f"  the open files' nvcc checks are done; load {os.getloadavg()[0]:.1f}", flush=True)
        warmup = await warm_up(server, files)
        opening = memory.mark()
        for rel, path in files:
            rounds = args.hopper_rounds if rel in HOPPER else args.rounds
            typed, firsts, checked, load = [], [], [], []
            for i in range(rounds):
                text = path.read_text() + f"\n// edit {i} {time.time_ns()}\n"
                load.append(os.getloadavg()[0])
                typed.append(await server.change(path, text))
                firsts.append(server.first_seconds)
                checked.append(await asyncio.to_thread(nvcc_check, builder, path, text))
                first = "" if firsts[-1] is None else f" (first pass {firsts[-1]:.2f} s)"
                print(f"  {rel}: round {i + 1}: typing {typed[-1]:.2f} s{first}, nvcc check {checked[-1]:.2f} s, "
                      f"load {load[-1]:.1f}", flush=True)
            print(f"  {rel}: server RSS now {_rss(server.pid) / 2**20:.0f} MB", flush=True)
            ratios = [t / c for t, c in zip(typed, checked)]
            first_p50 = statistics.median(firsts) if None not in firsts else None
            rows.append({"file": rel, "group": _group(rel), "typing_p50": statistics.median(typed),
                         "first_pass_p50": first_p50, "first_pass": firsts,
                         "check_p50": statistics.median(checked), "ratio_p50": statistics.median(ratios),
                         "ratio_min": min(ratios), "ratio_max": max(ratios), "typing": typed, "check": checked,
                         "load": load})
    finally:
        memory.stop()
        await server.stop()
    pch = sum(p.stat().st_size for p in (root / ".cutegen" / "typecheck").glob("*.pch"))
    report = {"rows": rows, "warm_up": warmup, "open_files": len(files), "server_rss_peak": memory.server,
              "server_and_parser_rss_peak": memory.total, "opening_server_and_children_rss_peak": opening[1], "opening_children_at_peak": opening[2],
              "pch_bytes": pch,
              "pch_files": len(list((root / ".cutegen" / "typecheck").glob("*.pch"))), "cores": os.cpu_count()}
    shutil.rmtree(root, ignore_errors=True)
    return report


async def warm_up(server: Server, files: list) -> dict:
    """One untimed edit per file (its first type parse after opening: a slow one starts its warm set's build),
    then wait until the server has had no child process (parser or warm build) for longer than a warm build waits
    for quiet before it starts (warm.QUIET_FOR_S)."""
    started = time.perf_counter()
    first = {}
    for rel, path in files:
        first[rel] = await server.change(path, path.read_text() + "\n// warm-up\n")
    idle_since = None
    while True:
        busy = bool(_children(server.pid))
        now = time.perf_counter()
        idle_since = None if busy else (idle_since or now)
        if idle_since is not None and now - idle_since >= QUIET_FOR_S + 2.0:
            break
        await asyncio.sleep(0.2)
    warm = sorted((server.root / ".cutegen" / "typecheck").glob("*.warm.pch"))
    total = time.perf_counter() - started - QUIET_FOR_S - 2.0
    print(f"  warm-up: first edits {', '.join(f'{Path(r).name} {t:.1f} s' for r, t in first.items())}; background "
          f"work done {total:.0f} s after the first edit; {len(warm)} warm header set(s)", flush=True)
    return {"first_edit_s": first, "until_idle_s": total, "warm_sets": len(warm),
            "warm_bytes": sum(p.stat().st_size for p in warm)}


def _group(rel: str) -> str:
    return "activation" if rel in ACTIVATIONS else "level1-gemm" if rel in GEMMS_L1 else "hopper-gemm"


def show(report: dict) -> None:
    print(f"\n{'file':<58} {'first pass':>10} {'typing p50':>10} {'check p50':>10} {'ratio p50 (min-max)':>22} "
          f"{'load':>6}")
    for r in report["rows"]:
        first = "—" if r.get("first_pass_p50") is None else f"{r['first_pass_p50']:.2f}s"
        print(f"{r['file']:<58} {first:>10} {r['typing_p50']:>9.2f}s {r['check_p50']:>9.2f}s "
              f"{r['ratio_p50']:>8.2f}x ({r['ratio_min']:.2f}-{r['ratio_max']:.2f}) {statistics.mean(r['load']):>6.1f}")
    mb = 1 / 2**20
    print(f"server RSS peak with {report['open_files']} open files: {report['server_rss_peak'] * mb:.0f} MB "
          f"(with the parser process: {report['server_and_parser_rss_peak'] * mb:.0f} MB while typing, "
          f"{report['opening_server_and_children_rss_peak'] * mb:.0f} MB with every child while opening); "
          f"PCH on disk: {report['pch_bytes'] * mb:.0f} MB in {report['pch_files']} file(s)")
    print(f"children at the opening's peak: {'; '.join(report.get('opening_children_at_peak') or ['none'])}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hopper-rounds", type=int, default=2)
    ap.add_argument("--only", nargs="*", help="a subset of the files (by substring)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.only:
        global ACTIVATIONS, GEMMS_L1, HOPPER
        keep = lambda group: [f for f in group if any(s in f for s in args.only)]  # noqa: E731
        ACTIVATIONS, GEMMS_L1, HOPPER = keep(ACTIVATIONS), keep(GEMMS_L1), keep(HOPPER)
    report = asyncio.run(run(args))
    show(report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
