"""The probe's layouts equal what `cute::print` prints for the same objects in a host program.

One probe build and one host program cover every case (module-scoped): `exact_cases.cu` declares the
objects (in a function template instantiated for N=4 and N=8) and prints each one after its declaration.
Where the probe knows only a type (`int` for a runtime extent or stride), the printed value must be an
integer at that place; every static extent and stride must be equal.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cutegen.layouts.probe import LayoutProbe
from cutegen.settings import Settings
from tests.support.host_program import HostProgram

pytestmark = pytest.mark.slow

CASES = Path(__file__).with_name("exact_cases.cu")
_DYNAMIC = {"int", "long", "unsigned int", "long long", "unsigned long", "int64_t", "int32_t"}


@pytest.fixture(scope="module")
def outputs(toolchain, build_state):
    """(probe result, {(instantiation, name): printed}) — the host build (on a cache miss) runs while the probe
    does; both are kept in the shared test build cache (the probe's by this file's path and text)."""
    host = HostProgram(toolchain, CASES, build_state)
    result = LayoutProbe(toolchain, Settings(), build_state / "layout-exact").run(CASES)
    printed = host.printed()
    return result, printed


def matches(probed: str, printed: str) -> bool:
    """Equal token by token, except that a dynamic type in the probe stands for any integer."""
    tokenize = re.compile(r"unsigned int|long long|unsigned long|\w+|[^\w\s]")
    a, b = tokenize.findall(probed), tokenize.findall(printed)
    return len(a) == len(b) and all(x == y or (x in _DYNAMIC and re.fullmatch(r"-?\d+", y)) for x, y in zip(a, b))


def _facts(result, name: str):
    facts = [f for f in result.facts if f.name == name]
    assert facts, f"the probe found no CuTe object named {name} ({result.problem or 'no problem reported'})"
    return facts


def _check(result, printed, name: str, split_tensor: bool = False) -> None:
    for fact in _facts(result, name):
        for instantiation in ([fact.instantiation] if fact.instantiation else ["N=4", "N=8"]):
            value = printed[(instantiation, name)]
            probed = fact.layout
            if split_tensor:
                value, pointer = value.split(" @ ")
                space, element, probed = fact.layout.split(" ", 2)
                assert pointer.startswith({"gmem": "gmem_ptr", "smem": "smem_ptr", "rmem": "ptr"}[space]), (fact, pointer)
                bits = {"float": 32, "half_t": 16}[element]
                assert f"[{bits}b]" in pointer, (fact, pointer)
            assert matches(probed, value), f"{name} [{instantiation}]: probe {probed!r}, cute::print {value!r}"


@pytest.mark.parametrize("name", ["left", "right", "right_dyn", "ldiv", "zdiv", "sw", "sw_tile"])
def test_layouts_equal_cute_print(outputs, name):
    _check(*outputs, name)


@pytest.mark.parametrize("name", ["mA", "gA", "tA", "tSgA", "sA", "tDsA", "tCgC", "tCrC"])
def test_tensors_equal_cute_print(outputs, name):
    """local_tile, local_partition, partition_S of a TiledCopy, partition_C of a TiledMMA, a swizzled smem tensor."""
    _check(*outputs, name, split_tensor=True)


def test_coordinate_tensor_equals_cute_print(outputs):
    """A tile of an identity tensor: strides are basis elements (_1@0), as cute::print writes them."""
    result, printed = outputs
    for fact in _facts(result, "cA"):
        value, origin = printed[(fact.instantiation, "cA")].split(" @ ")
        space, layout = fact.layout.split(" ", 1)
        assert space == "coord" and origin.startswith("ArithTuple")
        assert matches(layout, value), (layout, value)


def test_tiled_copy_tv_layout_equals_cute_print(outputs):
    result, printed = outputs
    (fact,) = _facts(result, "copy")
    tv = re.search(r"TV=(\S+)", fact.layout).group(1)
    assert fact.kind == "TiledCopy"
    assert matches(tv, printed[("N=4", "copy")]), (tv, printed[("N=4", "copy")])


def test_one_fact_per_instantiation(outputs):
    result, _ = outputs
    assert [f.instantiation for f in result.facts if f.name == "left"] == ["N=4", "N=8"]
    assert [f.layout for f in result.facts if f.name == "left"] == ["(_4,_8):(_1,_4)", "(_8,_8):(_1,_8)"]
    (sa,) = [f for f in result.facts if f.name == "sA"]  # not dependent on N: reported once
    assert sa.instantiation is None and sa.kind == "Tensor"
    assert result.problem is None


def test_kinds(outputs):
    result, _ = outputs
    kinds = {f.name: f.kind for f in result.facts}
    assert kinds["sw"] == "ComposedLayout" and kinds["left"] == "Layout" and kinds["mma"] == "TiledMMA"
    assert kinds["thr_copy"] == "ThrCopy" and kinds["Sw333"] == "ComposedLayout"


def test_matches_rule():
    assert matches("(int,_8):(_8,_1)", "(100,_8):(_8,_1)")
    assert not matches("(_4,_8):(_8,_1)", "(100,_8):(_8,_1)")
    assert not matches("(int,_8):(_8,_1)", "(_4,_8):(_8,_1)")


@pytest.mark.parametrize("name", ["left", "ldiv", "sw", "sw_tile", "copy"])
def test_pictures_evaluate_layouts_as_cute_does(outputs, name):
    """The offsets the SVG pictures draw equal `layout(i)` on the host for every index i."""
    from cutegen.layouts.pictures import evaluate

    result, printed = outputs
    for fact in _facts(result, name):
        text = re.search(r"TV=(\S+)", fact.layout).group(1) if fact.kind == "TiledCopy" else fact.layout
        layout = evaluate(text)
        expected = [int(v) for v in printed[(fact.instantiation or "N=4", f"{name}.offsets")].split()]
        assert [layout(i) for i in range(layout.size)] == expected


def test_tiled_mma_picture_is_cutlass_print_svg(outputs, toolchain, build_state):
    """The TiledMMA's picture comes from CUTLASS's own print_svg, compiled for the type the probe reported."""
    from cutegen.layouts.pictures import picture

    result, _ = outputs
    (mma,) = _facts(result, "mma")
    svg = picture(mma, toolchain.nvcc, toolchain.cutlass_include, build_state / "layout-pictures")
    assert "<svg" in svg and ">T0<" in svg and ">V0<" in svg
    # 4 warps of the 16x8x16 atom: thread ids up to 127 appear
    assert ">T127<" in svg
