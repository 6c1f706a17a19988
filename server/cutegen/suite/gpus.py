"""The local backend: one worker process per GPU (CUDA_VISIBLE_DEVICES), one job at a time on each.

A GPU job is a request of the harness's worker protocol (harness/worker.py: problem, library or modelnew, trials,
timing, ...), or a profile request. The process that owns a GPU is the harness's own Worker, started with that GPU
visible: a hang is killed at the timeout and becomes the verdict, a poisoned CUDA context gets a fresh process,
and a process that dies under a job is replaced and the job retried once (a second death is the verdict).

`handler` names the function that serves requests inside the worker ("module:function"), so tests can run the
harness's real checks on the CPU with host-code kernel libraries (no GPU) through the very same scheduling."""

from __future__ import annotations

import importlib
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from typing import Callable

from cutegen.harness.worker import Worker
from cutegen.suite import rows

DEFAULT_HANDLER = "cutegen.suite.gpus:handle"
STARTUP_TIMEOUT_S = 300.0  # a fresh worker's imports (torch) on a loaded machine
JAIL_MARGIN_S = 60.0  # the jailed worker's own start, on top of the job's timeout (which the jail enforces)


def local_gpus() -> list[str]:
    """The GPUs this machine offers: CUDA_VISIBLE_DEVICES if set, else every GPU nvidia-smi lists."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [g.strip() for g in visible.split(",") if g.strip() and g.strip() != "-1"]
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        out = subprocess.run([smi, "--query-gpu=index", "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in out.splitlines() if line.strip().isdigit()]


def resolve(spec: str) -> Callable[[dict], dict]:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def warm_up() -> None:
    """Import what every job needs (torch, the harness) when a worker starts, not inside a job's timeout."""
    try:
        import cutegen.harness.gpu_checks  # noqa: F401  (imports torch)
    except ImportError:
        pass


def handle(request: dict) -> dict:
    """The default job handler inside a GPU worker: the harness's run, a model-written candidate's run inside its
    jail, or a profile of a built kernel."""
    if "profile" in request:
        return _profile(request["profile"])
    if "jailed" in request:
        return _jailed(request)
    from cutegen.harness.worker import _handle

    return _handle(request)


_JAILED: dict = {}  # one warm jailed worker per jail, inside this GPU's worker


def _jailed(job: dict) -> dict:
    """The agent's candidates run jailed (cutegen.sandbox): the jail is started from this GPU's worker, so it
    inherits this worker's CUDA_VISIBLE_DEVICES (an allowed variable of the jail's environment)."""
    from cutegen.harness.worker import Worker

    jail = job["jailed"]
    if jail not in _JAILED:
        _JAILED[jail] = Worker(jail=jail)
    return _JAILED[jail].call(job["request"], job["timeout"])


def _profile(job: dict) -> dict:
    from pathlib import Path

    from cutegen.compile import Builder
    from cutegen.profiler import profile_kernel
    from cutegen.settings import Settings
    from cutegen.toolchain import discover

    _release_cached_memory()  # ncu's own process needs the memory this worker's earlier jobs cached
    settings = Settings(**job["settings"])
    builder = Builder(discover(settings), settings, Path(job["state_dir"]))
    record = profile_kernel(Path(job["kernel"]), builder, None, problem=job["problem"],
                            state_dir=Path(job["state_dir"]))
    return {"profile_record": record.to_message()}  # the reply crosses the worker's pipe as JSON


def _release_cached_memory() -> None:
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


class Backend:
    """What the suite needs from a backend: `call(request, timeout, label)` on some free GPU, one job per GPU."""

    name = "backend"

    def __init__(self, slots: list, on_event: Callable | None = None):
        self.gpus = [s.gpu for s in slots]
        self.on_event = on_event or (lambda *a: None)
        self._free: queue.Queue = queue.Queue()
        for s in slots:
            self._free.put(s)
        self._all = list(slots)
        self.closed = threading.Event()

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpus)

    def call(self, request: dict, timeout: float, label: str = "", jail=None) -> dict:
        """Runs `request` on a free GPU; with `jail`, inside that sandbox started by the GPU's worker."""
        if jail is not None:
            request, timeout = {"jailed": jail, "request": request, "timeout": timeout}, timeout + JAIL_MARGIN_S
        if self.closed.is_set():  # the run is stopping: start no GPU work (and no fresh worker) any more
            return {"verdict": "cancelled", "message": "the suite run was stopped before this job ran"}
        asked = time.perf_counter()
        slot = self._free.get()
        waited = time.perf_counter() - asked
        try:
            self.on_event("gpu-busy", slot.gpu, label)
            started = time.perf_counter()
            reply = self._run(slot, request, timeout)
            if rows.worker_died(reply) and not self.closed.is_set():
                slot = self._replace(slot)  # a fresh process, and the job once more
                reply = self._run(slot, request, timeout)
                reply["retried"] = True
            reply.setdefault("gpu", slot.gpu)
            reply["gpu_seconds"] = time.perf_counter() - started
            reply["queue_seconds"] = waited
            return reply
        finally:
            self.on_event("gpu-idle", slot.gpu, label)
            self._free.put(slot)

    def worker(self, label: str) -> "GpuWorker":
        return GpuWorker(self, label)

    def _run(self, slot, request: dict, timeout: float) -> dict:
        raise NotImplementedError

    def _replace(self, slot):
        return slot

    def close(self) -> None:
        self.closed.set()


class GpuWorker:
    """Stands where the engine expects a harness Worker (verify_kernel, the agent's Verifier): each call runs on
    whichever GPU of the backend is free (jailed, when `jail` is given: model-written candidates)."""

    def __init__(self, backend: Backend, label: str, jail=None):
        self.backend, self.label, self.jail = backend, label, jail

    def call(self, request: dict, timeout: float) -> dict:
        return self.backend.call(request, timeout, self.label, self.jail)

    def stop(self) -> None:
        pass  # the GPU processes belong to the backend; a cancelled job's result is dropped by the runner


class GpuSlot(Worker):
    """The harness Worker, bound to one GPU and serving with `handler`."""

    def __init__(self, gpu: str, handler: str = DEFAULT_HANDLER):
        super().__init__()
        self.gpu, self.handler = gpu, handler
        self._ready = False

    def call(self, request: dict, timeout: float) -> dict:
        """As the harness Worker's, but a fresh process's start (imports: seconds) is not charged to the job's
        timeout: it says when it is ready to serve."""
        self._ensure()
        if not self._ready:
            try:
                if not self._conn.poll(STARTUP_TIMEOUT_S):
                    raise EOFError
                self._conn.recv()
                self._ready = True
            except (EOFError, OSError):
                code = self._proc.exitcode if self._proc is not None else None
                self.stop()
                return {"verdict": "crashed", "message": f"the GPU worker process did not start (exit code {code})"}
        return super().call(request, timeout)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    def _ensure(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child, self.gpu, self.handler), daemon=True,
                                       name=f"cutegen-gpu{self.gpu}")
        self._proc.start()
        child.close()
        self._conn, self._ready = parent, False


def _serve(conn, gpu: str, handler: str) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu  # before anything initializes CUDA in this process
    os.environ["CUTEGEN_SUITE_GPU"] = gpu
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the suite's to handle: it stops workers in order
    serve = resolve(handler)
    warm_up()
    conn.send({"ready": True})
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        reply = serve(request)
        reply["gpu"] = gpu
        conn.send(reply)


class LocalBackend(Backend):
    name = "local"

    def __init__(self, gpus: list[str], handler: str = DEFAULT_HANDLER, on_event: Callable | None = None):
        super().__init__([GpuSlot(g, handler) for g in gpus], on_event)
        for s in self._all:
            s._ensure()  # start every GPU's process now, so its imports overlap the first compiles

    def _run(self, slot: GpuSlot, request: dict, timeout: float) -> dict:
        return slot.call(request, timeout)

    def _replace(self, slot: GpuSlot) -> GpuSlot:
        slot.stop()  # the harness Worker starts a fresh process on the next call
        return slot

    def slots(self) -> list[GpuSlot]:
        return list(self._all)

    def close(self) -> None:
        super().close()
        for s in self._all:
            s.stop()
