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

Nothing is vendored: CLONE is an existing clone (with its compile_commands.json, from CMake or `bear`).
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
    `Tensor` declared there, misspelled, on the first later line that uses it; and that line (1-based)."""
    lines = text.splitlines()
    kernels = _kernels(lines)  # a header's kernels are launched from elsewhere: then the first one
    start = next((i for i in kernels if _used(lines, i)), kernels[0] if kernels else None)
    if start is None:
        return None
    for i in range(start, len(lines)):
        m = re.match(r"\s*(?:Tensor|auto)\s+(\w+)\s*=", lines[i])
        if not m:
            continue
        name = m.group(1)
        for j in range(i + 1, min(len(lines), i + 80)):
            if re.search(rf"\b{name}\b", lines[j]) and not lines[j].lstrip().startswith("//"):
                lines[j] = re.sub(rf"\b{name}\b", name + "_typo", lines[j], count=1)
                return "\n".join(lines) + "\n", j + 1
    return None


def bug_located(file: Path, entry, state: Path) -> dict | None:
    """One injected bug, checked as a user meets it: in the .cu as unsaved text (the editor's path), or, where the
    .cu has no kernel of its own, in the first of its headers that has one, saved (a header is checked through
    the .cu that includes it) and restored after."""
    from cutegen.compile import compile_commands as cc
    from cutegen.compile.includes import user_headers
    from cutegen.session import Session

    session = Session(state_dir=state)
    bug = injected(file.read_text())
    if bug is not None:
        result = session.check(file, bug[0], record=False).result
        target = file
    else:
        dirs = [Path(d) for _, d in cc.translate(entry).includes if not (Path(d) / "cute" / "tensor.hpp").is_file()]
        headers = [h for h in user_headers(file.read_text(), file.parent, dirs, angled=True)
                   if h.suffix in cc.HEADER_SUFFIXES and injected(h.read_text()) is not None]
        if not headers:
            return None
        target, original = headers[0], headers[0].read_text()
        bug = injected(original)
        try:
            target.write_text(bug[0])
            result = session.check(target, record=False).result
        finally:
            target.write_text(original)
    at = [d.line for d in result.errors if Path(d.file).resolve() == target.resolve()]
    return {"file": target.name, "line": bug[1], "located": bug[1] in at, "reported_at": at[:3],
            "message": result.errors[0].message[:160] if result.errors else None}


def _kernels(lines: list[str]) -> list[int]:
    """Lines that open a __global__ function (its name on the same or the next line)."""
    return [i for i, line in enumerate(lines) if "__global__" in line and not line.lstrip().startswith("//")]


def _used(lines: list[str], start: int) -> bool:
    """Whether the kernel declared at `start` is named in code elsewhere (a launch, a pointer taken): a bug in a
    template nothing instantiates is one nvcc accepts too."""
    head = " ".join(lines[start:start + 6]).split("__global__", 1)[1]
    m = re.search(r"\b(?!__launch_bounds__)([A-Za-z_]\w*)\s*\(", head)
    if not m:
        return False
    name = re.compile(rf"\b{m.group(1)}\b")
    return any(name.search(line.split("//")[0]) for i, line in enumerate(lines) if not start <= i < start + 6)


def measure(repo: Path, pattern: str, reps: int) -> list[dict]:
    from cutegen.compile import compile_commands as cc

    rows = []
    files = sorted(p for p in repo.glob(pattern) if p.suffix == ".cu")
    scratch = Path(tempfile.mkdtemp(prefix="real-repos-"))
    for file in files:
        database = cc.find(file, [repo])
        entry = cc.entry_for(database, file) if database else None
        if entry is None:
            rows.append({"file": str(file.relative_to(repo)), "skipped": "no compile_commands.json entry"})
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
               "false_errors": len(errors) if project.returncode == 0 else None,
               "errors": [f"{Path(d['file']).name}:{d['line']}: {d['message'][:160]}" for d in errors],
               "ours_s": ours, "theirs_s": theirs, "ratio_median": statistics.median(ratios),
               "ratio_min": ratios[0], "ratio_max": ratios[-1], "configuration": checked.get("configuration", "")}
        row["bug"] = bug_located(file, entry, scratch / f"bug-{file.stem}")
        rows.append(row)
        print(json.dumps({k: row[k] for k in row if k not in ("errors", "configuration")}), flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    return rows


def commit_of(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "not a git clone"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", type=Path, nargs="?", help="an existing clone with a compile_commands.json")
    ap.add_argument("--tutorials", type=Path, help="lay out CUTLASS's CuTe tutorials from the wheel here, then measure")
    ap.add_argument("--files", default="**/*.cu", help="which .cu files, a glob under the clone")
    ap.add_argument("--make", action="append", default=[], metavar="FOLDER:TARGET",
                    help="write compile_commands.json from `make -n -B TARGET` in FOLDER first")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    repo = tutorials(args.tutorials.resolve()) if args.tutorials else args.repo.resolve()
    if args.make:
        from_make(repo, args.make)
    pattern = "examples/cute/tutorial/**/*.cu" if args.tutorials else args.files
    rows = measure(repo, pattern, args.reps)
    report = {"repo": str(repo), "commit": commit_of(repo), "date": time.strftime("%Y-%m-%d"),
              "machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
