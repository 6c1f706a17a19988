"""Shared fixtures. GPU tests are marked `gpu` and skip on machines without one.

Compiles are shared across tests and across runs: every test Builder that compiles files of the
repository (the corpus, the examples, the knowledge base's snippets) keeps its cache in one persistent
folder, `$CUTEGEN_TEST_CACHE` (default ~/.cache/cutegen/test-builds; `off` = a fresh one per run). That
is safe because the build cache's key covers the file's path and text, its quoted headers, the flags and
the toolchain (nvcc, CUTLASS, arch), and the folder is named by a hash of the build engine's own code;
diagnostics are derived from the cached compiler log again on every hit, so condenser changes are tested.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.build_cache import engine_hash, kept_folder, slug
from tests.support.corpus import CorpusCase, corpus  # noqa: F401  (fixtures below use them)
from tests.support.paths import CORPUS, ENGINE, ROOT  # noqa: F401
from tests.support.server_env import LLM_KEY, LLM_KEY_ENV, SERVER_ENV  # noqa: F401


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (run scripts/gpu-check.sh on the device)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _needs_missing_torch(report) -> bool:
    """A test module that failed to import only because torch is not installed (the PyTorch extra is optional)."""
    if not report.failed or report.nodeid.count("::") or not report.nodeid.endswith(".py"):
        return False
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError as e:
        return e.name == "torch" and "No module named 'torch'" in str(report.longrepr)
    return False


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """A module that imports torch at its top skips without it, as `pytest.importorskip("torch")` would, wherever
    the import is (in the module or in what it imports), instead of failing the collection."""
    report = yield
    if _needs_missing_torch(report):
        report.outcome = "skipped"
        report.longrepr = (str(collector.path), 0, "Skipped: needs torch (pip install torch)")
        report.result = []
    return report


@pytest.fixture(scope="session")
def toolchain():
    from cutegen.toolchain import ToolchainError, discover

    try:
        return discover()
    except ToolchainError as e:
        pytest.skip(f"no CUDA toolchain: {e}")


@pytest.fixture(scope="session")
def build_state(tmp_path_factory) -> Path:
    """A Builder state folder shared by the session's builders and kept between runs (see the module doc)."""
    where = os.environ.get("CUTEGEN_TEST_CACHE", str(Path.home() / ".cache" / "cutegen" / "test-builds"))
    if where == "off":
        return tmp_path_factory.mktemp("state")
    state = Path(where).expanduser() / engine_hash()
    state.mkdir(parents=True, exist_ok=True)
    os.utime(state)  # marks it used; caches of older engine code go after a week unused (~6 MB each)
    for old in state.parent.iterdir():
        if old != state and old.is_dir() and time.time() - old.stat().st_mtime > 7 * 86400:
            shutil.rmtree(old, ignore_errors=True)
    return state


@pytest.fixture
def kept_path(request, build_state, tmp_path):
    """A tmp_path whose `.cutegen/cache` folders outlive the run (see above). Another run of the same test in the
    same checkout at the same time (it holds the folder's lock) gets the plain tmp_path instead."""
    with kept_folder(build_state, slug(request.node.nodeid)) as folder:
        yield folder or tmp_path


@pytest.fixture
def workspace(kept_path) -> Path:
    """The editor's workspace folder of the LSP and agent tests (`ws` in a kept folder)."""
    root = kept_path / "ws"
    root.mkdir(exist_ok=True)
    return root


@pytest.fixture(scope="session")
def shared_session(toolchain, build_state):
    """The Session of the tests that compile the repository's files (the corpus, the examples, the snippets), its
    state dir the shared test build cache. A check timeout of 10 minutes, not the editor's 2: on a loaded 2-core
    CI machine a cold check of a big kernel (15_Matmul's triangle GEMM) has taken longer than 120 s. The tests of
    the timeout set their own."""
    from cutegen.session import Session
    from cutegen.settings import Settings

    session = Session(Settings(check_timeout=600), state_dir=build_state)
    yield session
    session.close()


@pytest.fixture(scope="session")
def builder(shared_session):
    """The shared Session's Builder (its state dir is fixed: one Builder for every path)."""
    return shared_session.builder(ROOT)


@pytest.fixture(scope="session")
def arch_builder(shared_session, build_state):
    """`arch_builder(arch)`: the shared test build cache's Builder for a target arch (None: the toolchain's own),
    each from a Session of that arch on the same state dir, made on first use."""
    from cutegen.session import Session
    from cutegen.settings import Settings

    sessions = {None: shared_session}

    def builder_for(arch: str | None):
        if arch not in sessions:
            sessions[arch] = Session(Settings(check_timeout=600, arch=arch), state_dir=build_state)
        return sessions[arch].builder(ROOT)

    yield builder_for
    for session in sessions.values():
        if session is not shared_session:
            session.close()


@pytest.fixture
def make_session(toolchain):
    """`make_session(settings, state_dir=folder)`: a Session as the CLI builds one (its --state-dir), for a test
    that needs settings of its own (an LLM endpoint, a short check timeout, the sandbox off, another arch). Its
    Builder, agent and worker are the product's (`.builder(path)`, `.agent(path, gpu=False)`, `.worker()`);
    each Session is closed (worker and jailed judges stopped) when the test ends. Skips without a CUDA toolchain.
    Give a kept folder (`kept_path`, `build_state`) where the test's texts are the same every run, so a warm run
    hits the build cache."""
    from cutegen.session import Session

    made: list[Session] = []

    def make(settings=None, *, state_dir: Path) -> Session:
        made.append(Session(settings, state_dir=state_dir))
        return made[-1]

    yield make
    for session in made:
        session.close()


# -- the engine of the GPU tests -----------------------------------------------------------------

class Engine:
    """One Session, as both adapters build it (its Builder, its warm GPU worker, its state dir), for a test module's
    kernels. Unpacks as (builder, worker, state) for the harness entry points (verify_kernel, profile_kernel)."""

    def __init__(self, session):
        self.session = session

    @property
    def builder(self):
        return self.session.builder(ROOT)  # one state dir (the session's fixed one): one Builder for every path

    @property
    def worker(self):
        return self.session.worker()

    @property
    def state(self):
        return self.session.fixed_state

    def __iter__(self):
        return iter((self.builder, self.worker, self.state))

    def __getitem__(self, index: int):
        return tuple(self)[index]


@pytest.fixture(scope="module")
def engine(request, build_state, tmp_path_factory):
    """The module's Engine: settings from its `ENGINE_SETTINGS` dict (e.g. a longer test_timeout), its state dir a
    kept folder (its builds outlive the run, its records do not). The worker stops when the module ends."""
    from cutegen.session import Session
    from cutegen.settings import Settings

    settings = Settings(**getattr(request.module, "ENGINE_SETTINGS", {}))
    with kept_folder(build_state, "engine-" + request.module.__name__.rsplit(".", 1)[-1]) as folder:
        state = (folder or tmp_path_factory.mktemp("engine")) / ".cutegen"
        session = Session(settings, state_dir=state)
        try:
            yield Engine(session)
        finally:
            session.close()


# -- progress: one line per test folder (with -q, pytest itself prints only dots) ---------------------

@dataclass
class FolderTally:
    """One folder's tests so far, when they finish interleaved with other folders' (FolderProgress)."""

    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0  # the summed durations of its tests' phases
    finished: int = 0  # tests whose teardown has reported


class FolderProgress:
    """A pytest plugin: when the run leaves a folder, '<folder>: 12 passed, 1 skipped in 40 s'.

    With pytest-xdist (scripts/test.sh runs the suite on a worker per core) the workers' reports arrive interleaved,
    so a folder's line is printed once its last test has finished, counted from the collected ids, and its time is
    the sum of its tests' durations (the work, spread over the workers) rather than the wall time between lines."""

    def __init__(self, reporter):
        self.reporter = reporter
        self.folder: str | None = None
        self.counts: dict[str, int] = {}
        self.started = time.monotonic()
        self.expected: dict[str, int] | None = None  # tests per folder, when the run is spread over workers
        self.tallies: dict[str, FolderTally] = {}  # per folder, when the run is spread over workers

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        if self.expected is None:  # every worker collects the same ids
            self.expected = {}
            for nodeid in ids:
                folder = _folder(nodeid)
                self.expected[folder] = self.expected.get(folder, 0) + 1

    def pytest_runtest_logreport(self, report) -> None:
        if self.expected is not None:
            self._parallel(report)
            return
        folder = _folder(report.nodeid)
        if folder != self.folder:
            self.flush()
            self.folder, self.counts, self.started = folder, {}, time.monotonic()
        _count(self.counts, report)

    def _parallel(self, report) -> None:
        folder = _folder(report.nodeid)
        tally = self.tallies.setdefault(folder, FolderTally())
        _count(tally.counts, report)
        tally.seconds += report.duration
        tally.finished += report.when == "teardown"
        if report.when == "teardown" and tally.finished == self.expected.get(folder) and tally.counts:
            self._write(folder, tally.counts, tally.seconds)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        self.flush()

    def flush(self) -> None:
        if self.folder is not None and self.counts:
            self._write(self.folder, self.counts, time.monotonic() - self.started)
        self.folder = None

    def _write(self, folder: str, counts: dict[str, int], seconds: float) -> None:
        summary = ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))
        self.reporter.write("\n")  # after the dots of the folder
        self.reporter.write_line(f"{folder}: {summary} in {seconds:.0f} s")


def _folder(nodeid: str) -> str:
    return str(Path(nodeid.split("::")[0]).parent)


def _count(counts: dict[str, int], report) -> None:
    """A test's outcome from its call report, or from a setup/teardown that did not pass (error, skip)."""
    if report.when == "call" or (report.when != "call" and not report.passed):
        outcome = "error" if report.when != "call" and report.failed else report.outcome
        counts[outcome] = counts.get(outcome, 0) + 1


@pytest.hookimpl(trylast=True)  # after pytest's own terminal reporter exists
def pytest_configure(config):
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    on_worker = hasattr(config, "workerinput")  # an xdist worker: its terminal is not the user's
    if reporter is not None and config.getoption("verbose") <= 0 and not on_worker:  # -v already names every test
        config.pluginmanager.register(FolderProgress(reporter), "cutegen-folder-progress")


def has_nvcc() -> bool:
    return shutil.which("nvcc") is not None


# -- the language server with an editor-like client (pytest-lsp) ----------------------------------
#
# One stack for the LSP and the agent tests: `client` is the real server (`python -m cutegen lsp`) over stdio,
# initialized like VS Code on `workspace`, with a client that records every publication and CodeLens refresh and
# applies workspace edits as an editor does. Markers: cutegen_settings(dict) the `cutegen` settings;
# client_name(str) the clientInfo name; replies(list) scripted LLM replies (a ScriptedOpenAI endpoint is started
# and configured, `client.scripted`); endpoint(**modes) that endpoint's modes (reasoning_model, sse_only, ...).

try:
    import pytest_lsp
    from lsprotocol import types as lsp_types
    from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
except ImportError:  # the LSP extras are optional; those tests then skip
    pytest_lsp = None


def _record_publish(client: LanguageClient, params):
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)  # every publication, with its version


def _code_lens_refresh(client: LanguageClient, params):
    client.code_lens_refreshes += 1


def _apply_edit(client: LanguageClient, params):
    """What an editor does with workspace/applyEdit: refuse a stale version, else apply and send didChange.
    Documents opened through tests/agent's helpers are in `client.docs` (uri → (version, text))."""
    from urllib.parse import unquote, urlparse

    from tests.agent.test_patch import _apply

    changes = params.edit.document_changes or []
    for change in changes:
        if isinstance(change, lsp_types.CreateFile):  # a new file: created empty, then filled by the next edit
            path = Path(unquote(urlparse(change.uri).path))
            if path.exists():
                return lsp_types.ApplyWorkspaceEditResult(applied=False, failure_reason=f"{path.name} exists")
            path.write_text("")
            client.docs[change.uri] = (0, "")
            continue
        uri, version = change.text_document.uri, change.text_document.version
        have_version, text = client.docs[uri]
        if version is not None and version != have_version:
            return lsp_types.ApplyWorkspaceEditResult(applied=False, failure_reason=f"version {version} is stale")
        new = _apply(text, change.edits)
        client.docs[uri] = (have_version + 1, new)
        client.applied.append((uri, change.edits))
        if have_version == 0:  # the file just created: an editor writes it out
            Path(unquote(urlparse(uri).path)).write_text(new)
        client.text_document_did_change(lsp_types.DidChangeTextDocumentParams(
            text_document=lsp_types.VersionedTextDocumentIdentifier(uri=uri, version=have_version + 1),
            content_changes=[lsp_types.TextDocumentContentChangeWholeDocument(text=new)]))
    return lsp_types.ApplyWorkspaceEditResult(applied=bool(changes))


def make_client():
    from tests.support.lsp_converter import code_action_converter

    client = LanguageClient(converter_factory=code_action_converter)
    client.published, client.docs, client.applied, client.code_lens_refreshes = [], {}, [], 0
    # pygls passes the client only to handlers whose first parameter is annotated with its type (as above)
    handlers = {lsp_types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _record_publish,
                lsp_types.WORKSPACE_CODE_LENS_REFRESH: _code_lens_refresh,
                lsp_types.WORKSPACE_APPLY_EDIT: _apply_edit}
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, **handlers})
    return client


def _marker(request, name: str, default=None):
    marker = request.node.get_closest_marker(name)
    return marker.args[0] if marker and marker.args else default


if pytest_lsp is not None:
    @pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "cutegen", "lsp"],
                                                  server_env=SERVER_ENV, client_factory=make_client))
    async def client(lsp_client: LanguageClient, request, workspace: Path):
        from tests.support.scripted_openai import ScriptedOpenAI

        # The type tier is on by default; a test turns it on itself (its marker): the others count nvcc's
        # publications alone, which a typing result racing with them would change.
        settings = {"checkOnType": False, **_marker(request, "cutegen_settings", {})}
        replies, endpoint = _marker(request, "replies"), request.node.get_closest_marker("endpoint")
        lsp_client.scripted = None
        if replies is not None:
            lsp_client.scripted = ScriptedOpenAI(replies, expect_key=LLM_KEY,
                                                 **(endpoint.kwargs if endpoint else {})).start()
            # a user who turned the background fix on (tests/lsp/test_workspace_trust.py tests it off)
            settings = {"backgroundAgent": True, **settings}
            settings.update(llmBaseUrl=lsp_client.scripted.url, llmModel="scripted", llmApiKeyEnv=LLM_KEY_ENV,
                            llmTimeout=30, llmRetries=1)
        lsp_client.set_configuration({"cutegen": settings})
        name = _marker(request, "client_name")
        await lsp_client.initialize_session(lsp_types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            client_info=lsp_types.ClientInfo(name=name) if name else None,
            root_uri=workspace.as_uri(),
            workspace_folders=[lsp_types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")]))
        yield
        try:
            await asyncio.wait_for(lsp_client.shutdown_session(), 20)
        except Exception:  # a test may have shut the server down itself
            pass
        if lsp_client.scripted is not None:
            lsp_client.scripted.stop()


@pytest.fixture
def scripted(monkeypatch):
    """Start a scripted endpoint: `url = scripted(entries)`; the key is required and set in the env."""
    from tests.support.scripted_openai import ScriptedOpenAI

    servers = []
    monkeypatch.setenv(LLM_KEY_ENV, LLM_KEY)

    def start(entries, **kw):
        server = ScriptedOpenAI(entries, expect_key=LLM_KEY, **kw).start()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()
