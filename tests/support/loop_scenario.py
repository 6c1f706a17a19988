"""The background loop's three saves in a row (issue 32), shared by the H200's GPU test
(tests/lsp/test_background_gpu.py) and bench/background_loop.py: a real LSP client (pytest-lsp), the real server
and, on the GPU machine, the real worker and ncu.

One file paired with softsign's KernelBench problem, saved three times:
  v1  examples/softsign/softsign.cu (the vectorized CuTe kernel): saved, then v2 is saved while v1's ncu runs;
  v2  tests/kernels/slow_correct.cu (scalar, 64-thread blocks): v3 is saved while v2's test is in the worker;
  v3  the same with 32-thread blocks (slower still): it runs through.
Every client-side event is time-stamped, so the table gives the time from each save to each figure (check:
the diagnostics published for that version; verdict, timing, profile: the loop's notifications for its text).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from cutegen import records

ROOT = Path(__file__).resolve().parents[2]
LOOP = "cutegen/loop"  # lsp/background.LOOP_NOTIFICATION (the import would pull pygls' server side in)
FIGURES = {"test": "verdict", "time": "timing", "profile": "profile"}


def versions() -> list[str]:
    fast = (ROOT / "examples" / "softsign" / "softsign.cu").read_text()
    slow = (ROOT / "tests" / "kernels" / "slow_correct.cu").read_text().replace(
        "problem=../../examples/softsign/softsign.py", "problem=softsign.py")
    return [fast, slow, slow.replace("kBlockThreads = 64;", "kBlockThreads = 32;")]


def recording_client() -> LanguageClient:
    """pytest-lsp's client, with every publication, loop notification and progress value time-stamped."""
    client = LanguageClient()
    client.events = []  # (time.monotonic(), kind, params)

    def published(ls, params: types.PublishDiagnosticsParams):
        ls.diagnostics[params.uri] = params.diagnostics
        ls.events.append((time.monotonic(), "diagnostics", params))

    def loop(ls, params):
        ls.events.append((time.monotonic(), "loop", params._asdict()))  # pygls: an unknown method's params, a namedtuple

    progress = DEFAULT_CLIENT_FEATURES[types.PROGRESS]

    def progressed(ls, params):
        progress(ls, params)
        ls.events.append((time.monotonic(), "progress", params))

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: published,
                                   types.PROGRESS: progressed, LOOP: loop, types.WORKSPACE_CODE_LENS_REFRESH: lambda ls, p: None})
    return client


async def start(client: LanguageClient, workspace: Path, settings: dict | None = None) -> None:
    client.set_configuration({"cutegen": settings or {}})
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")]))


@dataclass
class Result:
    texts: list[str]
    saves: list[float] = field(default_factory=list)  # monotonic time of each didSave
    rows: list[dict] = field(default_factory=list)  # per version: seconds from its save to each figure, and the figure
    ncu_killed_s: float | None = None  # from v2's save until v1's ncu (its whole session) was gone
    lenses: list[str] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)  # how each run ended (stopped, idle)


async def three_saves(client: LanguageClient, workspace: Path, wait_s: float = 300.0, *, texts: list[str] | None = None,
                      name: str = "softsign.cu", problem: str | None = None) -> Result:
    """`texts`, `name`, `problem`: other versions of another kernel and its problem's text (the CPU test's, for
    the GPU stand-ins); by default softsign's three."""
    texts = texts or versions()
    kernel = workspace / name
    problem = problem or (ROOT / "examples" / "softsign" / "softsign.py").read_text()
    kernel.with_suffix(".py").write_text(problem)
    uri, out = kernel.as_uri(), Result(texts)
    digests = [records.text_digest(t) for t in texts]

    kernel.write_text(texts[0])
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="cuda-cpp", version=1, text=texts[0])))
    _save(client, uri, out)
    await _until(lambda: _loop(client, digests[0], stage="profile", state="running"), wait_s, "v1's profile")
    ncu = await _until(lambda: _sessions_of("ncu", workspace), 60, "v1's ncu")

    _change_and_save(client, kernel, uri, texts[1], 2, out)
    await _until(lambda: not any(_alive_in(s) for s in ncu), 30, "v1's ncu to be killed")
    out.ncu_killed_s = time.monotonic() - out.saves[1]
    token = (await _until(lambda: _loop(client, digests[1], stage="test", state="running"), wait_s, "v2's test"))[0]["token"]
    await _until(lambda: any(getattr(p.value, "get", lambda k: None)("message") == "test: test"
                             for _, kind, p in client.events if kind == "progress" and p.token == token),
                 wait_s, "v2's test in the worker")

    _change_and_save(client, kernel, uri, texts[2], 3, out)
    await _until(lambda: _loop(client, digests[2], state="idle"), wait_s * 2, "v3's run to end")

    out.rows = [_row(client, i, digests[i], out.saves[i]) for i in range(3)]
    out.ends = [e["state"] for _, kind, e in client.events if kind == "loop" and e["state"] in ("stopped", "idle")]
    found = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    out.lenses = [lens.command.title for lens in found]
    return out


def _save(client, uri: str, out: Result) -> None:
    out.saves.append(time.monotonic())
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))


def _change_and_save(client, kernel: Path, uri: str, text: str, version: int, out: Result) -> None:
    kernel.write_text(text)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    _save(client, uri, out)


def _loop(client, digest: str, **match) -> list[dict]:
    return [e for _, kind, e in client.events
            if kind == "loop" and e.get("digest") == digest and all(e.get(k) == v for k, v in match.items())]


def _row(client, i: int, digest: str, saved: float) -> dict:
    row: dict = {"version": f"v{i + 1}"}
    checked = [t for t, kind, p in client.events if kind == "diagnostics" and p.version == i + 1 and t >= saved]
    row["check"] = round(checked[0] - saved, 3) if checked else None
    for t, kind, e in client.events:
        if kind == "loop" and e.get("digest") == digest and e["state"] == "done":
            row[FIGURES[e["stage"]]] = round(t - saved, 3)
            row[FIGURES[e["stage"]] + "_text"] = e["summary"]
    ended = [e["state"] for _, kind, e in client.events
             if kind == "loop" and e.get("digest") == digest and e["state"] in ("stopped", "idle", "cancelled")]
    row["end"] = ended[-1] if ended else None
    return row


def table(result: Result) -> str:
    lines = ["| version | check | verdict | timing | profile | run | figures |", "|---|---|---|---|---|---|---|"]
    for r in result.rows:
        cell = lambda k: f"{r[k]:.1f} s" if r.get(k) is not None else "—"
        figures = " / ".join(r[k] for k in ("verdict_text", "timing_text", "profile_text") if r.get(k))
        lines.append(f"| {r['version']} | {cell('check')} | {cell('verdict')} | {cell('timing')} | {cell('profile')} "
                     f"| {r['end']} | {figures} |")
    if result.ncu_killed_s is not None:
        lines.append(f"\nv1's ncu was gone {result.ncu_killed_s:.2f} s after v2's save.")
    return "\n".join(lines)


# -- processes --------------------------------------------------------------------------------------


def _sessions_of(tool: str, workspace: Path) -> set[int]:
    """Session ids of the processes named `tool` whose command line names `workspace` (ncu starts in a session
    of its own, with the profiled program and its helpers in it)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            named = tool in (os.path.basename(a.decode()) for a in argv[:2])  # a script's argv[0] is its interpreter
            if entry.name.isdigit() and named and str(workspace).encode() in b" ".join(argv):
                found.add(_session(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _session(entry: Path) -> int:
    return int((entry / "stat").read_text().rsplit(")", 1)[1].split()[3])


def _alive_in(sid: int) -> bool:
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and _session(entry) == sid:
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    return True
        except (OSError, IndexError, ValueError):
            continue
    return False


async def _until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
