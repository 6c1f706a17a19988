"""The language server's pure parts, without a server: kernel scanning, conversion, the store."""

from __future__ import annotations

from lsprotocol import types

from cutegen.lsp import convert, kernels, runs
from cutegen.lsp.documents import unfit, word_at
from cutegen.lsp.store import Published
from cutegen.model import CheckResult, Diagnostic, KernelResources, Location, Severity


def _diag(file: str, line: int, severity=Severity.ERROR, code="cute-static-assert") -> Diagnostic:
    return Diagnostic(file=file, line=line, col=3, end_col=20, severity=severity, message="m", code=code,
                      root="r", related=[Location("/inc/cute/tensor_impl.hpp", 370, 1, "root cause")],
                      data={"api": "cute::make_tensor", "bindings": {"Args": "<(int)>"}})


def _result(diagnostics, resources=()) -> CheckResult:
    return CheckResult(file="/ws/k.cu", tier="check", ok=False, diagnostics=list(diagnostics),
                       resources=list(resources), raw_log="", command=["nvcc"], seconds=1.0)


def test_kernel_anchors_skip_attributes_comments_and_find_the_launcher():
    text = ("// __global__ void commented(int);\n"
            "template <int N> __global__ void __launch_bounds__(128, (2)) tiled(float* p) {}\n"
            "extern \"C\" int cutegen_forward(const void* in) { tiled<1><<<1, 1>>>(nullptr); return 0; }\n")
    found = kernels.anchors(text)
    assert [(a.name, a.kind, a.line) for a in found] == [("tiled", "kernel", 1), ("cutegen_forward", "launcher", 2)]
    assert text.splitlines()[1][found[0].start:found[0].end] == "tiled"
    assert word_at(text.splitlines(), 2, 20) == "cutegen_forward"


def test_ranges_are_zero_based_and_data_carries_the_details():
    lsp = convert.to_lsp(_diag("/ws/k.cu", 12))
    assert (lsp.range.start.line, lsp.range.start.character, lsp.range.end.character) == (11, 2, 19)
    assert lsp.severity == types.DiagnosticSeverity.Error
    assert lsp.data["api"] == "cute::make_tensor" and lsp.data["code"] == "cute-static-assert"
    assert lsp.related_information[0].location.range.start.line == 369
    assert convert.from_data(lsp.data) == _diag("/ws/k.cu", 12)


def test_header_diagnostics_go_to_the_header_and_clear_with_their_owner():
    result = _result([_diag("/ws/k.cu", 5), _diag("/ws/tile.cuh", 7),
                      _diag("/ws/k.cu", 1, Severity.INFO, "ptxas-resources")])
    groups = convert.by_uri(result, "file:///ws/k.cu")
    assert sorted(groups) == ["file:///ws/k.cu", "file:///ws/tile.cuh"]
    assert len(groups["file:///ws/k.cu"]) == 1  # the resource summary is CodeLens-only

    store = Published()
    assert store.replace("file:///ws/k.cu", groups) == ["file:///ws/k.cu", "file:///ws/tile.cuh"]
    store.replace("file:///ws/other.cu", {"file:///ws/other.cu": [], "file:///ws/tile.cuh": groups["file:///ws/tile.cuh"]})
    assert len(store.at("file:///ws/tile.cuh")) == 2  # both kernels' share
    fixed = convert.by_uri(_result([]), "file:///ws/k.cu")
    assert store.replace("file:///ws/k.cu", fixed) == ["file:///ws/k.cu", "file:///ws/tile.cuh"]
    assert store.at("file:///ws/k.cu") == [] and len(store.at("file:///ws/tile.cuh")) == 1


def test_unfit_files(tmp_path):
    ok = tmp_path / "ok.cu"
    ok.write_text("__global__ void k() {}\n")
    assert unfit(ok, ok.read_text()) is None
    latin = tmp_path / "latin.cu"
    latin.write_bytes(b"int x;\n// caf\xe9\n")
    assert "not UTF-8 (byte 0xe9 on line 2)" in unfit(latin, None)
    assert "over 2 MB" in unfit(tmp_path / "unsaved.cu", "x" * (3 * 2**20))


def test_resource_titles():
    k = [KernelResources("k", "_Z1k", "sm_90a", registers=r, shared_bytes=1024) for r in (32, 40)]
    assert runs.resources_title(_result([], k), "k") == "2 instantiations: 32–40 regs · 1024 B smem · no spills"
    assert runs.resources_title(_result([_diag("/ws/k.cu", 5)]), "k") == "does not compile (1 error)"
    assert runs.resources_title(None, "k") == "not checked yet"


def test_a_newer_job_of_a_document_kills_the_older_and_outlives_its_end():
    import asyncio
    from pathlib import Path

    from cutegen.lsp.jobs import Job, JobTable

    class Compiler:
        def __init__(self):
            self.cancelled: list[str] = []

        def cancel(self, job: str) -> None:
            self.cancelled.append(job)

    async def scenario():
        table, compiler = JobTable(), Compiler()
        old = Job("file:///ws/k.cu", Path("/ws/k.cu"), 1, "lsp:k:0", builder=compiler)
        old.task = asyncio.create_task(asyncio.Event().wait())
        table.start(old)
        new = Job("file:///ws/k.cu", Path("/ws/k.cu"), 2, "lsp:k:1", builder=compiler)
        new.task = asyncio.create_task(asyncio.Event().wait())
        table.start(new)
        await asyncio.sleep(0)  # the cancelled task sees its cancel
        assert old.stop.is_set() and old.task.cancelled() and compiler.cancelled == ["lsp:k:0"]
        table.finished(old)  # the older one's end must not forget the newer
        table.cancel_all()
        await asyncio.sleep(0)
        assert new.stop.is_set() and new.task.cancelled() and compiler.cancelled == ["lsp:k:0", "lsp:k:1"]

    asyncio.run(scenario())
