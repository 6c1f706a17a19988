"""The type tier's warm header sets (typecheck/warm.py, clang_uses.py), with the real libclang: a file whose parse
instantiates header templates is parsed, after its first clean parse, against a PCH that holds those
instantiations; its own errors still show at once, and an error the early instantiation would cause is not
reported. `warm_after_s=0` makes every clean parse list its uses (a real kernel's are only worth it when slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.settings import Settings
from cutegen.typecheck.checker import TypeChecker

pytest.importorskip("clang.cindex")

LIBRARY = """#pragma once
namespace lib {
template <int N> struct fib { static constexpr long v = fib<N - 1>::v + fib<N - 2>::v; };
template <> struct fib<0> { static constexpr long v = 0; };
template <> struct fib<1> { static constexpr long v = 1; };
template <int N, class T> __host__ __device__ T scaled(T x) { return x * T(fib<N>::v % 7); }
template <class T> __host__ __device__ void touch(T) {}
}  // namespace lib
"""
KERNEL = '#include "lib.cuh"\n__global__ void k(float* y) { y[0] = lib::scaled<40, float>(y[0]); }\n'


def _checker(toolchain, tmp_path: Path) -> TypeChecker:
    (tmp_path / "lib.cuh").write_text(LIBRARY)
    return TypeChecker(toolchain, Settings(), tmp_path / ".cutegen", warm_after_s=0.0)


def _warmed(checker: TypeChecker, path: Path, text: str):
    first = checker.run(path, text)
    for thread in checker.warm.threads:
        thread.join(timeout=300)
    return first


def test_later_parses_read_the_warm_set_and_the_files_own_errors_show_at_once(toolchain, tmp_path):
    checker = _checker(toolchain, tmp_path)
    path = tmp_path / "k.cu"
    assert _warmed(checker, path, KERNEL).ok
    warm = checker.warm._ready[str(path)]
    assert any("&::lib::scaled<40, float>" in use for use in warm.uses), warm.uses
    edited = checker.run(path, KERNEL + "// an edit\n")
    assert edited.ok and edited.command[-1] == "(pch: warm)", edited.command
    broken = checker.run(path, KERNEL.replace("y[0]);", "y[0]) + not_declared;"))
    assert broken.command[-1] == "(pch: warm)"  # the file's own error: no second, plain parse
    assert [(d.line, "not_declared" in d.message) for d in broken.errors] == [(2, True)]


def test_a_warm_file_gets_a_first_pass_with_its_errors_before_the_full_parse(toolchain, tmp_path):
    """The editor shows the first pass at once; the full parse's result (the same errors here) replaces it."""
    checker = _checker(toolchain, tmp_path)
    path = tmp_path / "k.cu"
    assert _warmed(checker, path, KERNEL).ok
    firsts = []
    broken = checker.run(path, KERNEL.replace("y[0]);", "y[0]) + not_declared;"), on_first=firsts.append)
    assert [r.command[-1] for r in firsts] == ["(pch: warm, first pass)"]
    assert [(d.line, d.message) for d in firsts[0].errors] == [(d.line, d.message) for d in broken.errors]
    assert broken.command[-1] == "(pch: warm)" and "not_declared" in broken.errors[0].message
    clean = []
    assert checker.run(path, KERNEL + "// an edit\n", on_first=clean.append).ok
    assert len(clean) == 1 and clean[0].ok
    # CUDA's deferred diagnostics (an inline function's: one with external linkage is checked at once) come from
    # clang's end-of-file work, which the first pass skips: the full parse, published after it, has them.
    deferred, later = [], KERNEL + "__host__ __device__ inline int hd(int x) { if (x < 0) throw 1; return x; }\n" \
        "__global__ void j(int* p) { p[0] = hd(p[0]); }\n"
    full = checker.run(path, later, on_first=deferred.append)
    assert len(deferred) == 1 and deferred[0].ok
    assert [d.line for d in full.errors] == [3] and "throw" in full.errors[0].message
    cold = []  # a file without a warm set: one parse, no first pass (it would cost as much as the parse)
    assert checker.run(tmp_path / "other.cu", KERNEL, on_first=cold.append).ok and not cold


def test_an_error_only_the_warm_set_would_cause_is_not_reported(toolchain, tmp_path):
    """An explicit specialization declared before its use is valid C++; against a PCH that instantiated the same
    specialization first it is "explicit specialization after instantiation": a false error, so the plain header
    set answers and that warm set is not used for the file again."""
    checker = _checker(toolchain, tmp_path)
    path = tmp_path / "k.cu"
    assert _warmed(checker, path, KERNEL).ok
    specialized = KERNEL.replace(
        "__global__", "template <> __host__ __device__ float lib::scaled<40, float>(float x) { return x; }\n__global__")
    result = checker.run(path, specialized)
    assert result.ok, [d.message for d in result.errors]
    assert result.command[-1] == "(pch: used)"
    assert str(path) not in checker.warm._ready


def test_uses_leave_out_what_the_header_set_cannot_name(toolchain, tmp_path):
    """A type the file declares, a lambda: not spellable before the file's text, so not warm (a use that would not
    compile costs a failed build of half a minute on a real GEMM)."""
    checker = _checker(toolchain, tmp_path)
    path = tmp_path / "k.cu"
    text = KERNEL + ("struct Mine {};\n"
                     "__global__ void j(float* y) { lib::touch(Mine{}); lib::touch([] {}); lib::touch(1.0); }\n")
    assert _warmed(checker, path, text).ok
    uses = checker.warm._ready[str(path)].uses
    assert any("&::lib::touch<double>" in u for u in uses), uses
    assert not any("Mine" in u or "lambda" in u for u in uses), uses


def test_a_parse_faster_than_the_threshold_builds_no_warm_set(toolchain, tmp_path):
    (tmp_path / "lib.cuh").write_text(LIBRARY)
    checker = TypeChecker(toolchain, Settings(), tmp_path / ".cutegen", warm_after_s=60.0)
    path = tmp_path / "k.cu"
    assert checker.run(path, KERNEL).ok
    assert not checker.warm.threads and not list((tmp_path / ".cutegen").rglob("*.warm.pch"))


def test_a_warm_set_that_does_not_pay_is_dropped_and_not_built_again(toolchain, tmp_path):
    """CUTLASS's tutorials spend their parse in host code a use cannot name: a warm parse as slow as the plain one
    would only add a first pass to every edit."""
    checker = _checker(toolchain, tmp_path)
    path = tmp_path / "k.cu"
    assert _warmed(checker, path, KERNEL).ok
    warm = checker.warm._ready[str(path)]
    warm.plain_s = 2.0  # as if the plain parse had taken 2 s
    assert checker.warm.judge(str(path), 1.0)  # twice as fast: kept
    assert not checker.warm.judge(str(path), 1.9)  # no faster: dropped ...
    assert str(path) not in checker.warm._ready
    threads = len(checker.warm.threads)
    pch = checker._pch(path, KERNEL, checker.arguments(path, KERNEL))
    checker.warm.offer(str(path), pch, warm.uses, 2.0)
    assert len(checker.warm.threads) == threads and str(path) not in checker.warm._ready  # ... for good
