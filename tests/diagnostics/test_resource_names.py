"""Resource lines read as a person reads a kernel's name: demangled (CUTLASS's device_kernel names defeat GNU
c++filt), namespaces and defaulted `void` arguments dropped, the outer template levels first and deeper ones
folded into `<…>` within one line. From a real ptxas -v log of the persistent ping-pong GEMM idiom."""

from __future__ import annotations

import shutil

from cutegen.diagnostics.resources import demangle, kernel_instantiation, parse_ptxas_verbose, short_kernel_name
from tests.support.paths import CORPUS

LOG = (CORPUS / "logs" / "cutlass_gemm_pingpong.ptxas.log").read_text()


def _readable():
    (kernel,) = parse_ptxas_verbose(LOG)
    assert len(kernel.mangled) > 1200 and kernel.registers == 168
    return kernel, demangle([kernel.mangled], shutil.which("c++filt"))[kernel.mangled]


def test_a_cutlass_kernel_name_is_demangled_even_where_gnu_cxxfilt_gives_up():
    _, readable = _readable()
    assert readable.startswith("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<")
    assert "_ZN" not in readable


def test_its_resource_line_is_short_and_says_what_the_kernel_is():
    kernel, readable = _readable()
    kernel.name, kernel.instantiation = short_kernel_name(readable), kernel_instantiation(readable)
    assert kernel.name == "device_kernel"
    line = kernel.summary()
    assert line == ("device_kernel<GemmUniversal<(int,int,int,int), CollectiveMma<…>, CollectiveEpilogue<…>, "
                    "PersistentScheduler>>: 168 registers, 0 B static smem"), line


def test_short_names_stay_whole():
    assert kernel_instantiation("void ns::elementwise_kernel<float, 512>(const float *, float *, int)") == \
        "elementwise_kernel<float, 512>"
    assert kernel_instantiation("void k<(cute::SM90::GMMA::Major)0, 4>(float *)") == "k<0, 4>"
    assert short_kernel_name("void k<(cute::SM90::GMMA::Major)0, 4>(float *)") == "k"
    wide = "void ns::wide<" + ", ".join(f"ns::Tag{i}<float, ns::Inner<int, {i}>>" for i in range(12)) + ">(int)"
    text = kernel_instantiation(wide)
    assert text == "wide<" + ", ".join(f"Tag{i}<…>" for i in range(12)) + ">"  # every argument named, then their own
    narrow = kernel_instantiation(wide, limit=60)
    assert len(narrow) <= 60 and narrow.startswith("wide<Tag0<") and narrow.endswith(", Tag4<…>, …>"), narrow
