"""Layouts inside function templates, host and device, resolve through the instantiations the file makes.

The real CUTLASS tutorial `sgemm_sm80.cu` (from the nvidia-cutlass wheel, copied at test time) has a host
function template `gemm_tn<Alpha, Beta>` with a default argument, instantiated from `main`; its lines once answered
"no CuTe object declared here" because the scanner read the default argument's `=` as an initializer and
swallowed every function after it. `template_cases.cu` instantiates a host template and the `__global__` template
it launches twice each: the answers differ per instantiation and equal what `cute::print` prints.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from lsprotocol import types

from cutegen.layouts.probe import LayoutProbe, _template, nothing_at
from cutegen.layouts.scan import find_declarations
from cutegen.layouts.service import LayoutService
from cutegen.lsp.layouts import layout_code_actions, layout_hover
from cutegen.settings import Settings
from tests.support.host_program import HostProgram

CASES = Path(__file__).with_name("template_cases.cu")


def sgemm_sm80() -> Path:
    spec = importlib.util.find_spec("cutlass_library")
    origin = Path(spec.origin).parent if spec and spec.origin else None
    path = origin / "source" / "examples" / "cute" / "tutorial" / "sgemm_sm80.cu" if origin else None
    if path is None or not path.is_file():
        pytest.skip("the nvidia-cutlass wheel with its CuTe tutorial is not installed")
    return path


def line_of(text: str, needle: str, after: int = 0) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if i > after and needle in line)


# -- the scanner: a default argument is no initializer ----------------------------------------------


def test_declarations_after_a_default_argument_are_found():
    text = """template <class T = float, int N = 4>
void host(T* p, int n, int stream = 0) {
  auto a = make_layout(Int<N>{});
}
bool operator==(Foo const& x, Foo const& y) { return true; }
int main() {
  auto b = make_layout(Int<8>{});
}
"""
    assert [(d.name, d.line) for d in find_declarations(text)] == [("a", 3), ("b", 7)]


def test_every_function_of_sgemm_sm80_is_scanned():
    text = sgemm_sm80().read_text()
    lines = {d.line for d in find_declarations(text)}
    gemm_tn = line_of(text, "gemm_tn(int m")
    assert line_of(text, "auto sA = tile_to_shape", after=gemm_tn) in lines
    assert line_of(text, "using TA = cute::half_t") in lines  # main, after every template


def test_an_instantiation_is_named_as_the_user_writes_it():
    # EDG's own spellings, from the probe log of sgemm_sm80.cu and of a kernel template
    assert _template('void gemm_tn(int, int, int, Alpha, const cutlass::half_t *, int, const cutlass::half_t *, '
                     'int, Beta, cutlass::half_t *, int, cudaStream_t) [with Alpha=cutlass::half_t, '
                     'Beta=cutlass::half_t]') == "gemm_tn<half_t, half_t>"
    assert _template("void k<N>() [with N=4]") == "k<4>"
    assert _template("cute::Tensor<A, B> make<T>(T) [with T=int]") == "make<int>"
    long = _template("void gemm_device(P, C) [with P=cute::tuple<int, int, int>, C=cute::tuple<cute::C<128>, "
                     "cute::C<128>, cute::C<64>>, TA=cutlass::half_t, AStride=cute::tuple<int, cute::C<1>>]")
    assert long.startswith("gemm_device<(int,int,int), (_128,_128,_64), half_t") and len(long) <= 60


# -- real probe builds --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cases(toolchain, tmp_path_factory, build_state):
    """(probe result, {(instantiation, name): printed}, path, text) — the host program builds while the probe runs."""
    work = tmp_path_factory.mktemp("templates")
    path = work / CASES.name
    shutil.copy(CASES, path)
    host = HostProgram(toolchain, path, build_state)
    result = LayoutProbe(toolchain, Settings(), work / "state").run(path)
    printed = host.printed()
    return result, printed, path, path.read_text()


@pytest.mark.slow
def test_a_host_template_answers_per_instantiation_as_cute_print_does(cases):
    result, printed, _, text = cases
    for name in ("smem", "tiled"):
        line = line_of(text, f"show(\"{name}\"")
        facts = result.at(line)
        assert [f.instantiation for f in facts] == ["BM=16, Element=float", "BM=32, Element=float"]
        assert [f.layout for f in facts] == [printed[(f.instantiation, name)] for f in facts]
        assert facts[0].layout != facts[1].layout
        assert [f.shown_as(facts) for f in facts] == ["in launch_tiles<16, float> (1 of 2)",
                                                       "in launch_tiles<32, float> (2 of 2)"]


@pytest.mark.slow
def test_a_declaration_no_template_argument_changes_is_the_same_in_every_instantiation(cases):
    result, printed, _, text = cases
    (atom,) = result.at(line_of(text, 'show("atom"'))
    assert atom.layout == printed[("BM=16, Element=float", "atom")] == printed[("BM=32, Element=float", "atom")]
    assert atom.shown_as([atom]) == "the same in all 2 instantiations of launch_tiles"


@pytest.mark.slow
def test_a_kernel_template_answers_per_instantiation_its_host_made(cases):
    result, printed, _, text = cases
    kernel = line_of(text, "__global__ void tile_kernel")
    for name in ("smem", "tiled"):
        facts = result.at(line_of(text, f"auto {name} =", after=kernel))
        assert len(facts) == 2 and all(f.template.startswith("tile_kernel<") for f in facts)
        # each instantiation of the kernel is one of the host's, and both are there
        assert sorted(f.layout for f in facts) == sorted(printed[(i, name)] for i in
                                                         ("BM=16, Element=float", "BM=32, Element=float"))


@pytest.mark.slow
def test_the_editor_says_which_instantiation_it_shows_and_offers_the_others(cases):
    result, printed, path, text = cases
    service = LayoutService(lambda p: _Cached(result))
    service.start(path, text).result(timeout=60)
    ls = SimpleNamespace(layout_service=service, open_document=lambda uri: SimpleNamespace(source=text))
    line = line_of(text, 'show("smem"') - 1
    hover = layout_hover(ls, path.as_uri(), types.Position(line=line, character=8), text)
    assert "in `launch_tiles<16, float>` (1 of 2)" in hover
    first, second = hover.split("The other instantiations")
    assert printed[("BM=16, Element=float", "smem")] in first
    assert f"[BM=32, Element=float] {printed[('BM=32, Element=float', 'smem')]}" in second
    actions = layout_code_actions(ls, path.as_uri(), types.Range(start=types.Position(line=line, character=8),
                                                                 end=types.Position(line=line, character=8)))
    assert [a.title for a in actions] == ["CuTeGen: show layout of smem in launch_tiles<16, float> (1 of 2)",
                                          "CuTeGen: show layout of smem in launch_tiles<32, float> (2 of 2)"]
    assert [a.command.arguments[0]["instantiation"] for a in actions] == ["BM=16, Element=float",
                                                                         "BM=32, Element=float"]
    service.close()


class _Cached:
    """The probe the service calls, answering with the module's one real probe build."""

    def __init__(self, result):
        self.result = result

    def run(self, path, text):
        return self.result

    def cancel(self, path):
        pass

    def cancel_all(self):
        pass


@pytest.mark.slow
def test_gemm_tn_of_sgemm_sm80_resolves_through_main(toolchain, kept_path):
    path = kept_path / "sgemm_sm80.cu"  # a kept folder: its probe build is cached from one run to the next
    shutil.copy(sgemm_sm80(), path)
    text = path.read_text()
    result = LayoutProbe(toolchain, Settings(), kept_path / ".cutegen").run(path)
    host = line_of(text, "gemm_tn(int m")
    (sa,) = result.at(line_of(text, "auto sA = tile_to_shape", after=host))
    assert sa.layout == "Sw<3,3,3> o _0 o ((_8,_16),((_8,_8),_1),(_1,_3)):((_8,_512),((_1,_64),_0),(_0,_8192))"
    # its type depends on neither Alpha nor Beta: EDG names it once, and the one instantiation is named
    assert sa.instantiation is None and sa.shown_as([sa]) == "in gemm_tn<half_t, half_t> (1 of 1)"
    (mma,) = result.at(line_of(text, "TiledMMA mmaC", after=host))
    assert mma.kind == "TiledMMA" and "SM80_16x8x16_F16F16F16F16_TN" in mma.layout
    # the kernel's smem tensor has the layout gemm_tn made and passed it
    (kernel_sa,) = result.at(line_of(text, "Tensor sA = make_tensor"))
    assert kernel_sa.layout == f"smem half_t {sa.layout}" and kernel_sa.template.startswith("gemm_device<")
    # the generic gemm_tn<TA, TB, ...> loses overload resolution to the half_t one: nothing instantiates it
    generic = line_of(text, "gemm_tn(int m", after=host)
    unreached = line_of(text, "auto sA = tile_to_shape", after=generic)
    assert result.at(unreached) == []
    assert "no call in this file instantiates" in nothing_at(text, unreached)
