"""A project's own build configuration: compile_commands.json found as clangd finds it, translated to our flags, and
what a user sees of it (a tutorial that checks clean with nothing configured, a bad entry named, headers checked
through the file that includes them). Real JSON files, real nvcc."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cutegen.compile import Builder, Tier
from cutegen.compile import compile_commands as cc
from cutegen.compile.configuration import configure
from cutegen.settings import Settings
from cutegen.toolchain import _wheel_include, util_include


def database(folder: Path, *entries: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / cc.NAME
    path.write_text(json.dumps(list(entries)))
    return path


def cmake_entry(build: Path, source: Path, *flags: str) -> dict:
    """An entry as CMake writes it: a command string, relative output, the target's -gencode."""
    command = ["/usr/local/bin/nvcc", "-forward-unknown-to-host-compiler", *flags, "-O3", "-DNDEBUG",
               '"--generate-code=arch=compute_80,code=[compute_80,sm_80]"', "-x", "cu", "-c", str(source),
               "-o", f"CMakeFiles/k.dir/{source.name}.o"]
    return {"directory": str(build), "command": " ".join(command), "file": str(source)}


# -- reading and translating ------------------------------------------------------------------------------------

def test_a_cmake_entry_keeps_includes_in_order_macros_std_and_switches(tmp_path):
    build = tmp_path / "build"
    source = tmp_path / "src" / "k.cu"
    db = database(build, cmake_entry(build, source, "-I../include", "-isystem", "/opt/x/include", "-Ithird/cutlass",
                                     "-DUSE_FAST=1", "-UNDEBUG", "-std=c++20", "--expt-relaxed-constexpr",
                                     "--extended-lambda", "-Xcompiler=-fPIC", "-lineinfo"))
    t = cc.translate(cc.entry_for(db, source))
    assert t.includes == (("-I", str(tmp_path / "include")), ("-isystem", "/opt/x/include"),
                          ("-I", str(build / "third" / "cutlass")))
    assert t.macros == ("-DUSE_FAST=1", "-UNDEBUG", "-DNDEBUG")
    assert t.std == "-std=c++20"
    assert t.switches == ("--expt-relaxed-constexpr", "--expt-extended-lambda")
    assert t.dropped == ()


def test_flags_that_start_programs_are_dropped_and_named(tmp_path):
    source = tmp_path / "k.cu"
    db = database(tmp_path, {"directory": str(tmp_path), "file": "k.cu", "arguments": [
        "nvcc", "-ccbin", "/usr/bin/evil", "-Xcompiler", "-wrapper,/tmp/run.sh", "-Iinc", "-c", "k.cu"]})
    t = cc.translate(cc.entry_for(db, source))
    assert t.includes == (("-I", str(tmp_path / "inc")),)
    assert [d.split(" (")[0] for d in t.dropped] == ["-ccbin /usr/bin/evil", "-Xcompiler -wrapper,/tmp/run.sh"]


def test_found_upward_in_a_build_folder_or_where_the_setting_says(tmp_path):
    source = tmp_path / "repo" / "src" / "deep" / "k.cu"
    source.parent.mkdir(parents=True)
    assert cc.find(source, [tmp_path / "repo"]) is None
    beside = database(tmp_path / "repo" / "build-release", {"directory": ".", "file": "x.cu", "command": "nvcc"})
    assert cc.find(source, [tmp_path / "repo"]) == beside
    nearer = database(tmp_path / "repo" / "src" / "build", {"directory": ".", "file": "x.cu", "command": "nvcc"})
    assert cc.find(source, [tmp_path / "repo"]) == nearer
    assert cc.find(source, [], setting=str(beside.parent)) == beside
    with pytest.raises(cc.CompileCommandsError, match="nowhere.*compileCommandsDir"):
        cc.find(source, [], setting=str(tmp_path / "nowhere"))


def test_a_malformed_database_is_a_warning_naming_the_file(tmp_path, toolchain):
    source = tmp_path / "k.cu"
    (tmp_path / cc.NAME).write_text('[{"directory": "/x", "file": "k.cu", "command": "nvcc -c k.cu"},')
    flags = configure(source, toolchain, Settings(), [tmp_path])
    assert flags.problems and str(tmp_path / cc.NAME) in flags.problems[0] and "not valid JSON" in flags.problems[0]
    assert flags.database is None and flags.source.startswith("defaults")


def test_defaults_put_the_wheels_util_headers_after_cutlass(tmp_path, toolchain):
    flags = configure(tmp_path / "k.cu", toolchain, Settings(), [tmp_path])
    folders = [d for _, d in flags.includes]
    assert folders[0] == toolchain.cutlass_include
    assert folders[-1] == str(util_include(Path(toolchain.cutlass_include)))
    assert "nvidia-cutlass wheel" in flags.describe() and "no compile_commands.json" in flags.describe()


# -- what a user sees, with real nvcc ---------------------------------------------------------------------------

def project_builder(toolchain, root: Path, **settings) -> Builder:
    return Builder(toolchain, Settings(check_timeout=600, **settings), root / ".cutegen")


def test_a_cute_tutorial_checks_clean_with_nothing_configured(tmp_path, toolchain):
    """CUTLASS's tiled_copy.cu includes cutlass/util/print_error.hpp, from tools/util/include beside the wheel's
    include/: on the default path, no compile_commands.json, no setting."""
    wheel = _wheel_include()
    tutorial = shutil.copy(wheel.parent / "examples" / "cute" / "tutorial" / "tiled_copy.cu", tmp_path)
    result = project_builder(toolchain, tmp_path).run(Tier.CHECK, tutorial)
    assert result.ok, [d.message for d in result.errors]
    assert "print_error.hpp" not in result.raw_log


def test_the_projects_macros_includes_and_own_cutlass_are_used(tmp_path, toolchain):
    """A project's CUTLASS (an -I holding cute/tensor.hpp) wins over the wheel's, and -v says so."""
    cutlass = tmp_path / "third_party" / "cutlass" / "include"
    (cutlass / "cute").mkdir(parents=True)
    (cutlass / "cute" / "tensor.hpp").write_text("#pragma once\n#define PROJECT_CUTE 1\n")
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "tile.cuh").write_text("#pragma once\nconstexpr int kTile = TILE;\n")
    source = tmp_path / "src" / "k.cu"
    source.parent.mkdir()
    source.write_text("#include <cute/tensor.hpp>\n#include <tile.cuh>\n#ifndef PROJECT_CUTE\n"
                      "#error not the project's CuTe\n#endif\n__global__ void k(int* p) { p[0] = kTile; }\n")
    build = tmp_path / "build"
    database(build, cmake_entry(build, source, "-I../third_party/cutlass/include", "-I../include", "-DTILE=64"))
    builder = project_builder(toolchain, tmp_path)
    result = builder.run(Tier.CHECK, source)
    assert result.ok, result.raw_log
    assert "from the project's compile_commands.json" in result.configuration
    assert str(build / cc.NAME) in result.configuration
    assert str(cutlass) in " ".join(result.command) and toolchain.cutlass_include not in " ".join(result.command)
    assert "sm_80" not in " ".join(result.command)  # the project's target replaced by ours


def test_a_wrong_flag_in_compile_commands_names_the_file(tmp_path, toolchain):
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(int* p) { p[0] = 1; }\n")
    database(tmp_path, cmake_entry(tmp_path, source, "-std=c++98"))
    result = project_builder(toolchain, tmp_path).run(Tier.CHECK, source)
    assert not result.ok
    message = result.errors[0].message
    assert "c++98" in message and str(tmp_path / cc.NAME) in message


def test_a_header_is_checked_through_the_file_that_includes_it(tmp_path, toolchain):
    header = tmp_path / "include" / "tile.cuh"
    header.parent.mkdir()
    header.write_text("#pragma once\n__device__ inline int tile(int i) {\n  return i * kMissing;\n}\n")
    source = tmp_path / "src" / "k.cu"
    source.parent.mkdir()
    source.write_text('#include "tile.cuh"\n__global__ void k(int* p) { p[0] = tile(3); }\n')
    database(tmp_path / "build", cmake_entry(tmp_path / "build", source, "-I../include"))
    result = project_builder(toolchain, tmp_path).run(Tier.CHECK, header)
    assert [(Path(d.file).name, d.line) for d in result.errors] == [("tile.cuh", 3)]
    assert "kMissing" in result.errors[0].message
    assert "checked through k.cu" in result.configuration


def test_a_header_without_an_entry_goes_through_the_last_file_that_included_it(tmp_path, toolchain):
    header = tmp_path / "tile.cuh"
    header.write_text("#pragma once\n__device__ inline int tile(int i) { return i * 2; }\n")
    source = tmp_path / "k.cu"
    source.write_text('#include "tile.cuh"\n__global__ void k(int* p) { p[0] = tile(3); }\n')
    builder = project_builder(toolchain, tmp_path)
    assert builder.run(Tier.CHECK, source).ok
    header.write_text("#pragma once\n__device__ inline int tile(int i) { return i * undeclared; }\n")
    result = builder.run(Tier.CHECK, header)
    assert [(Path(d.file).name, d.line) for d in result.errors] == [("tile.cuh", 2)]
