"""The session owns the layout probes (one per state dir, on that dir's Builder): a settings change gives a probe
that compiles with the new flags. Before, the editor cached probes by `id(builder)`: a new Builder at a reused
address was served the old probe, and the hints kept the layouts of the old flags."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from cutegen.session import Session
from cutegen.settings import Settings

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")]

KERNEL = """#include <cute/tensor.hpp>
using namespace cute;
#ifndef TILE
#define TILE 4
#endif
__global__ void k(float* x) {
  auto tile = make_layout(make_shape(Int<TILE>{}, _2{}));
  x[threadIdx.x] = size(tile);
}
"""


def test_a_settings_change_gives_a_fresh_probe_compiled_with_the_new_flags(tmp_path):
    kernel = tmp_path / "tile.cu"
    kernel.write_text(KERNEL)
    session = Session(Settings(), state_dir=tmp_path / ".cutegen")
    probe = session.layout_probe(kernel)
    assert session.layout_probe(kernel) is probe  # kept: a newer version of the file kills the older probe
    assert [f.layout for f in probe.run(kernel).facts] == ["(_4,_2):(_1,_4)"]

    assert session.apply(dataclasses.replace(session.settings, extra_flags=["-DTILE=8"]))
    fresh = session.layout_probe(kernel)
    assert fresh is not probe
    assert [f.layout for f in fresh.run(kernel).facts] == ["(_8,_2):(_1,_8)"]
    assert session.layout_probe(kernel) is fresh
