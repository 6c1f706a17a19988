"""nvcc on model-written text runs in the jail: a secret planted in HOME cannot be pulled in at compile time
(into an error message the model would read), and the candidate builders the agent uses are the jailed ones."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from cutegen.compile import Tier
from cutegen.settings import Settings


@pytest.fixture
def session(make_session, tmp_path):
    return make_session(Settings(), state_dir=tmp_path / ".cutegen")


@pytest.fixture
def builder(session, tmp_path):
    """The user's own Builder (the one the editor checks and builds with)."""
    return session.builder(tmp_path / "k.cu")


def _verifier(session, kernel):
    """The agent's judge of candidates, as the editor's agent gets it (never on the GPU here)."""
    return session.agent(kernel, gpu=False).verifier


def test_a_jailed_compile_cannot_include_a_file_from_home(jail, builder, tmp_path):
    secret = f"SECRET_{uuid.uuid4().hex}"
    planted = Path.home() / f".cutegen-escape-{uuid.uuid4().hex}.h"
    planted.write_text(f"{secret} = 1;\n")
    kernel = tmp_path / "leak.cu"
    kernel.write_text(f'#include "{planted}"\n__global__ void k() {{}}\n')
    builder.jail = jail
    try:
        result = builder.run(Tier.CHECK, kernel)
    finally:
        planted.unlink()
    assert not result.ok and secret not in result.raw_log
    assert "cannot open source file" in result.raw_log or "No such file" in result.raw_log, result.raw_log[-400:]


def test_candidate_check_and_build_use_jailed_builders(jail, session, builder, tmp_path):
    kernel = tmp_path / "k.cu"
    verifier = _verifier(session, kernel)
    _, shadow_builder = verifier.shadow(kernel, "__global__ void k() {}\n")
    assert shadow_builder.jail is not None and verifier.check_builder(kernel).jail is not None
    assert builder.jail is None  # the user's own builder (the LSP's) is never jailed


def test_sandbox_off_leaves_candidate_builds_unjailed(make_session, tmp_path):
    session = make_session(Settings(sandbox="off"), state_dir=tmp_path / ".cutegen")
    kernel = tmp_path / "k.cu"
    builder, verifier = session.builder(kernel), _verifier(session, kernel)
    assert verifier.shadow(kernel, "")[1].jail is None and verifier.check_builder(kernel) is builder


def test_a_candidate_compile_sees_only_the_kernel_and_the_headers_its_version_includes(jail, session, tmp_path):
    """The kernel's folder holds a secret and a header the user's version does not include: neither is
    visible to the jailed check or build of a candidate (even one the gate would not have let through);
    the header the user's version includes is."""
    secret = f"SECRET_{uuid.uuid4().hex}"
    (tmp_path / ".env").write_text(f"{secret} = 1;\n")
    (tmp_path / "other.cuh").write_text(f"int {secret}_other = 1;\n")
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "tile.cuh").write_text("constexpr int kTile = 128;\n")
    kernel = tmp_path / "k.cu"
    original = '#include "common/tile.cuh"\n__global__ void k(float* y) { y[0] = kTile; }\n'
    kernel.write_text(original)
    verifier = _verifier(session, kernel)
    checker = verifier.check_builder(kernel)
    assert checker.run(Tier.CHECK, kernel, original.replace("y[0]", "y[1]")).ok
    for include in ('#include ".env"', '#include "other.cuh"', f'#include "{tmp_path}/.env"'):
        result = checker.run(Tier.CHECK, kernel, f"{include}\n{original}")
        assert not result.ok and secret not in result.raw_log, result.raw_log[-600:]
        assert re.search(r"cannot open source file|No such file or directory", result.raw_log), result.raw_log[-600:]
    shadow, shadow_builder = verifier.shadow(kernel, f'#include ".env"\n{original}')
    built = shadow_builder.run(Tier.BUILD, shadow)
    assert not built.ok and secret not in built.raw_log and "No such file" in built.raw_log, built.raw_log[-600:]


def test_a_candidate_is_built_with_its_kernels_compile_commands_flags(jail, session, tmp_path):
    """The shadow copy of a candidate gets the kernel's own entry (a -D, an -isystem folder, mounted read-only in
    the jail), not the defaults its path under .cutegen/shadow/ would find."""
    import json

    vendor = tmp_path / "vendor"
    vendor.mkdir()
    (vendor / "tiles.h").write_text("#pragma once\nconstexpr int kTile = TILE;\n")
    kernel = tmp_path / "src" / "k.cu"
    kernel.parent.mkdir()
    text = "#include <tiles.h>\n__global__ void k(int* p) { p[0] = kTile; }\n"
    kernel.write_text(text)
    entry = {"directory": str(tmp_path), "file": str(kernel),
             "arguments": ["nvcc", "-isystem", "vendor", "-DTILE=64", "-c", str(kernel), "-o", "k.o"]}
    (tmp_path / "compile_commands.json").write_text(json.dumps([entry]))
    verifier = _verifier(session, kernel)
    shadow, shadow_builder = verifier.shadow(kernel, text)
    assert shadow_builder.jail is not None
    result = shadow_builder.run(Tier.CHECK, shadow)
    assert result.ok, result.raw_log[-600:]
    assert "the entry for k.cu" in result.configuration
