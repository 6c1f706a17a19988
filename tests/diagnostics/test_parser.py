"""The parser and condenser on recorded nvcc logs (no compiler needed) and on CuTe type names."""

from __future__ import annotations


import pytest

from cutegen.diagnostics import condense, parse_log
from cutegen.diagnostics.cute_types import cute_notation
from cutegen.diagnostics.ptx import arch_traps, cp_async_local_diagnostics
from cutegen.diagnostics.resources import parse_ptxas_verbose
from tests.support.paths import CORPUS

# Recorded logs name the CUTLASS include dir as $CUTLASS_INCLUDE (no machine paths in the repo).
from tests.support.corpus import corpus

# Recorded logs name the CUTLASS include dir as $CUTLASS_INCLUDE (no machine paths in the repo).
LIBRARY = "$CUTLASS_INCLUDE"
RECORDED = [c for c in corpus("errors") if (CORPUS / "logs" / f"{c.path.stem}.log").exists()]


def _lines(case):
    def lines(file: str) -> list[str]:
        p = CORPUS.parent.parent / file
        return p.read_text().splitlines() if p.is_file() else []
    return lines


@pytest.mark.parametrize("case", RECORDED, ids=repr)
def test_recorded_log_condenses_to_the_bug_line(case):
    log = (CORPUS / "logs" / f"{case.path.stem}.log").read_text()
    rel = str(case.path.relative_to(CORPUS.parent.parent))
    diags = condense(parse_log(log), rel, lambda f: not f.startswith(LIBRARY), _lines(case))
    errors = [d for d in diags if d.severity.value == "error"]
    assert errors[0].line in case.bug_lines | case.alt_lines
    assert case.expect_root in errors[0].root + errors[0].message


def test_layouts_print_in_cute_notation():
    t = "cute::Layout<cute::tuple<cute::C<32>, cute::C<8>>, cute::tuple<cute::C<1>, cute::C<32>>>"
    assert cute_notation(t) == "(_32,_8):(_1,_32)"
    t = ("cute::Tensor<cute::ViewEngine<cute::gmem_ptr<const float *>>, cute::Layout<cute::tuple<int, cute::_4>, "
         "cute::tuple<cute::_4, cute::_1>>>")
    assert cute_notation(t) == "Tensor<gmem const float*, (int,_4):(_4,_1)>"


def test_edg_chain_innermost_user_frame_and_notes():
    log = (
        '/inc/cute/algorithm/copy.hpp(193): error: static assertion failed with "CopyAtom rank-mismatch."\n'
        '    static_assert(SrcLayout::rank == DstLayout::rank, "CopyAtom rank-mismatch.");\n'
        "    ^\n"
        "/inc/cute/algorithm/copy.hpp(90): note #3322-D: number of parameters does not match\n"
        "  copy(x);\n"
        "  ^\n"
        "          detected during:\n"
        '            instantiation of "void cute::copy(const X &) [with SrcLayout=cute::Layout<cute::_4, cute::_1>]" at line 12 of k.cu\n'
        '            instantiation of "void run<T>() [with T=float]" at line 40 of k.cu\n'
    )
    (msg,) = parse_log(log)
    assert msg.col == 3 and len(msg.frames) == 2 and msg.notes
    (d,) = condense([msg], "k.cu", lambda f: not f.startswith("/inc"), lambda f: [])
    assert (d.line, d.root) == (12, "CopyAtom rank-mismatch.")
    assert "cute::copy" in d.message and "SrcLayout = _4:_1" in d.message
    assert [(r.line, r.message) for r in d.related][-1] == (40, "instantiated from here")


def test_ptxas_verbose_resources_and_spills():
    log = (
        "ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_90a'\n"
        "ptxas info    : Function properties for _Z6kernelPf\n"
        "    64 bytes stack frame, 24 bytes spill stores, 24 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 360 bytes cmem[0]\n"
    )
    (k,) = parse_ptxas_verbose(log)
    assert (k.registers, k.shared_bytes, k.stack_bytes, k.spill_stores, k.barriers) == (255, 4096, 64, 24, 1)


def test_arch_trap_string_is_decoded_from_ptx_bytes():
    text = b"ERROR : Attempting to use SM90_64x64x16_F32F16F16_SS without CUTE_ARCH_MMA_SM90A_ENABLED\0"
    ptx = ".global .align 1 .b8 $str[%d] = {%s};" % (len(text), ", ".join(str(b) for b in text))
    assert arch_traps(ptx) == [("SM90_64x64x16_F32F16F16_SS", "CUTE_ARCH_MMA_SM90A_ENABLED")]


def test_settings_reject_bad_values_without_raising():
    from cutegen.settings import Settings

    s, problems = Settings.from_dict({"checkTimeout": "soon", "arch": "sm_80", "autoTest": True})
    assert s.arch == "sm_80" and s.auto_test is True and s.check_timeout == 120.0
    assert problems == ["cutegen.checkTimeout must be a positive number, not 'soon'"]


def test_tma_bulk_copies_are_not_taken_for_cp_async_into_registers():
    # PTX lines of CUTLASS's persistent ping-pong GEMM (examples/idioms/gemm_sm90_persistent_pingpong, nvcc 13.0):
    # TMA (cp.async.bulk*) plus an unrelated cvta.to.shared and an 8-byte spill frame -- no cp.async bug.
    tma = ("\tcvta.to.shared.u64 \t%tmp, %rd152;\n"
           "\tcp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd171, {%r86, %r85, %r916}], [%r541];\n"
           "\tcp.async.bulk.commit_group;\n")
    assert cp_async_local_diagnostics(tma, "", "k.cu", stack_bytes=8) == []
    ampere = tma + "\tcp.async.cg.shared.global [%r12], [%rd7], 16;\n"
    (d,) = cp_async_local_diagnostics(ampere, "", "k.cu", stack_bytes=8)
    assert d.code == "cute-cp-async-registers"
