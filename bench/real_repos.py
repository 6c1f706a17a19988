"""`cutegen check` on repositories nobody here wrote, configured by nothing but their own compile_commands.json.

For each `.cu` that has an entry in the repository's compile_commands.json: false errors (cutegen's errors on a file
the project's own nvcc command compiles), the wall time of `cutegen check FILE` (the CLI as a user runs it, a fresh
state dir each time: no cache) against the project's own command (its entry, run in its directory with `-o` into a
temporary folder), interleaved, and one injected bug (a use of a declared variable misspelled inside a kernel,
passed as unsaved text through the engine as the editor does) located at its line or not.

    python bench/real_repos.py CLONE [--files GLOB] [--reps 3] [--out results.json]
    python bench/real_repos.py --tutorials DEST  # CUTLASS's CuTe tutorials from the nvidia-cutlass wheel, laid out
                                                 # as the repository is, with a compile_commands.json as CMake writes it
    python bench/real_repos.py CLONE --make tma:main.o --make evt:evt_gemm_cute  # a Makefile project without one:
        # compile_commands.json written from `make -n` in each folder for each target (what compiledb does)
    python bench/real_repos.py --cutlass DEST --examples 48,49,50,54,55  # CUTLASS's Hopper examples: DEST cloned at
        # the pinned commit (or an existing clone), configured by its own CMake (CUTLASS_NVCC_ARCHS=90a) with
        # cuRAND's headers from the nvidia-curand wheel; nothing built
    python bench/real_repos.py --project flashmla DEST   # a further CuTe project (PROJECTS): cloned at its pinned
        # commit with its CUTLASS submodule, compile_commands.json written as its setup.py's torch extension runs nvcc

Per file, besides the check: the type tier after an edit (the Session's TypeChecker, in this process: the file
opened cold, its background work awaited, then an edit's first pass and full parse), and the layout lens
(Session.layout_probe) on five chosen lines: the first five declarations of CuTe objects in the file (or in the
header the kernel is in).

Nothing is vendored: CLONE is an existing clone (with its compile_commands.json, from CMake or `bear`); `--cutlass`
and `--project` clone from SOURCE (`--source`, default the repository on GitHub; a local mirror works the same).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "server")]

CUTEGEN = [sys.executable, "-m", "cutegen"]
TUTORIALS = ("examples/cute/tutorial", "examples/cute/tutorial/hopper")
# CUTLASS's CMake (v4.2.0, CUTLASS_NVCC_ARCHS=90a) for an example: its include folders, defines and flags.
CMAKE_FLAGS = ["-DCUTLASS_ENABLE_TENSOR_CORE_MMA=1", "-DCUTLASS_VERSIONS_GENERATED", "-I{src}/include",
               "-I{src}/tools/util/include", "-I{src}/examples/common", "-O3", "-DNDEBUG", "-std=c++17",
               "--generate-code=arch=compute_90a,code=[sm_90a]", "-Xcompiler=-fPIE", "--expt-relaxed-constexpr",
               "-DCUTE_USE_PACKED_TUPLE=1", "-DCUTLASS_TEST_LEVEL=0", "-DCUTLASS_DEBUG_TRACE_LEVEL=0", "-x", "cu"]


def tutorials(dest: Path) -> Path:
    """The wheel's CUTLASS sources copied into `dest` as the repository lays them out, with the
    compile_commands.json CMake writes in `dest/build` (no symlinks: a file resolves into the copy)."""
    import importlib.util

    spec = importlib.util.find_spec("cutlass_library")
    source = Path(list(spec.submodule_search_locations)[0]) / "source"
    for part in ("include", "tools/util/include", "examples/common", *TUTORIALS):
        if not (dest / part).exists():
            shutil.copytree(source / part, dest / part, dirs_exist_ok=True)
    build = dest / "build"
    build.mkdir(exist_ok=True)
    nvcc = shutil.which("nvcc") or "nvcc"
    entries = []
    for folder in TUTORIALS:
        for cu in sorted((dest / folder).glob("*.cu")):
            obj = f"examples/cute/tutorial/CMakeFiles/{cu.stem}.dir/{cu.name}.o"
            argv = [nvcc, *(f.format(src=dest) for f in CMAKE_FLAGS), "-c", str(cu), "-o", obj]
            entries.append({"directory": str(build), "command": " ".join(argv), "file": str(cu), "output": obj})
    (build / "compile_commands.json").write_text(json.dumps(entries, indent=1))
    return dest


def from_make(repo: Path, targets: list[str]) -> Path:
    """A compile_commands.json at the clone's root from `make -n -B TARGET` in each FOLDER:TARGET (the nvcc
    commands that compile a .cu), nothing else guessed."""
    import shlex

    entries = []
    for spec in targets:
        folder, _, target = spec.partition(":")
        where = (repo / folder).resolve()
        dry = subprocess.run(["make", "-n", "-B", target], cwd=where, capture_output=True, text=True, check=True,
                             env={**os.environ, "PWD": str(where)})  # Makefiles read $(PWD): as a shell in `where`
        for line in dry.stdout.splitlines():
            argv = shlex.split(line)
            sources = [a for a in argv[1:] if a.endswith(".cu")]
            if argv and Path(argv[0]).name == "nvcc" and sources:
                entries.append({"directory": str(where), "arguments": argv, "file": str(where / sources[0])})
    (repo / "compile_commands.json").write_text(json.dumps(entries, indent=1))
    return repo


# Pinned commits (a repository's HEAD when measured) and the CUTLASS its submodule pins.
CUTLASS_COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"  # 4.7.0
HOPPER_EXAMPLES = (48, 49, 50, 54, 55)


@dataclass(frozen=True)
class Project:
    """A CuTe project built as a torch extension by its setup.py: its nvcc flags and include folders as setup.py
    passes them (with the environment named), the files measured, and its CUTLASS submodule's commit."""

    repo: str
    commit: str
    cutlass: str  # the submodule's path and commit
    cutlass_commit: str
    files: tuple[str, ...]
    include_dirs: tuple[str, ...]
    nvcc_flags: tuple[str, ...]
    extension: str


PROJECTS = {
    # setup.py at this commit, with FLASH_MLA_DISABLE_SM100=1 (Hopper only) and NVCC_THREADS unset (32).
    "flashmla": Project(
        "deepseek-ai/FlashMLA", "9241ae3ef9bac614dd25e45e507e089f888280e0",
        "csrc/cutlass", "147f5673d0c1c3dcf66f78d677fd647e4a020219",
        ("csrc/smxx/decode/combine/combine.cu",),  # its sm90 decode/prefill kernels: not measured (time)
        ("csrc", "csrc/kerutils/include", "csrc/sm90", "csrc/cutlass/include", "csrc/cutlass/tools/util/include"),
        ("-O3", "-std=c++20", "-DNDEBUG", "-D_USE_MATH_DEFINES", "-Wno-deprecated-declarations",
         "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__",
         "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "--expt-relaxed-constexpr", "--expt-extended-lambda", "--use_fast_math",
         "--ptxas-options=-v,--register-usage-level=10,--warn-on-spills,--warn-on-local-memory-usage,"
         "--warn-on-double-precision-use", "-lineinfo", "--source-in-ptx", "-gencode", "arch=compute_90a,code=sm_90a",
         "--threads", "32"),
        "cuda"),
    # hopper/setup.py at this commit, default features, NVCC_THREADS unset (2); the folder is hopper/.
    "fa3": Project(
        "Dao-AILab/flash-attention", "0251105a2fb19d2957484b7f023cd8c115286ced",
        "csrc/cutlass", "7127592069c2fe01b041e174ba4345ef9b279671",
        ("hopper/flash_fwd_combine.cu",),
        ("hopper", "csrc/cutlass/include"),
        ("--threads", "2", "-O3", "-std=c++17", "--ftemplate-backtrace-limit=0", "--use_fast_math",
         "--resource-usage", "-lineinfo", "-DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED", "-DCUTLASS_ENABLE_GDC_FOR_SM90",
         "-DCUTLASS_DEBUG_TRACE_LEVEL=0", "-DNDEBUG", "-gencode", "arch=compute_90a,code=sm_90a"),
        "flash_attn_3._C"),
}


def clone(source: str, commit: str, dest: Path) -> Path:
    """`dest` as a clone of `source` at `commit` (an existing clone is checked out there, nothing fetched).
    Large binary files a mirror lacks (images, PDFs) may fail to check out: the sources do not need them."""
    if not (dest / ".git").exists():
        subprocess.run(["git", "clone", "-q", "--no-checkout", source, str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", commit], capture_output=True)
    if commit_of(dest) != commit:
        raise SystemExit(f"{dest}: could not check out {commit}")
    return dest


def curand_include(scratch: Path) -> Path:
    """cuRAND's headers (CUTLASS's examples include them; this CUDA toolkit lacks them) from the nvidia-curand
    wheel, unpacked into `scratch`."""
    import zipfile

    found = sorted(scratch.glob("nvidia/*/include/curand_kernel.h"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "nvidia-curand", "-d",
                        str(scratch)], check=True)
        with zipfile.ZipFile(next(scratch.glob("nvidia_curand-*.whl"))) as wheel:
            wheel.extractall(scratch, [n for n in wheel.namelist() if "/include/" in n])
        found = sorted(scratch.glob("nvidia/*/include/curand_kernel.h"))
    return found[-1].parent


def cutlass_examples(dest: Path, source: str, numbers: list[int]) -> tuple[Path, list[Path]]:
    """CUTLASS cloned at CUTLASS_COMMIT and configured by its own CMake (configure only, compile_commands.json
    exported) for sm_90a, cuRAND's headers on the CUDA include path; the numbered examples' own .cu files."""
    repo = clone(source, CUTLASS_COMMIT, dest)
    build = repo / "build"
    if not (build / "compile_commands.json").is_file():
        cmake = shutil.which("cmake") or "cmake"
        nvcc = os.path.realpath(shutil.which("nvcc") or "nvcc")
        subprocess.run([cmake, "-S", str(repo), "-B", str(build), "-DCUTLASS_NVCC_ARCHS=90a",
                        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", "-DCUTLASS_ENABLE_LIBRARY=OFF",
                        "-DCUTLASS_ENABLE_TESTS=OFF", "-DCUTLASS_ENABLE_PROFILER=OFF",
                        f"-DCMAKE_CUDA_COMPILER={nvcc}",
                        f"-DCMAKE_CUDA_FLAGS=-isystem {curand_include(build.parent / '.curand')}"],
                       check=True, capture_output=True)
    # Each example's own .cu: the one named as its folder, else its first (55's int4 variants are left out).
    folders = [folder for n in numbers for folder in sorted((repo / "examples").glob(f"{n}_*"))]
    own = [(folder / f"{folder.name}.cu", sorted(folder.glob("*.cu"))) for folder in folders]
    files = [named if named.is_file() else found[0] for named, found in own if found]
    return repo, files


def torch_project(name: str, dest: Path, source: str) -> tuple[Path, list[Path]]:
    """A project of PROJECTS cloned at its commit with its CUTLASS submodule (cloned from the NVIDIA/cutlass
    source), and a compile_commands.json at its root holding the nvcc command torch's BuildExtension runs for each
    measured file: its include folders, torch's, CUDA's, then torch's COMMON_NVCC_FLAGS, -fPIC and setup.py's
    flags (torch adds no -gencode of its own when setup.py passes one)."""
    import torch.utils.cpp_extension as ext

    project = PROJECTS[name]
    repo = clone(source, project.commit, dest)
    cutlass_source = source.replace(project.repo.replace("/", "+"), "NVIDIA+cutlass").replace(project.repo,
                                                                                           "NVIDIA/cutlass")
    clone(cutlass_source, project.cutlass_commit, repo / project.cutlass)
    nvcc = shutil.which("nvcc") or "nvcc"
    cuda = Path(os.path.realpath(nvcc)).parent.parent / "include"
    includes = [f"-I{repo / d}" for d in project.include_dirs] + [f"-I{d}" for d in (*ext.include_paths(), cuda)]
    entries = []
    for rel in project.files:
        obj = repo / "build" / f"{rel}.o"
        obj.parent.mkdir(parents=True, exist_ok=True)
        argv = [nvcc, "--generate-dependencies-with-compile", "--dependency-output", f"{obj}.d", *includes, "-c",
                str(repo / rel), "-o", str(obj), *ext.COMMON_NVCC_FLAGS, "--compiler-options", "-fPIC",
                *project.nvcc_flags, "-DTORCH_API_INCLUDE_EXTENSION_H",
                f"-DTORCH_EXTENSION_NAME={project.extension.rsplit('.', 1)[-1]}", "-D_GLIBCXX_USE_CXX11_ABI=1"]
        entries.append({"directory": str(repo), "arguments": argv, "file": str(repo / rel)})
    (repo / "compile_commands.json").write_text(json.dumps(entries, indent=1))
    return repo, [repo / rel for rel in project.files]


def project_command(entry: dict, out: Path) -> tuple[list[str], str]:
    """The entry's own command, its output sent to `out` (the build folder may not exist in a fresh clone)."""
    import shlex

    argv = entry.get("arguments") or shlex.split(entry["command"])
    if "-o" in argv:
        argv = [*argv[:argv.index("-o") + 1], str(out), *argv[argv.index("-o") + 2:]]
    return argv, entry["directory"]


def timed(argv: list[str], cwd: str, env: dict | None = None) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    return time.perf_counter() - started, done


def injected(text: str) -> tuple[str, int] | None:
    """The text with one bug: inside the first __global__ function the code names elsewhere (launched), a use of a
    `Tensor` declared there, misspelled, on the first later line that uses it; and that line (1-based). In a file
    with no kernel of its own (a CUTLASS example: its kernel is the library's), the first later use of a CuTe alias
    declared at namespace scope (`using TileShape = Shape<...>;`), misspelled."""
    lines = text.splitlines()
    kernels = _kernels(lines)  # a header's kernels are launched from elsewhere: then the first one
    start = next((i for i in kernels if _used(lines, i)), kernels[0] if kernels else None)
    if start is None:
        return _misspelled(lines, 0, r"\s*using\s+(\w+)\s*=\s*(?:cute::)?(?:Shape|Stride|Layout)<")
    return _misspelled(lines, start, r"\s*(?:Tensor|auto)\s+(\w+)\s*=")


def _misspelled(lines: list[str], start: int, declaration: str) -> tuple[str, int] | None:
    """From `start` on, the first later use (within 80 lines) of a name a `declaration` line declares, misspelled."""
    for i in range(start, len(lines)):
        m = re.match(declaration, lines[i])
        if not m:
            continue
        name = m.group(1)
        for j in range(i + 1, min(len(lines), i + 80)):
            if re.match(rf"\s*(?:using\s+{name}\s*=|(?:Tensor|auto)\s+{name}\s*=)", lines[j]):
                continue  # declared again (another #if branch): a misspelled name there declares a new one
            if re.search(rf"\b{name}\b", lines[j]) and not lines[j].lstrip().startswith("//"):
                lines[j] = re.sub(rf"\b{name}\b", name + "_typo", lines[j], count=1)
                return "\n".join(lines) + "\n", j + 1
    return None


def bug_located(file: Path, entry, state: Path) -> dict | None:
    """One injected bug, checked as a user meets it: in the .cu as unsaved text (the editor's path), or, where the
    .cu has no kernel of its own, in the first of its headers that has one, saved (a header is checked through
    the .cu that includes it) and restored after."""
    from cutegen.session import Session

    session = Session(state_dir=state)
    target = kernel_file(file, entry)
    original = target.read_text()
    bug = injected(original)
    if bug is None:
        return None
    if target == file:
        result = session.check(file, bug[0], record=False).result
    else:
        try:
            target.write_text(bug[0])
            result = session.check(target, record=False).result
        finally:
            target.write_text(original)
    at = [d.line for d in result.errors if Path(d.file).resolve() == target.resolve()]
    return {"file": target.name, "line": bug[1], "located": bug[1] in at, "reported_at": at[:3],
            "message": result.errors[0].message[:160] if result.errors else None}


def kernel_file(file: Path, entry) -> Path:
    """Where the file's kernel code is: the .cu itself, or (an instantiation file) the first of its user headers
    that declares a __global__ function with a Tensor or auto declared in it."""
    from cutegen.compile import compile_commands as cc
    from cutegen.compile.includes import user_headers

    if injected(file.read_text()) is not None:
        return file
    dirs = [Path(d) for _, d in cc.translate(entry).includes if not (Path(d) / "cute" / "tensor.hpp").is_file()]
    headers = [h for h in user_headers(file.read_text(), file.parent, dirs, angled=True)
               if h.suffix in cc.HEADER_SUFFIXES and injected(h.read_text()) is not None]
    return headers[0] if headers else file


def type_tier(file: Path, state: Path) -> dict:
    """The type tier as the editor runs it (the Session's TypeChecker, in this process): the file opened (cold: its
    header set's PCH built), the background work it starts awaited (a slow file's warm header set), then an edit (a
    comment line added after the first kernel's line): the first pass where one comes (a warm set) and the full
    parse. Errors of the opened, unedited file are the tier's false errors."""
    from cutegen.session import Session

    checker = Session(state_dir=state).type_checker(file)
    text = file.read_text()
    started = time.perf_counter()
    opened = checker.run(file)
    open_s = time.perf_counter() - started
    for thread in list(checker.warm.threads):
        thread.join(timeout=300)
    lines = text.splitlines()
    at = (_kernels(lines) or [0])[0] + 1
    edited = "\n".join([*lines[:at], "  // an edit", *lines[at:]]) + "\n"
    first: list[float] = []
    started = time.perf_counter()
    result = checker.run(file, edited, on_first=lambda early: first.append(time.perf_counter() - started))
    full_s = time.perf_counter() - started
    pch = result.command[-1][6:-1] if result.command[-1].startswith("(pch: ") else "none"
    return {"open_s": open_s, "first_pass_s": first[0] if first else None, "full_s": full_s, "pch": pch,
            "warm_sets": len(checker.warm.threads), "warm_ready": str(file) in checker.warm._ready,
            "errors": [f"{Path(d.file).name}:{d.line}: {d.message[:160]}" for d in opened.errors]}


def lens(file: Path, state: Path, count: int = 5) -> dict:
    """The layout lens on `count` chosen lines: the first declarations in `file` whose code (comments aside) names
    CuTe (`cute::`, a Shape/Stride/Layout/Tile<...>, a StrideA-like alias, a make_ or partition_ of CuTe, a Tensor,
    TiledMma/Copy, an atom); resolved: the probe (Session.layout_probe, the check's flags) names a CuTe type there."""
    from cutegen.layouts.scan import find_declarations
    from cutegen.session import Session

    text = file.read_text()
    lines = text.splitlines()
    cute = re.compile(r"cute::|\b(Shape|Stride|Layout|Tile|Coord)<|\bStride[A-Z]\w*|make_cute_packed_stride|"
                      r"\bmake_(layout|shape|stride|tensor|tile|coord|tiled_\w+|identity_\w+)\b|"
                      r"\b(local_tile|local_partition|partition_\w+|composition|Tensor|TiledMMA|TiledMma|TiledCopy|"
                      r"Copy_Atom|MMA_Atom|Swizzle)\b")
    chosen = sorted({d.line for d in find_declarations(text) if cute.search(lines[d.line - 1].split("//")[0])})[:count]
    started = time.perf_counter()
    probed = Session(state_dir=state).layout_probe(file).run(file)
    seconds = time.perf_counter() - started
    answers = {line: probed.at(line) for line in chosen}
    resolved = [line for line, facts in answers.items() if facts]
    shown = next((f"{file.name}:{line}: {answers[line][0].line_text(False)[:140]}" for line in resolved), None)
    return {"file": file.name, "lines": chosen, "resolved": resolved, "seconds": seconds, "example": shown,
            "problem": probed.problem}


def _kernels(lines: list[str]) -> list[int]:
    """Lines that open a __global__ function (its name on the same or the next line); in a file with none, those
    that open a kernel class's device `operator()` (CUTLASS 3's style: cutlass::device_kernel<Kernel> launches it)."""
    code = [(i, line) for i, line in enumerate(lines) if not line.lstrip().startswith("//")]
    found = [i for i, line in code if "__global__" in line]
    return found or [i for i, line in code if "operator()(" in line
                     and re.search(r"CUTLASS_DEVICE|__device__", " ".join(lines[max(0, i - 2):i + 1]))]


def _used(lines: list[str], start: int) -> bool:
    """Whether the kernel declared at `start` is named in code elsewhere (a launch, a pointer taken): a bug in a
    template nothing instantiates is one nvcc accepts too."""
    head = " ".join(lines[start:start + 6])
    if "__global__" not in head:
        return False  # a kernel class's operator(): launched through cutlass::device_kernel, not by name
    head = head.split("__global__", 1)[1]
    m = re.search(r"\b(?!__launch_bounds__)([A-Za-z_]\w*)\s*\(", head)
    if not m:
        return False
    name = re.compile(rf"\b{m.group(1)}\b")
    return any(name.search(line.split("//")[0]) for i, line in enumerate(lines) if not start <= i < start + 6)


def measure(repo: Path, files: list[Path], reps: int, *, tiers: bool = True, check: bool = True) -> list[dict]:
    from cutegen.compile import compile_commands as cc

    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="real-repos-"))
    for file in files:
        database = cc.find(file, [repo])
        entry = cc.entry_for(database, file) if database else None
        if entry is None:
            rows.append({"file": str(file.relative_to(repo)), "skipped": "no compile_commands.json entry"})
            continue
        if not check:  # the editor's tiers alone (after a change to them)
            rows.append({"file": str(file.relative_to(repo)),
                         "type_tier": type_tier(file, scratch / f"type-{file.stem}"),
                         "lens": lens(kernel_file(file, entry), scratch / f"lens-{file.stem}")})
            print(json.dumps(rows[-1]), flush=True)
            continue
        raw = next(e for e in json.loads(database.read_text()) if Path(e["directory"], e["file"]).resolve()
                   == file.resolve())
        argv, cwd = project_command(raw, scratch / "out.o")
        ours, theirs, checked, project = [], [], None, None
        for rep in range(reps):
            state = scratch / f"state-{file.stem}-{rep}"  # cold: nothing cached
            ours_cmd = [*CUTEGEN, "check", str(file), "--json", "--state-dir", str(state)]
            pair = [("theirs", argv, cwd), ("ours", ours_cmd, str(scratch))]
            for which, cmd, where in (pair if rep % 2 == 0 else pair[::-1]):  # interleaved, order alternating
                seconds, done = timed(cmd, where)
                if which == "ours":
                    ours.append(seconds)
                    checked = json.loads(done.stdout)
                else:
                    theirs.append(seconds)
                    project = done
        errors = [d for d in checked["diagnostics"] if d["severity"] == "error"]
        ratios = sorted(o / t for o, t in zip(ours, theirs))
        row = {"file": str(file.relative_to(repo)), "project_rc": project.returncode,
               "project_error": _first_error_line(project) if project.returncode else None,
               "false_errors": len(errors) if project.returncode == 0 else None,
               "errors": [f"{Path(d['file']).name}:{d['line']}: {d['message'][:160]}" for d in errors],
               "ours_s": ours, "theirs_s": theirs, "ratio_median": statistics.median(ratios),
               "ratio_min": ratios[0], "ratio_max": ratios[-1], "configuration": checked.get("configuration", "")}
        row["bug"] = bug_located(file, entry, scratch / f"bug-{file.stem}")
        if tiers:
            row["type_tier"] = type_tier(file, scratch / f"type-{file.stem}")
            row["lens"] = lens(kernel_file(file, entry), scratch / f"lens-{file.stem}")
        rows.append(row)
        print(json.dumps({k: row[k] for k in row if k not in ("errors", "configuration")}), flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    return rows


def _first_error_line(done: subprocess.CompletedProcess) -> str:
    return next((line[:200] for line in (done.stderr + done.stdout).splitlines() if "error" in line), "")


def commit_of(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "not a git clone"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", type=Path, nargs="?", help="an existing clone with a compile_commands.json")
    ap.add_argument("--tutorials", type=Path, help="lay out CUTLASS's CuTe tutorials from the wheel here, then measure")
    ap.add_argument("--cutlass", type=Path, help="clone (or reuse) CUTLASS here at CUTLASS_COMMIT, configure, measure")
    ap.add_argument("--examples", default=",".join(map(str, HOPPER_EXAMPLES)), help="CUTLASS example numbers")
    ap.add_argument("--project", nargs=2, metavar=("NAME", "DEST"), help=f"one of {', '.join(PROJECTS)}: clone "
                    "(or reuse) it at DEST, write its compile_commands.json, measure its files")
    ap.add_argument("--source", help="where to clone from (default: the repository on GitHub)")
    ap.add_argument("--files", default="**/*.cu", help="which .cu files, a glob under the clone")
    ap.add_argument("--make", action="append", default=[], metavar="FOLDER:TARGET",
                    help="write compile_commands.json from `make -n -B TARGET` in FOLDER first")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-tiers", action="store_true", help="the check only: no type tier, no layout lens")
    ap.add_argument("--tiers-only", action="store_true", help="the type tier and the layout lens only")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.cutlass:
        source = args.source or "https://github.com/NVIDIA/cutlass"
        repo, files = cutlass_examples(args.cutlass.resolve(), source, [int(n) for n in args.examples.split(",")])
    elif args.project:
        name, dest = args.project
        source = args.source or f"https://github.com/{PROJECTS[name].repo}"
        repo, files = torch_project(name, Path(dest).resolve(), source)
    else:
        repo = tutorials(args.tutorials.resolve()) if args.tutorials else args.repo.resolve()
        if args.make:
            from_make(repo, args.make)
        pattern = "examples/cute/tutorial/**/*.cu" if args.tutorials else args.files
        files = sorted(p for p in repo.glob(pattern) if p.suffix == ".cu")
    rows = measure(repo, files, args.reps, tiers=not args.no_tiers, check=not args.tiers_only)
    report = {"repo": str(repo), "commit": commit_of(repo), "date": time.strftime("%Y-%m-%d"),
              "machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
