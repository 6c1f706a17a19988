"""Run a kernel against its problem: pair → build → run in the worker → verdict → run record.
Used by the engine session (CLI and language server alike) and the agent."""

from __future__ import annotations

import platform
import secrets
import sys
from importlib import metadata
from pathlib import Path
from typing import Callable

from cutegen import records
from cutegen.compile import Builder, Tier
from cutegen.cancel import Cancel, Cancelled
from cutegen.hardware import local
from cutegen.harness.verdicts import Verdict, parse
from cutegen.harness.worker import Worker
from cutegen.model import Diagnostic
from cutegen.pairing import find_problem
from cutegen.state import IN_WORKING_FOLDER
from cutegen.toolchain import local_gpu_arch


def verify_kernel(kernel: Path, builder: Builder, worker: Worker, *, problem: str | Path | None = None,
                  trials: int = 5, seed: int | None = None, timing: bool = False, baselines: tuple[str, ...] = (),
                  state_dir: Path = IN_WORKING_FOLDER, on_stage: Callable[[str], None] | None = None,
                  gpu: bool | None = None, cancel: Cancel | None = None,
                  device: str | None = None) -> records.RunRecord:
    """Returns the run record, typed (also written under `state_dir`: its `path`, or `save_error` why not). `gpu`:
    whether `worker` runs on a GPU (default: this machine has one); `cutegen suite` says so for workers that live
    elsewhere (a Ray cluster). `seed`: the inputs' seed (and the models' weights'); by default both are drawn
    fresh for every run, so no candidate can know its inputs in advance, and recorded (`seeds`) to reproduce it.
    `device` "cpu" judges a pure-PyTorch ModelNew on CPU tensors (no timing). A stopped build, or a run whose
    `cancel` was cancelled, raises Cancelled and records nothing (not a failure)."""
    cancel = cancel or Cancel()
    kernel = Path(kernel).resolve()
    stage = on_stage or (lambda s: None)
    kind = "bench" if timing else "test"
    fresh = secrets.randbelow
    inputs_seed, init_seed = (seed, seed) if seed is not None else (fresh(1 << 31), fresh(1 << 31))
    record: dict = {"kernel": str(kernel), "problem": None, "environment": _environment(builder),
                    "seeds": {"inputs": inputs_seed, "init": init_seed}}
    run = {"trials": trials, "seed": inputs_seed, "init_seed": init_seed, "timing": timing,
           "baselines": list(baselines), "reference": builder.settings.reference_mode,
           **({"device": device} if device else {})}

    finish = records.Recorder(state_dir, kind, str(kernel), record).finish

    problem_path = find_problem(kernel, problem)
    if problem_path is None or not problem_path.is_file():
        return finish(Verdict.NO_PROBLEM, f"no problem paired with {kernel.name}: add "
                      f"`// cutegen: problem=path/to/ref.py` or a sibling {kernel.stem}.py"
                      + (f" ({problem_path} does not exist)" if problem_path else ""))
    record["problem"] = str(problem_path)
    if device == "cpu" and timing:
        return finish(Verdict.NOT_RUN, "not timed: timing needs a GPU (`cutegen test --device cpu` judges a "
                                       "pure-PyTorch ModelNew's correctness on the CPU)")
    if kernel.suffix == ".py":
        return _verify_modelnew(kernel, problem_path, builder, worker, run, finish, stage, gpu, cancel)
    if device == "cpu":
        return finish(Verdict.NOT_RUN, f"not run: {kernel.name} is a CUDA kernel; --device cpu judges pure-PyTorch "
                                       "ModelNew files")
    stage("build")
    build = builder.run(Tier.BUILD, kernel)
    if build.cancelled:
        raise Cancelled("the build was stopped")
    record["build"] = {"ok": build.ok, "seconds": build.seconds, "cached": build.cached, "log": build.raw_log,
                       "diagnostics": [d.to_json() for d in build.errors],
                       "resources": [r.__dict__ for r in build.resources]}
    if not build.ok:
        first = build.errors[0].format() if build.errors else "see the build log"
        return finish(Verdict.BUILD_FAILED, f"the kernel does not build: {first}")
    if not (local_gpu_arch() is not None if gpu is None else gpu):
        return finish(Verdict.NOT_RUN, "built, not run: no NVIDIA GPU on this machine")
    stage("bench" if timing else "test")
    reply = worker.call({"problem": str(problem_path), "library": build.artifact, **run},
                        timeout=builder.settings.test_timeout)
    cancel.check()  # a worker stopped mid-call answers "crashed": not a verdict on the kernel
    verdict, message = _verdict(reply.pop("verdict")), reply.pop("message")
    return finish(verdict, message, **reply)


def _verify_modelnew(kernel, problem_path, builder, worker, run: dict, finish, stage, gpu,
                     cancel) -> records.RunRecord:
    """KernelBench `ModelNew` files: built by load_inline inside the candidate process (torch headers: slow); on
    the CPU (`run["device"]`), a pure-PyTorch one is judged without a GPU."""
    from cutegen.harness.modelnew import is_modelnew

    if not is_modelnew(kernel):
        return finish(Verdict.PROBLEM_ERROR, f"{kernel.name} defines no `class ModelNew`")
    if run.get("device") != "cpu" and not (local_gpu_arch() is not None if gpu is None else gpu):
        return finish(Verdict.NOT_RUN, "not run: ModelNew files build and run only on a machine with an NVIDIA GPU "
                                       "(a pure-PyTorch one: `cutegen test --device cpu`)")
    stage("build + test (load_inline)")
    reply = worker.call({"problem": str(problem_path), "modelnew": str(kernel), **run},
                        timeout=builder.settings.build_timeout + builder.settings.test_timeout)
    cancel.check()
    verdict, message = _verdict(reply.pop("verdict")), reply.pop("message")
    if verdict is Verdict.BUILD_FAILED:
        stage("check (why load_inline failed)")
        message, reply["build"] = _checked_build_failure(kernel, builder, reply.get("build") or {}, message)
    return finish(verdict, message, **reply)


def _checked_build_failure(kernel: Path, builder: Builder, build: dict, message: str) -> tuple[str, dict]:
    """A ModelNew that load_inline cannot build, told as `cutegen check` tells it: the check tier compiles the same
    cuda_sources with torch's flags (often a cache hit: the editor checked the file on save) and its condensed
    diagnostics come first. The worker's reading of load_inline's own text (the same condenser) adds what the
    check does not see (cpp_sources, an include path load_inline lacks, the link, the import); where the check
    compiles cleanly it is all there is."""
    check = builder.run(Tier.CHECK, kernel)
    errors = [d.to_json() for d in check.errors if d.code not in ("timeout", "nvcc-failed")]
    if not errors or check.cancelled:
        return message, build
    worker = build.get("diagnostics", [])
    seen = {(d["line"], d["root"]) for d in errors}
    errors += [d for d in worker if (d.get("line"), d.get("root")) not in seen]
    first = Diagnostic.from_json(errors[0])
    return (f"load_inline failed: {first.format()}",
            {**build, "diagnostics": errors, "worker_diagnostics": worker,
             "check": {"seconds": check.seconds, "cached": check.cached}})


def _verdict(name: str) -> Verdict | str:
    """The worker's verdict (its wire format is JSON) as the enum; a name this version does not know is kept as it
    came (a newer remote worker's), shown as an error."""
    return parse(name) or name


def _environment(builder: Builder) -> dict:
    """Where the run happened, read without importing torch (the server never does: only the worker runs it):
    torch's version from its installed metadata, the card's name from nvidia-smi (hardware.local), or from torch
    where this process already holds it (a suite's GPU process, which sees only its CUDA_VISIBLE_DEVICES card)."""
    env = {"host": platform.node(), "python": platform.python_version(), "nvcc": builder.toolchain.nvcc_version,
           "cutlass": builder.toolchain.cutlass_version, "arch": builder.toolchain.arch}
    try:
        env["torch"] = metadata.version("torch")
    except metadata.PackageNotFoundError:
        pass
    torch, gpu = sys.modules.get("torch"), local()
    if torch is not None and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name()
    elif gpu is not None:
        env["gpu"] = gpu.name
    return env
