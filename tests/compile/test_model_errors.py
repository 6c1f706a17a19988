"""The failures models write (tests/corpus/model_errors, recorded nvcc 13.0 logs): broken structure, errors in
macro arguments, overload notes, decisive template bindings, At end of source, KernelBench ModelNew files (issue
30: structure against semantic errors, undeclared names, strides, the launcher warning, the check timeout, the
test-time path, the signature as a fix target). Most need no compiler; the `slow` ones check torch-including
files through the real Builder (shared test build cache), the `gpu` one runs `cutegen test`'s path for real."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.compile import Tier
from cutegen.compile.inline_sources import checked_lines
from cutegen.diagnostics import condense, parse_log
from cutegen.diagnostics.arguments import argument_position
from cutegen.diagnostics.macros import macro_position
from cutegen.diagnostics.structure import find_defects
from tests.support.paths import CORPUS

# .cu kernels and KernelBench ModelNew .py files (their annotations are comments in the CUDA string).
from tests.support.corpus import CorpusCase

# .cu kernels and KernelBench ModelNew .py files (their annotations are comments in the CUDA string).
ALL = [CorpusCase(p) for p in sorted((CORPUS / "model_errors").glob("*")) if p.suffix in (".cu", ".py")]
CASES = [c for c in ALL if (CORPUS / "logs" / f"{c.path.stem}.log").exists()]
ROOT = CORPUS.parent.parent


def _lines(file: str) -> list[str]:
    """As the check tier reads a file: a ModelNew file's CUDA strings in place, its Python blanked."""
    p = ROOT / file
    if not p.is_file():
        return []
    return checked_lines(p.read_text()) if p.suffix == ".py" else p.read_text().splitlines()


def _condensed(case, lines=_lines):
    log = (CORPUS / "logs" / f"{case.path.stem}.log").read_text()
    rel = str(case.path.relative_to(ROOT))
    return condense(parse_log(log), rel, lambda f: not f.startswith("$"), lines), log


def _case(stem: str) -> CorpusCase:
    (case,) = [c for c in CASES if c.path.stem == stem]
    return case


def test_every_case_has_its_log():
    assert len(CASES) == len(ALL) >= 27
    assert sum(c.path.suffix == ".py" for c in CASES) >= 4


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_first_error_is_on_the_fix_line_with_its_root_cause(case):
    diagnostics, log = _condensed(case)
    errors = [d for d in diagnostics if d.severity.value == "error"]
    first = errors[0]
    assert first.line in case.bug_lines | case.alt_lines, (first.line, first.message)
    assert case.expect_root in first.message + first.root, first.message
    assert len(first.message) <= 240


def test_structural_error_keeps_nvccs_place_as_related():
    first = _condensed(_case("unclosed_for_softmax"))[0][0]
    assert first.code == "structure-unclosed" and "a `}` is missing after line 19" in first.message
    nvcc_says = [r for r in first.related if r.message.startswith("nvcc reports")]
    assert {r.line for r in nvcc_says} >= {26, 6}  # the linkage error and 'At end of source' (to match line 6)


def test_torch_headers_are_not_user_code():
    """A torch-including kernel's log holds no warning from torch (system headers), only the user's error."""
    diagnostics, log = _condensed(_case("dispatch_undefined"))
    assert all("$TORCH_INCLUDE" not in d.file for d in diagnostics)
    assert [d.severity.value for d in diagnostics] == ["error"]


def test_balanced_code_with_odd_indentation_is_not_a_defect():
    code = "void f() {\n  if (x) {\n      y();\n    }\n}\n#if A\nvoid g() {\n#else\nvoid g(int) {\n#endif\n}\n"
    assert find_defects(code) == []


def test_unterminated_if_and_stray_endif():
    assert [d.kind for d in find_defects("#if A\nint x;\n")] == ["unterminated-if"]
    assert [d.kind for d in find_defects("int x;\n#endif\n")] == ["stray-endif"]


def test_macro_caret_maps_into_the_argument():
    source = ["  DISPATCH(t, [&] {", "    run<<<1, 1>>>(x,", "        undefined_name);", "  });"]
    echo = "  [&] { run<<<1, 1>>>(x, undefined_name); }()"
    col = echo.index("undefined_name") + 1
    assert macro_position(source, 1, echo, col) == (3, 9)
    assert macro_position(["  f(x);"], 1, "  f(x);", 3) is None  # no macro: nothing to move


def test_argument_position_in_a_kernel_launch():
    source = ["  k<float><<<g, b, 0, s>>>(", "      a,", "      f(b, c),", "      n);"]
    assert argument_position(source, 1, 3, 2) == (3, 7)
    assert argument_position(source, 1, 3, 3) == (4, 7)


# -- issue 30: the classes real ModelNew files still missed ---------------------------------------------------


def _raw_lines(file: str) -> list[str]:
    """How the check tier used to read a ModelNew file: the whole Python file as if it were C++."""
    p = ROOT / file
    return p.read_text().splitlines() if p.is_file() else []


def test_python_around_the_cuda_strings_is_not_read_as_cpp():
    """A `# if` comment, a floor division in parentheses and a dict in a helper are Python, not broken C++."""
    text = ('# if the input is on the CPU, fall back to torch\nimport torch\nfrom torch.utils.cpp_extension import '
            'load_inline\n\ndef blocks(n):\n    cfg = {"t": 256}\n    return max(1, (n + 255) // cfg["t"])\n\n'
            'src = """\n__global__ void k(float* y) {\n    y[0] = 1.f;\n}\n"""\n'
            'ext = load_inline(name="k", cpp_sources="", cuda_sources=src)\n')
    assert find_defects(text)  # read as C++, the Python looks broken
    lines = checked_lines(text)
    assert find_defects("\n".join(lines)) == []
    assert len(lines) == len(text.splitlines()) and lines[9] == "__global__ void k(float* y) {"
    assert lines[4] == lines[6] == "" and lines[8] == "" and lines[12] == ""


def test_a_literal_that_starts_on_its_assignment_line_keeps_its_columns():
    text = 'src = r"""__global__ void k() {\n}"""\nm = load_inline(name="m", cpp_sources="", cuda_sources=[src])\n'
    assert checked_lines(text) == ['          __global__ void k() {', '}', '']


@pytest.mark.parametrize("stem", ["modelnew_duplicate_declaration", "modelnew_undeclared_name"])
def test_weak_structural_evidence_never_replaces_a_semantic_error(stem):
    """Read the old way (Python as C++) the structure scan finds a broken `(` or `#if` above the error; that is
    no evidence for an undeclared or redeclared name, so nvcc's error stays first (the defect is a note)."""
    case = _case(stem)
    first = [d for d in _condensed(case, _raw_lines)[0] if d.severity.value == "error"][0]
    assert first.line in case.bug_lines and case.expect_root in first.message, first.message
    assert any(r.message.startswith("the structure may be broken here too") for r in first.related)


def test_a_name_declared_twice_names_the_first_declaration():
    first = _condensed(_case("modelnew_duplicate_declaration"))[0][0]
    assert first.message.endswith("(first declared at line 34)") and first.line == 38
    assert (34, "`threads` first declared here") in [(r.line, r.message) for r in first.related]


def test_strong_evidence_lets_a_deleted_brace_explain_an_undefined_name():
    """The `{` of `if (i < n)` was deleted: `v` dies with the if's one statement, its use below is undefined.
    The braceless header is the fix; nvcc's words stay as related places."""
    first = [d for d in _condensed(_case("deleted_brace_undefined"))[0] if d.severity.value == "error"][0]
    assert (first.line, first.code) == (8, "structure-missing-open")
    said = [r.message for r in first.related if r.message.startswith("nvcc reports")]
    assert said[0].startswith('nvcc reports: identifier "v" is undefined: `v` is declared at line 9')


def test_a_pasted_if_header_inside_a_macro_argument_is_the_brace_not_the_macros_paren():
    code = ('void f(int n) {\n  DISPATCH(t, "f", [&] {\n    if (n > 0) {\n    if (n > 0) {\n      g(n);\n    }\n'
            '  });\n}\n')
    (d,) = find_defects(code)
    assert (d.line, d.kind) == (3, "unclosed") and d.message.startswith("line repeated on the next line")
    first = _condensed(_case("modelnew_duplicated_if_header"))[0][0]
    assert first.line in (27, 28) and "this `(` is never closed" not in first.message


def test_a_paren_closing_over_an_open_brace_without_other_evidence_names_the_brace():
    code = 'void f() {\n  call(x, [&] {\n    y();\n  );\n}\n'
    (d,) = find_defects(code)
    assert d.kind == "unclosed" and d.line == 2 and "lambda" in d.message


def test_an_unclosed_block_in_a_template_is_not_reported_at_the_templates_first_line():
    """nvcc says 'closing brace of template definition not found' at the template's head, 34 lines above."""
    case = _case("modelnew_unclosed_block_in_template")
    first = _condensed(case)[0][0]
    (opener,) = case.alt_lines
    (head,) = [n for n, text in enumerate(case.text.splitlines(), 1) if text.startswith("softmax_rows_kernel(")]
    assert first.line in case.bug_lines and f"the for of line {opener} is never closed" in first.message
    assert any(r.line == head and "closing brace of template definition" in r.message for r in first.related)


@pytest.mark.parametrize("line, source, expected", [
    (2, ["__global__ void k(float* y) {", "  y[0] = total;", "}"], "`total` is not declared (first used here)"),
    (3, ["__global__ void k(float* y) {", "  int blocks = 4;", "  y[0] = blokcs;", "}"],
     "`blokcs` is not declared (first used here); did you mean `blocks`?"),
    (2, ["__global__ void k(float* y) {", "  y[0] = late;", "  float late = 1.f;", "}"],
     "`late` is declared only at line 3, after this use"),
    (3, ["__device__ void f() { float s = 2.f; }", "__global__ void k(float* y) {", "  y[0] = s;", "}"],
     "`s` is declared at line 1, in a scope that does not reach here"),
    (3, ['#define NAME "s"', "__global__ void k(float* y) {", '  y[0] = s; // s', "}"],
     "`s` is not declared (first used here)"),  # a string and a comment declare nothing
])
def test_an_undefined_name_says_where_it_is_declared(line, source, expected):
    name = expected[1:].split("`")[0]
    log = f'k.cu({line}): error: identifier "{name}" is undefined\n'
    (d,) = condense(parse_log(log), "k.cu", lambda f: True, lambda f: source)
    assert d.message == f'identifier "{name}" is undefined: {expected}'


def test_only_the_first_use_of_an_undeclared_name_is_first():
    diagnostics = _condensed(_case("modelnew_undeclared_name"))[0]
    assert [d.line for d in diagnostics] == [19]  # the second use (line 27) is the same error: a related place
    assert [r.line for r in diagnostics[0].related if r.message == "same error here"] == [27]


def test_strides_stay_where_they_are_what_differs():
    """`SrcLayout = (_4,_4), DstLayout = (_4,_4)` says nothing; the source's (int,_8) is why it cannot vectorize."""
    first = _condensed(_case("vectorized_copy_strided"))[0][0]
    assert "SrcLayout = (_4,_4):(int,_8), DstLayout = (_4,_4):(_1,_4)" in first.message
    assert len(first.message) <= 240


def test_strides_that_decide_nothing_still_give_way():
    """The rank mismatch is about shapes: the copy's bindings keep more names instead of strides."""
    log = (CORPUS / "logs" / "copy_rank_mismatch.log").read_text()
    (first, *_) = condense(parse_log(log), "tests/corpus/errors/copy_rank_mismatch.cu", lambda f: not f.startswith("$"),
                           _lines)
    assert "SrcLayout = ((_4,_1),_4,_1), DstLayout = _16" in first.message


EXTENSION = CORPUS / "model_errors" / "extension"  # a torch extension source next to its problem
EXTENSION_SOURCE = (EXTENSION / "19_ReLU.cu").read_text()


def test_no_launcher_warning_on_a_pytorch_extension_source(tmp_path):
    """A load/load_inline source is tested through its ModelNew: `cutegen_forward` does not apply to it."""
    from cutegen.compile.launcher import missing_launcher

    problem = EXTENSION / "19_ReLU.py"
    assert missing_launcher(tmp_path / "19_ReLU.cu", EXTENSION_SOURCE, problem) is None
    bound = EXTENSION_SOURCE.replace("#include <torch/extension.h>\n", "#include <pybind11/pybind11.h>\n")
    assert missing_launcher(tmp_path / "19_ReLU.cu", bound, problem) is None
    # An ABI kernel without the launcher still gets it, and a commented-out include does not hide it.
    abi = "// #include <torch/extension.h>\n__global__ void k(float* y) { y[0] = 0.f; }\n"
    assert missing_launcher(tmp_path / "19_ReLU.cu", abi, problem).code == "missing-launcher"


def test_no_launcher_warning_when_the_paired_file_is_the_modelnew_that_loads_it(tmp_path):
    """`relu.cu` next to `relu.py` = the ModelNew loading it (`load(sources=["relu.cu"])`): not a problem."""
    from cutegen.compile.launcher import missing_launcher

    loader = tmp_path / "relu.py"
    loader.write_text('import torch\nfrom torch.utils.cpp_extension import load\next = load(name="relu", '
                      'sources=["relu.cu"])\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n'
                      '        return ext.relu_cuda(x)\n')
    plain = "__global__ void relu_kernel(const float* x, float* y, int n) {}\n"
    assert missing_launcher(tmp_path / "relu.cu", plain, loader) is None


@pytest.mark.slow
def test_checking_an_extension_source_paired_with_a_problem_warns_nothing(builder):
    """The real check of a torch-including .cu next to its KernelBench problem (35-55 s on 2 cores, once: the
    shared test build cache keeps it)."""
    result = builder.run(Tier.CHECK, EXTENSION / "19_ReLU.cu")
    assert result.ok, [d.format() for d in result.diagnostics]
    assert not [d for d in result.diagnostics if d.code == "missing-launcher"]


def test_a_torch_including_check_gets_the_scaled_timeout_and_says_so(toolchain, tmp_path):
    """PyTorch's headers alone take 35-55 s to parse here: such a check gets 3 × checkTimeout, and says so."""
    from cutegen.compile import Builder
    from cutegen.settings import Settings

    builder = Builder(toolchain, Settings(check_timeout=0.5), tmp_path / "state")
    (d,) = builder.run(Tier.CHECK, EXTENSION / "19_ReLU.cu").errors
    assert d.code == "timeout" and d.message.startswith(
        "nvcc did not finish within 1.5 s (the check timeout of a source that includes PyTorch's headers: "
        "3 × cutegen.checkTimeout)")


def test_a_cut_check_says_which_phase_was_running(toolchain, tmp_path):
    """nvcc's own phase timing (-time) says how far the compile got before the kill."""
    from cutegen.compile import Builder
    from cutegen.compile.progress import WHAT
    from cutegen.settings import Settings

    # A check of 25-40 s (cicc instantiating the 3xTF32 GEMM): cut at 2.5 s however fast the machine. (The corpus
    # case this used, about 5 s on a loaded machine, finished within 2.5 s on idle cores.)
    case = ROOT / "examples" / "kernelbench" / "level1" / "1_Square_matrix_multiplication_.cu"
    result = Builder(toolchain, Settings(check_timeout=2.5), tmp_path / "state").run(Tier.CHECK, case)
    (d, *_) = result.errors
    assert d.code == "timeout" and "; it was still in " in d.message, d.message
    running = d.message.split("; it was still in ", 1)[1]
    assert any(running.startswith(what) for what in WHAT.values()), d.message


def test_the_rejecting_parameter_is_a_quick_fix_target_in_the_editor():
    """launch_arg_type: `axpy_tile(a, b, ...)` passes an int* where parameter #2 is `const float* b`. The fix may go
    at the call or at the parameter: the same code actions are offered on both (here a verified patch)."""
    from types import SimpleNamespace

    from lsprotocol import types

    from cutegen.agent.agent import Proposal
    from cutegen.lsp import convert
    from cutegen.lsp.code_actions import actions
    from cutegen.lsp.documents import uri_of
    from cutegen.lsp.patches import PatchStore, diagnostic_key
    from cutegen.lsp.store import Published
    from cutegen.settings import Settings

    case = _case("launch_arg_type")
    log = (CORPUS / "logs" / "launch_arg_type.log").read_text()
    (d,) = condense(parse_log(log), str(case.path), lambda f: not f.startswith("$"),
                    lambda f: (ROOT / f).read_text().splitlines())
    sig = d.data["signature"]
    source = case.path.read_text().splitlines()
    assert (sig["line"], sig["parameter"]) == (7, 2)
    assert source[6][sig["col"] - 1:sig["end_col"] - 1] == "const float* __restrict__ b"
    assert any(r.line == 7 and r.col == sig["col"] and "parameter #2 of axpy_tile" in r.message for r in d.related)

    uri, lsp = uri_of(case.path), convert.to_lsp(d)
    ls = SimpleNamespace(published=Published(), agent=SimpleNamespace(patches=PatchStore()), client_name="Neovim",
                         session=SimpleNamespace(settings=Settings()), open_document=lambda uri: None)
    ls.published.replace(uri, {uri: [(lsp, d)]})
    fix = Proposal(kernel=str(case.path), base_text="", new_text="", diff="", label="compiled, not run",
                   short="compiled, not run", figures={}, action="fix")
    ls.agent.patches.store(uri, 1, fix, key=diagnostic_key(lsp.data))

    def titles(line: int, col: int) -> list[str]:
        at = types.Range(start=types.Position(line=line - 1, character=col - 1),
                         end=types.Position(line=line - 1, character=col - 1))
        return [a.title for a in actions(ls, uri, at)]
    assert titles(19, d.col) == ["CuTeGen: apply verified fix (compiled, not run)"]
    assert titles(7, sig["col"] + 3) == ["CuTeGen: apply verified fix (compiled, not run) for the call at line 19, "
                                         "whose argument this parameter rejects"]
    assert titles(7, 20) == [] and titles(12, 3) == []  # the function's name, another line: neither place


# -- the test-time path: a ModelNew that load_inline cannot build ---------------------------------------------

LEVEL1 = ROOT / "examples" / "kernelbench" / "level1"
LOAD_INLINE = {c.path.stem: c for c in CASES if (CORPUS / "logs" / f"{c.path.stem}.load_inline.log").exists()}


def _load_inline_log(case) -> Path:
    return case.path.with_name(f"{case.path.stem}.load_inline.log") if case.path.parent.name == "load_inline" else \
        CORPUS / "logs" / f"{case.path.stem}.load_inline.log"


def _worker_reading(case) -> list:
    """What the worker makes of torch's real load_inline failure (recorded by bench/diagnostics_quality.py
    --record-load-inline), on the build files load_inline writes (torch's three include lines, then the strings)."""
    import tempfile

    from cutegen.compile.inline_sources import cuda_sources
    from cutegen.compile.load_inline_failure import map_build_errors

    log = _load_inline_log(case).read_text()
    with tempfile.TemporaryDirectory() as build:
        prelude = ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"]
        (Path(build) / "cuda.cu").write_text("\n".join(prelude + [s.text for s in cuda_sources(case.text)]))
        return map_build_errors(log.replace("$BUILD_DIR", build), case.path)


class _FailedLoadInline:
    """Stands in for the GPU worker (none here): its reply to a ModelNew whose load_inline build failed, as
    harness/worker.py builds it from BuildFailed, out of a real recorded failure."""

    def __init__(self, case):
        self.case = case

    def call(self, request: dict, timeout: float) -> dict:
        diagnostics = _worker_reading(self.case)
        log = _load_inline_log(self.case).read_text()
        return {"verdict": "build-failed", "message": f"load_inline failed: {diagnostics[0].message}",
                "build": {"ok": False, "log": log, "diagnostics": [d.to_json() for d in diagnostics]}}


def test_every_modelnew_case_has_a_recorded_load_inline_failure():
    assert set(LOAD_INLINE) == {c.path.stem for c in CASES if c.path.suffix == ".py"}


@pytest.mark.parametrize("stem", sorted(LOAD_INLINE))
def test_the_workers_reading_of_load_inline_is_the_checks(stem):
    """torch's build of the same strings, read by the same condenser: same line, same words as `cutegen check`."""
    case = LOAD_INLINE[stem]
    (first, *_) = _worker_reading(case)
    checked = [d for d in _condensed(case)[0] if d.severity.value == "error"][0]
    assert (first.file, first.line, first.message) == (str(case.path), checked.line, checked.message)


def test_a_library_that_does_not_load_is_one_error_at_the_load_inline_call(tmp_path):
    from cutegen.compile.load_inline_failure import map_build_errors

    case = _case("modelnew_undeclared_name")
    log = ("ImportError: /tmp/ext/swish_vec4/swish_vec4.so: undefined symbol: _Z10swish_cudaN2at6TensorE")
    (d,) = map_build_errors(log, case.path)
    assert d.line == case.text.splitlines().index("swish = load_inline(") + 1
    assert d.message.startswith("the extension built but does not load: undefined symbol `swish_cuda(at::Tensor)`")


@pytest.mark.slow
def test_a_modelnew_that_does_not_build_is_reported_as_cutegen_check_reports_it(builder, tmp_path):
    """`cutegen test`'s path (verify_kernel → worker → build-failed) reports the check tier's diagnostics first (the
    lost `}`), then what only load_inline saw (it was not given the CUTLASS include path). The check compile is
    shared through the test build cache (35-55 s once)."""
    from cutegen.harness.run import verify_kernel

    case = CorpusCase(CORPUS / "model_errors" / "load_inline" / "softmax_no_include_path.py")
    record = verify_kernel(case.path, builder, _FailedLoadInline(case), problem=LEVEL1 / "23_Softmax.py", gpu=True,
                           state_dir=tmp_path / ".cutegen")
    checked = builder.run(Tier.CHECK, case.path).errors
    assert record.verdict == "build-failed" and record.message == f"load_inline failed: {checked[0].format()}"
    first, *rest = record.build.diagnostics
    assert first.to_json() == checked[0].to_json() and first.line in case.bug_lines and "never closed" in first.message
    include = case.text.splitlines().index("#include <cute/tensor.hpp>") + 1
    assert [(d.line, d.message) for d in rest] == [(include, "cute/tensor.hpp: No such file or directory")]
    assert [d.line for d in record.build.worker_diagnostics] == [include]


@pytest.mark.gpu
def test_cutegen_test_of_a_modelnew_that_does_not_build_on_the_gpu(make_session, tmp_path):
    """The whole path on a GPU machine (`cutegen test --problem`): torch's load_inline fails in the worker, the
    record says what `cutegen check` says (about 1-2 minutes: two parses of PyTorch's headers)."""
    from cutegen.settings import Settings

    case = _case("modelnew_undeclared_name")
    session = make_session(Settings(problem=str(LEVEL1 / "25_Swish.py")), state_dir=tmp_path / ".cutegen")
    record = session.test(case.path)
    assert record.verdict == "build-failed", record.message
    first = record.build.diagnostics[0]
    assert (first.file, first.line) == (str(case.path), 19), first
    assert "`total_vec` is not declared (first used here)" in first.message
    assert record.build.worker_diagnostics[0].line == 19, record.build.worker_diagnostics
    print("GPU-RESULT", record.message, "| check", record.build.check)


def test_a_modelnew_that_includes_cute_without_an_include_path_is_warned_at_check_time():
    """The check adds CUTLASS's include folder; torch's load_inline does not (its real failure above)."""
    from cutegen.compile.inline_sources import include_path_warnings

    bare = CORPUS / "model_errors" / "load_inline" / "softmax_no_include_path.py"
    (w,) = include_path_warnings(bare, bare.read_text())
    assert w.severity.value == "warning" and w.line == bare.read_text().splitlines().index("#include <cute/tensor.hpp>") + 1
    assert w.message.startswith("load_inline will not find <cute/tensor.hpp>")
    fixed = _case("modelnew_unclosed_block_in_template")  # passes extra_include_paths=[CUTLASS_INCLUDE]
    assert include_path_warnings(fixed.path, fixed.text) == []
    plain = _case("modelnew_undeclared_name")  # includes only torch
    assert include_path_warnings(plain.path, plain.text) == []
