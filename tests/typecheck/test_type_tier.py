"""The type tier (clang's front end on unsaved text, typecheck/checker.py): the error corpora caught at the line
the save tier's nvcc diagnostic is on, with the root cause; no false error on any clean kernel of the repository;
the header set precompiled once and rebuilt when a header changes; a newer parse kills the older one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cutegen.typecheck import TypeChecker, leading_includes
from cutegen.diagnostics import condense, parse_log
from cutegen.model import Severity
from cutegen.settings import Settings
from tests.support.paths import CORPUS, ROOT
from tests.support.corpus import corpus

pytest.importorskip("clang.cindex", reason="the type tier needs the libclang-ng wheel")

# Fixtures that are broken on purpose (the type tier reports their errors, at their lines).
BROKEN_FIXTURES = {ROOT / "tests" / "suite" / "host_kernels" / "32_HardTanh.cu",  # "does not compile"
                   ROOT / "tests" / "agent" / "diffs" / "base" / "row_sum.cu"}  # the bug the diff tests fix
# The repository's kernels that nvcc compiles cleanly (the silent bugs compile too: they are wrong, not broken).
CLEAN = sorted({*ROOT.glob("examples/**/*.cu"), *(CORPUS / "clean").glob("*.cu"), *(CORPUS / "silent").glob("*.cu"),
                *(ROOT / "tests" / "kernels").glob("*.cu"), *(ROOT / "tests" / "layouts").glob("*.cu"),
                *(ROOT / "tests" / "suite").glob("*/*.cu"), *(ROOT / "tests" / "agent").glob("**/*.cu")}
               - BROKEN_FIXTURES)
# The same root cause in clang's words where nvcc's (the corpus's `expect-root:`) are EDG's own phrasing.
CLANG_WORDS = {
    "gemm_rank_mismatch": "no matching function for call to 'gemm'",
    "forward_ambiguity": "no matching function for call to 'def'",
    "host_fn_in_device": "call to __host__ function from __global__ function",
    "runtime_int_template": "not a constant expression",
    "deduce_mixed_types": "deduced conflicting types for parameter 'T'",
    "dispatch_macro_local": "use of undeclared identifier 'scale'",
    "dispatch_undefined": "use of undeclared identifier 'num_elements'",
    "dispatch_wrong_pointer": "no known conversion from 'float *'",
    "gemm_missing_accumulator": "no matching function for call to 'gemm'",
    "launch_arg_type": "no known conversion from 'const int *' to 'const float *",
    "duplicate_function": "redefinition of 'sigmoidf'",
    "launch_unclosed_paren": "expected ')'",
    "missing_paren_if": "expected ')'",
    "struct_missing_semicolon": "expected ';' after struct",
    "dispatch_missing_semicolon": "expected ';' at end of declaration",
    "unterminated_if": "unterminated conditional directive",
    # The static_assert's own text: clang's instantiation notes name no template parameters, so the decisive
    # binding (nvcc's `CopyPolicy = ...`, `Iterator = float [4]`) is not there; the cause is.
    "bare_copy_op": "Unrecognized CopyPolicy.",
    "raw_array_tensor": "of type 'const float[4]'",
    # nvcc's message is about the strides (`SrcLayout = (_4,_4):(int,_8)`), a binding clang does not name.
    "vectorized_copy_strided": "src failed to vectorize into registers",
}
# Known misses, a documented clang difference: clang treats constexpr functions as __host__ __device__ (nvcc
# only with --expt-relaxed-constexpr), so a constexpr host function called from device code is nvcc's to report.
KNOWN_MISSES = {"constexpr_std_max", "constexpr_user_fn"}


@pytest.fixture(scope="session")
def type_state(build_state) -> Path:
    """The PCH sets persist between runs next to the build cache (keyed: safe to share)."""
    return build_state / "type-tier"


@pytest.fixture(scope="session")
def checker(toolchain, type_state):
    # The Hopper GEMMs take half a minute of clang's time, far more on a machine shared with a suite run.
    # No warm header sets: a background build per slow file would load the cores for the rest of the run.
    return TypeChecker(toolchain, Settings(check_timeout=900), type_state, warm_after_s=None)


def nvcc_first_error(case) -> tuple[int, str] | None:
    """What the save tier shows first for this case: the recorded nvcc log, condensed."""
    log = (CORPUS / "logs" / f"{case.path.stem}.log").read_text()
    rel = str(case.path.relative_to(ROOT))
    lines = lambda f: (ROOT / f).read_text().splitlines() if (ROOT / f).is_file() else []  # noqa: E731
    found = [d for d in condense(parse_log(log), rel, lambda f: not f.startswith(("$", "/usr")), lines)
             if d.severity is Severity.ERROR]
    return (found[0].line, found[0].root) if found else None


def caught(checker, case) -> tuple[bool, str]:
    """The type tier's first error on the very line nvcc's check puts it (a call that spans lines: its last line,
    where nvcc puts it, clang_log.call_end), with the root cause."""
    result = checker.run(case.path)
    nvcc = nvcc_first_error(case)
    assert nvcc is not None, "the recorded nvcc log has no error"
    if not result.errors:
        return False, f"no error (nvcc: line {nvcc[0]}: {nvcc[1]})"
    first = result.errors[0]
    text = first.message + " " + first.root
    words = CLANG_WORDS.get(case.path.stem, case.expect_root)
    return first.line == nvcc[0] and words in text, f"line {first.line} (nvcc {nvcc[0]}): {first.message}"


CASES = [pytest.param(case, id=f"{kind}/{case.path.name}",
                      marks=[pytest.mark.xfail(strict=True, reason="constexpr: nvcc's to report")]
                      if case.path.stem in KNOWN_MISSES else [])
         for kind in ("errors", "model_errors") for case in corpus(kind)]


@pytest.mark.parametrize("case", CASES)
def test_corpus_case_on_nvcc_line_with_root_cause(checker, case):
    ok, why = caught(checker, case)
    assert ok, why


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: str(p.relative_to(ROOT)))
def test_clean_kernel_has_no_type_tier_error(checker, path):
    result = checker.run(path)
    assert not result.cancelled
    assert result.ok and result.diagnostics == [], [d.format() for d in result.diagnostics]  # no error, no failure


def _cutlass_tutorials() -> tuple[Path | None, list[Path]]:
    """CUTLASS's own CuTe tutorials, as the nvidia-cutlass wheel ships them (read there, never copied here)."""
    try:
        import cutlass_library
    except ImportError:
        return None, []
    source = Path(cutlass_library.__file__).parent / "source"
    return source / "tools" / "util" / "include", sorted((source / "examples" / "cute" / "tutorial").rglob("*.cu"))


UTIL_INCLUDE, TUTORIALS = _cutlass_tutorials()


@pytest.mark.skipif(not TUTORIALS, reason="the nvidia-cutlass wheel ships no CuTe tutorials here")
@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_cutlass_tutorial_has_no_type_tier_error(toolchain, type_state, path):
    """Real CUTLASS files the project never wrote (thrust in main(), sm70/sm80/sm90 GEMMs): no false error."""
    checker = TypeChecker(toolchain, Settings(check_timeout=900, include_dirs=[str(UTIL_INCLUDE)]), type_state,
                          warm_after_s=None)
    result = checker.run(path)
    assert result.ok and result.diagnostics == [], [d.format() for d in result.diagnostics]


def test_broken_fixtures_are_reported_at_their_lines(checker):
    found = {path.name: [d.line for d in checker.run(path).errors] for path in sorted(BROKEN_FIXTURES)}
    assert found == {"32_HardTanh.cu": [12], "row_sum.cu": [12]}


def test_leading_includes_only_guarded_headers_and_stop_at_code(tmp_path):
    (tmp_path / "guarded.cuh").write_text("#pragma once\nint g();\n")
    (tmp_path / "plain.cuh").write_text("int p();\n")  # no guard: included twice would redefine
    text = ('// header comment\n/* block\n comment */\n#include <cute/tensor.hpp>  // why\n\n'
            '#include "guarded.cuh"\n#include "plain.cuh"\n#include <cutegen/abi.h>\n')
    assert leading_includes(text, tmp_path, []) == ["#include <cute/tensor.hpp>", f'#include "{tmp_path / "guarded.cuh"}"']
    assert leading_includes("#define N 4\n#include <cute/tensor.hpp>\n", tmp_path, []) == []  # a macro first
    assert leading_includes("int x; /* c */\n#include <a.h>\n", tmp_path, []) == []


def test_pch_shared_across_files_and_rebuilt_when_a_header_changes(toolchain, tmp_path):
    header = tmp_path / "helpers.cuh"
    header.write_text("#pragma once\n#include <cute/tensor.hpp>\n__device__ inline int twice(int x) { return 2 * x; }\n")
    kernel = '#include "helpers.cuh"\n__global__ void k(int* y) { y[0] = twice(y[1]); }\n'
    (tmp_path / "a.cu").write_text(kernel)
    (tmp_path / "b.cu").write_text(kernel.replace("k(", "k2("))
    checker = TypeChecker(toolchain, Settings(), tmp_path / ".cutegen")
    first = checker.run(tmp_path / "a.cu")
    assert first.ok and first.command[-1] == "(pch: built)", first.raw_log
    assert checker.run(tmp_path / "b.cu").command[-1] == "(pch: used)"
    assert len(list((tmp_path / ".cutegen" / "typecheck").glob("*.pch"))) == 1
    time.sleep(1.1)  # clang compares modification times in seconds
    header.write_text(header.read_text().replace("2 * x", "3 * x") + "__device__ inline int thrice(int);\n")
    again = checker.run(tmp_path / "a.cu", kernel.replace("twice", "thrice"))
    assert again.ok, [d.format() for d in again.diagnostics]  # a new key: the changed header's set, no stale PCH
    assert again.command[-1] == "(pch: built)"


def test_stale_pch_is_rebuilt_not_reported(toolchain, tmp_path):
    """A PCH file whose header changed under the same key (clang refuses it) is rebuilt once, silently."""
    header = tmp_path / "h.cuh"
    header.write_text("#pragma once\n__device__ inline int one() { return 1; }\n")
    src = '#include "h.cuh"\n__global__ void k(int* y) { y[0] = one(); }\n'
    checker = TypeChecker(toolchain, Settings(), tmp_path / ".cutegen")
    assert checker.run(tmp_path / "k.cu", src).ok
    pch = next((tmp_path / ".cutegen" / "typecheck").glob("*.pch"))
    time.sleep(1.1)
    os.utime(header)  # same content (same key), newer time: clang says the PCH is out of date
    result = checker.run(tmp_path / "k.cu", src + "// an edit below the includes: the same PCH key, a new parse\n")
    assert result.ok and result.command[-1] == "(pch: built)", result.raw_log
    assert pch.is_file()


def test_a_text_parsed_before_is_answered_from_the_result_cache_until_a_header_changes(toolchain, tmp_path):
    header = tmp_path / "h.cuh"
    header.write_text("#pragma once\n__device__ inline int one() { return 1; }\n")
    src = '#include "h.cuh"\n__global__ void k(int* y) { y[0] = one() + undefined_name; }\n'
    checker = TypeChecker(toolchain, Settings(), tmp_path / ".cutegen")
    first = checker.run(tmp_path / "k.cu", src)
    again = TypeChecker(toolchain, Settings(), tmp_path / ".cutegen").run(tmp_path / "k.cu", src)  # a new session
    assert again.command[-1] == "(pch: cached result)"
    assert [d.format() for d in again.diagnostics] == [d.format() for d in first.diagnostics] != []
    header.write_text(header.read_text() + "__device__ inline int undefined_name = 0;\n")
    fixed = checker.run(tmp_path / "k.cu", src)
    assert fixed.ok and fixed.command[-1] != "(pch: cached result)", [d.format() for d in fixed.diagnostics]


def test_a_header_found_through_compile_commands_is_precompiled_and_keys_the_cached_answer(toolchain, tmp_path,
                                                                                           make_session):
    """A project's header found only through its compile_commands.json's -I (CUTLASS's examples include
    "cutlass/cutlass.h" so): it goes into the precompiled header set, and a change to it is seen on the next parse
    of the same text (before, the set stopped at it and the cached answer ignored it: a stale clean result)."""
    header = tmp_path / "include" / "lib" / "tile.cuh"
    header.parent.mkdir(parents=True)
    header.write_text("#pragma once\ntemplate <int N> __device__ int tile() { return N; }\n")
    source = tmp_path / "src" / "k.cu"
    source.parent.mkdir()
    text = '#include "lib/tile.cuh"\n__global__ void k(int* y) { y[0] = tile<4>(); }\n'
    source.write_text(text)
    build = tmp_path / "build"
    build.mkdir()
    (build / "compile_commands.json").write_text(json.dumps([{
        "directory": str(build), "file": str(source),
        "command": f"nvcc -I../include -O3 -x cu -c {source} -o k.o"}]))
    builder = make_session(Settings(check_timeout=600), state_dir=tmp_path / ".cutegen").builder(source)
    checker = TypeChecker(toolchain, Settings(check_timeout=600), tmp_path / ".cutegen", warm_after_s=None,
                          file_flags=builder.file_flags)
    clean = checker.run(source, text)
    assert clean.ok and clean.command[-1] == "(pch: built)", (clean.command[-1], clean.raw_log)
    header.write_text(header.read_text().replace("return N;", "return N + missing_name;"))
    broken = checker.run(source, text)
    assert [("missing_name" in d.message, Path(d.file).name) for d in broken.errors] == [(True, "tile.cuh")], \
        [d.format() for d in broken.diagnostics]


def test_broken_and_hostile_inputs_get_located_errors(checker, tmp_path):
    missing = checker.run(tmp_path / "m.cu", '#include <cute/tensor.hpp>\n#include "nowhere.cuh"\n__global__ void k() {}\n')
    assert [(d.line, "'nowhere.cuh' file not found" in d.message) for d in missing.errors] == [(2, True)]
    garbage = checker.run(tmp_path / "g.cu", "\x00\x01 }}}} template <<<< ;;\n" * 3)
    assert garbage.errors and all(d.file == str(tmp_path / "g.cu") for d in garbage.errors)
    assert checker.run(tmp_path / "e.cu", "").ok  # an empty buffer is not an error


def test_nvcc_atomic_builtins_are_known_and_checked(checker, tmp_path):
    """CUTLASS 4's subbyte_reference.h calls nvcc's builtin __nv_atomic_load_n (CUDA 12.8+): CUTLASS's Hopper
    example 48 reached it and got a false error in this tier; a call nvcc rejects is still reported at its line."""
    src = ("#include <cutlass/subbyte_reference.h>\n"  # the CUTLASS header the Hopper examples reach, as it is
           "__device__ unsigned relaxed(unsigned* p) { return __nv_atomic_load_n(p, __NV_ATOMIC_RELAXED); }\n"
           "__device__ unsigned char block(unsigned char* p) {\n"
           "  return __nv_atomic_load_n(p, __NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_BLOCK); }\n"
           "__device__ void put(unsigned* p) { __nv_atomic_store_n(p, 1u, __NV_ATOMIC_RELEASE); }\n"
           "__device__ void add(int* p) { __nv_atomic_fetch_add(p, 2, __NV_ATOMIC_RELAXED); }\n"
           "__global__ void k(cutlass::int4b_t* p) {\n"
           "  cutlass::SubbyteReference<cutlass::int4b_t> r(p, 1); r = cutlass::int4b_t(3); }\n")
    clean = checker.run(tmp_path / "atomics.cu", src)
    assert clean.ok, [d.format() for d in clean.diagnostics]
    broken = checker.run(tmp_path / "atomics.cu", src + "__device__ unsigned bad(unsigned* p) { return __nv_atomic_load_n(p); }\n")
    assert [d.line for d in broken.errors] == [9], [d.format() for d in broken.errors]


def test_newer_parse_kills_the_older(checker, toolchain):
    """Two parses under one job key: the first one's parser process dies and it returns cancelled."""
    hopper = ROOT / "examples" / "gemm_bf16" / "gemm_bf16.cu"  # half a minute of template instantiation
    text = hopper.read_text() + f"// {time.time_ns()}: a text never parsed before (no cached result)\n"
    results = {}
    slow = threading.Thread(target=lambda: results.setdefault("old", checker.run(hopper, text, job="same")))
    slow.start()
    deadline = time.monotonic() + 30
    while "same" not in checker._jobs and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.5)
    started = time.monotonic()
    newer = checker.run(ROOT / "tests" / "corpus" / "errors" / "wrong_rank_indexing.cu", job="same")
    slow.join(60)
    assert results["old"].cancelled and not results["old"].diagnostics
    assert newer.errors and not newer.cancelled
    assert time.monotonic() - started < 30  # the old parse did not run to its end first


def test_newer_edit_kills_the_parse_not_the_header_set_build(toolchain, tmp_path):
    """Typing on while a file's first PCH builds: each edit kills the last parse, the PCH is still built once."""
    checker = TypeChecker(toolchain, Settings(), tmp_path / ".cutegen")
    path = tmp_path / "k.cu"
    text = "#include <cute/tensor.hpp>\n__global__ void k(float* y) { y[0] = cute::abs(y[1]); }\n"
    results = {}
    first = threading.Thread(target=lambda: results.setdefault("first", checker.run(path, text, job="k")))
    first.start()
    deadline = time.monotonic() + 30
    while not checker._pch_locks and time.monotonic() < deadline:  # the build has started
        time.sleep(0.01)
    second = checker.run(path, text + "// typed on\n", job="k")
    first.join(120)
    assert results["first"].cancelled
    assert second.ok and second.command[-1] in ("(pch: used)", "(pch: built)"), second.raw_log
    assert len(list((tmp_path / ".cutegen" / "typecheck").glob("*.pch"))) == 1


def test_cli_check_tier_type(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    case = CORPUS / "errors" / "dynamic_owning_tensor.cu"
    out = subprocess.run([sys.executable, "-m", "cutegen", "check", "--tier", "type", "--json", str(case),
                          "--state-dir", str(tmp_path / ".cutegen")], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 1, out.stderr
    result = json.loads(out.stdout)
    assert result["tier"] == "type"
    assert [(d["line"], d["source"]) for d in result["diagnostics"]] == [(12, "cutegen (typing)")]
    assert "Dynamic owning tensors not supported" in result["diagnostics"][0]["message"]


def _result(path: str, *diagnostics) -> "CheckResult":
    from cutegen.model import CheckResult

    return CheckResult(file=path, tier="x", ok=not diagnostics, diagnostics=list(diagnostics), resources=[],
                       raw_log="", command=["x"], seconds=0.0)


def _diag(path: str, line: int, code: str = "cute-static-assert", severity=Severity.ERROR):
    from cutegen.model import Diagnostic

    return Diagnostic(file=path, line=line, col=1, end_col=2, severity=severity, message=f"{code} at {line}", code=code)


def test_disagreement_watches_the_lines_concerned_and_carries_what_only_nvcc_says():
    from cutegen.lsp.typing_tier import Saved, carried, digest, disagreement

    text = "a;\nb;\nbad line;\nc;\n"
    saved = Saved(3, digest(text), text.splitlines(), _result(
        "k.cu", _diag("k.cu", 4, "ptxas-spill", Severity.WARNING), _diag("k.cu", 1, "ptxas-C7510", Severity.ERROR)))
    false_error = disagreement(_result("k.cu", _diag("k.cu", 3)), saved)  # clang errs, nvcc (ptxas aside) does not
    assert false_error is not None and false_error.lines == {"bad line;"}
    assert false_error.holds("x;\n" + text) and not false_error.holds(text.replace("bad line;", "good line;"))
    assert disagreement(_result("k.cu"), saved) is None  # both without front-end errors: they agree
    missed = Saved(3, saved.digest, saved.lines, _result("k.cu", _diag("k.cu", 2)))
    assert disagreement(_result("k.cu"), missed).lines == {"b;"}
    # Typing moved everything down one line and rewrote line 4: the spill warning's line is gone, C7510 moves.
    moved = carried(saved, "new;\n" + text.replace("c;", "d;"))
    assert [(d.code, d.line) for d in moved] == [("ptxas-C7510", 2)]


def test_a_call_that_spans_lines_is_placed_on_its_last_line_as_nvcc_places_it():
    from cutegen.diagnostics.clang_log import call_end

    text = ["  TiledCopy tc = make_tiled_copy(Atom{},  // (", "      thr_layout,", "      val_layout);", "f();"]
    assert call_end(text, 1, 18) == 3  # clang's place: the callee's name; nvcc's: the closing parenthesis
    assert call_end(["auto x = f<A, B>(a,", "  b);"], 1, 10) == 2  # template arguments skipped
    assert call_end(["g([] { return 1; },", "  2);"], 1, 1) == 1  # a lambda's body: left where clang put it
    assert call_end(text, 2, 7) == 2 and call_end(text, 4, None) == 4  # no call there, no column
