"""nvcc on model-written text runs in the jail: a secret planted in HOME cannot be pulled in at compile time
(into an error message the model would read), and the candidate builders the agent uses are the jailed ones."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from cutegen.agent.candidates import Verifier
from cutegen.build import Builder, Tier
from cutegen.settings import Settings


@pytest.fixture
def builder(toolchain, tmp_path):
    return Builder(toolchain, Settings(), tmp_path / ".cutegen")


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


def test_candidate_check_and_build_use_jailed_builders(jail, builder, tmp_path):
    verifier = Verifier(builder, None, state_dir=tmp_path / ".cutegen", gpu=False)
    kernel = tmp_path / "k.cu"
    _, shadow_builder = verifier.shadow(kernel, "__global__ void k() {}\n")
    assert shadow_builder.jail is not None and verifier._check_builder().jail is not None
    assert builder.jail is None  # the user's own builder (the LSP's) is never jailed


def test_sandbox_off_leaves_candidate_builds_unjailed(toolchain, tmp_path):
    builder = Builder(toolchain, Settings(sandbox="off"), tmp_path / ".cutegen")
    verifier = Verifier(builder, None, state_dir=tmp_path / ".cutegen", gpu=False)
    assert verifier.shadow(tmp_path / "k.cu", "")[1].jail is None and verifier._check_builder() is builder
