"""The declaration scanner, the shadow copy and the type renderer, without the compiler (fast)."""

from __future__ import annotations

from pathlib import Path

from cutegen.layouts.probe import PROBE, parse_probe_log, shadow_text
from cutegen.layouts.render import render
from cutegen.layouts.scan import find_declarations

ROOT = Path(__file__).resolve().parents[2]

KERNEL = """\
#include <cute/tensor.hpp>  // int x = 1;
using namespace cute;
using TileShape = Shape<_128, _64>;
constexpr int kThreads = 128;
template <class T> using Ptr = T*;
struct Storage { Layout<_4> l; };
void host_decl(int n);
__global__ void k(float* p, int n) {
  Tensor g = make_tensor(make_gmem_ptr(p), make_shape(n));  // (n)
  auto t = make_layout(make_shape(_4{}, _8{}));
  int i = 0;
  g(i) = 1.f;
  copy(g, g);
  for (int j = 0; j < n; ++j) { auto inner = g(j); (void)inner; }
  if (n > 2) auto skipped = 1; else auto other = 2;
  CUTE_UNROLL
  for (int k = 0; k < 2; ++k) i += k;
  TiledMma mma;
  auto lam = [&](int r) { auto hidden = r; return hidden; };
  /* Tensor commented = 1; */ const char* s = "Tensor fake = x;";
}
"""


def _names(text):
    return [(d.name, d.line, d.alias) for d in find_declarations(text)]


def test_scanner_finds_declarations_in_kernel_bodies_and_aliases():
    found = _names(KERNEL)
    assert ("TileShape", 3, True) in found
    assert ("g", 9, False) in found and ("t", 10, False) in found and ("mma", 18, False) in found
    assert ("inner", 14, False) in found  # inside a loop's block
    assert ("lam", 19, False) in found


def test_scanner_skips_what_cannot_be_probed():
    names = {n for n, _, _ in _names(KERNEL)}
    # plain ints, for-headers, braceless if/else bodies, lambda bodies, comments, strings, class members,
    # alias templates, function declarations and preprocessor lines
    assert not names & {"i", "j", "k", "skipped", "other", "hidden", "commented", "fake", "l", "Ptr", "host_decl", "x"}
    assert "kThreads" not in names and "s" not in names


def test_shadow_copy_keeps_every_line_number():
    decls = find_declarations(KERNEL)
    shadow = shadow_text(KERNEL, decls)
    assert shadow.count("\n") == KERNEL.count("\n")
    line9 = shadow.splitlines()[8]
    assert line9.startswith("  Tensor g = make_tensor(make_gmem_ptr(p), make_shape(n));")
    assert f"::{PROBE}<9, 10, decltype(g)>" in line9 and line9.endswith("// (n)")
    assert f"::{PROBE}<3, 7, TileShape>" in shadow.splitlines()[2]


def test_scanner_on_the_gemm_example_finds_every_partition():
    text = (ROOT / "examples/idioms/gemm_sm80_mma_sync/gemm_sm80_mma_sync.cu").read_text()
    names = {d.name for d in find_declarations(text)}
    assert {"tAgA", "tAsA", "tCgC", "tCrA", "tCrC", "tXsA", "mma", "copy_a", "SmemLayoutA", "TiledMma"} <= names


# The compiler's own spellings (nvcc 13.0, CUTLASS 4.2), as the probe log shows them.
REAL_TYPES = {
    "cute::Layout<cute::tuple<int, cute::C<8>>, cute::tuple<std::conditional_t<true, cute::C<1>, const cute::_1 &>, int>>":
        ("Layout", "(int,_8):(_1,int)"),
    "cute::ComposedLayout<cute::Swizzle<3, 3, 3>, cute::C<0>, cute::Layout<cute::tuple<cute::C<8>, cute::C<64>>, "
    "cute::tuple<cute::C<64>, cute::C<1>>>>": ("ComposedLayout", "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)"),
    "cute::Layout<cute::Shape<int, cute::_8>, std::tuple_element<0UL, std::tuple<cute::tuple<std::conditional_t<true, "
    "cute::tuple_element_t<0UL, cute::tuple<cute::_1, cute::_1>>, const cute::tuple_element_t<0UL, cute::tuple<cute::_1, "
    "cute::_1>> &>, int>, std::tuple_element<1UL, std::tuple<cute::_1, int>>::type>>::type>":
        ("Layout", "(int,_8):(_1,int)"),
    "cute::Tensor<cute::ViewEngine<cute::gmem_ptr<float *>>, cute::Layout<cute::tuple<int, cute::C<4>>, "
    "cute::tuple<cute::C<1>, int>>>": ("Tensor", "gmem float (int,_4):(_1,int)"),
    "cute::Tensor<cute::ArrayEngine<float, 32UL>, cute::Layout<cute::tuple<cute::C<4>, cute::C<8>>, "
    "cute::tuple<cute::C<1>, cute::C<4>>>>": ("Tensor", "rmem float (_4,_8):(_1,_4)"),
    "cute::Tensor<cute::ViewEngine<cute::smem_ptr<cutlass::half_t *>>, cute::Layout<cute::tuple<cute::C<8>>, "
    "cute::tuple<cute::C<1>>>>": ("Tensor", "smem half_t (_8):(_1)"),
}


def test_renderer_evaluates_the_alias_templates_in_compiler_spellings():
    for spelling, expected in REAL_TYPES.items():
        assert render(spelling) == expected, spelling


def test_non_cute_types_are_not_reported():
    assert render("int")[0] is None
    assert render("lambda [](int)->int")[0] is None
    assert render("Storage")[0] is None


def test_probe_log_per_instantiation():
    decls = find_declarations("template <int N> __global__ void k() {\n  auto t = make_layout(Int<N>{});\n}\n")
    log = (
        f'k.cu(2): error: incomplete type "{PROBE}<2, 8, cute::Layout<cute::_4, cute::_1>>" (aka "{PROBE}<2, 8, '
        'cute::Layout<cute::C<4>, cute::C<1>>>") is not allowed\n'
        "    auto t = make_layout(Int<N>{});\n                   ^\n"
        '          detected during instantiation of "void k<N>() [with N=4]" at line 9\n\n'
        f'k.cu(2): error: incomplete type "{PROBE}<2, 8, cute::Layout<cute::C<8>, cute::C<1>>>" is not allowed\n'
        "    auto t = make_layout(Int<N>{});\n                   ^\n"
        '          detected during instantiation of "void k<N>() [with N=8]" at line 10\n'
    )
    facts = parse_probe_log(log, "/x/k.cu", decls)
    assert [(f.name, f.instantiation, f.layout) for f in facts] == [("t", "N=4", "_4:_1"), ("t", "N=8", "_8:_1")]


def test_coordinate_tensors_and_64_bit_extents_print_as_cute_does():
    # examples/idioms/elementwise_vec128: cX = make_identity_tensor(shape(mX)), mX over an int64_t extent
    coord = ("cute::Tensor<cute::ViewEngine<cute::ArithmeticTupleIterator<cute::ArithmeticTuple<std::conditional_t<true, "
             "std::conditional_t<true, cute::C<0>, cute::C<0> &>, const std::conditional_t<true, cute::C<0>, cute::C<0> &> &>>>>, "
             "cute::Layout<cute::tuple<signed long>, cute::tuple<cute::ScaledBasis<cute::C<1>, 0>>>>")
    assert render(coord) == ("Tensor", "coord (int64_t):(_1@0)")
    wide = ("cute::Tensor<cute::ViewEngine<cute::gmem_ptr<const float *>>, cute::Layout<cute::tuple<signed long>, "
            "std::conditional_t<true, cute::tuple<std::conditional_t<true, cute::C<1>, cute::C<1> &>>, "
            "cute::tuple<std::conditional_t<true, cute::C<1>, cute::C<1> &>> &&>>>")
    assert render(wide) == ("Tensor", "gmem float (int64_t):(_1)")  # as in the issue: constness not shown


def test_scanner_survives_every_cuda_file_in_the_repository_and_broken_text():
    """Broken inputs are first-class: unbalanced braces, a cut-off file, the error corpus."""
    files = sorted(ROOT.glob("examples/**/*.cu")) + sorted(ROOT.glob("tests/corpus/**/*.cu"))
    assert len(files) > 10
    texts = [f.read_text() for f in files] + [KERNEL[: len(KERNEL) // 2], "}}} {{ Tensor t = x;", "", "__global__ void k( {"]
    for text in texts:
        decls = find_declarations(text)
        shadow = shadow_text(text, decls)
        assert shadow.count("\n") == text.count("\n")
        assert all(text.splitlines()[d.line - 1][d.col - 1:].startswith(d.name) for d in decls)
