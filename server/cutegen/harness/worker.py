"""A worker process that owns the CUDA context. A hang, a crash or a poisoned context kills the worker,
never the caller; the next request starts a fresh one. A healthy worker is reused (warm)."""

from __future__ import annotations

import multiprocessing as mp
import traceback


class Worker:
    def __init__(self):
        self._ctx = mp.get_context("spawn")  # never fork a process that may hold a CUDA context
        self._proc = None
        self._conn = None

    def call(self, request: dict, timeout: float) -> dict:
        self._ensure()
        self._conn.send(request)
        if not self._conn.poll(timeout):
            self.stop()
            return {"verdict": "timeout", "message": f"no result within {timeout:.0f} s: the kernel hangs (or is far "
                    "too slow); the worker was killed and will restart"}
        try:
            reply = self._conn.recv()
        except (EOFError, OSError):
            if self._proc is not None:
                self._proc.join(5)  # reap it, so the exit code is known
            code = self._proc.exitcode if self._proc else None
            self.stop()
            return {"verdict": "crashed", "message": f"the worker process died (exit code {code}) during the run: a "
                    "host-side crash in the kernel library or the problem"}
        if reply.pop("poisoned", False):
            self.stop()  # a CUDA error leaves the context unusable: the next run gets a fresh process
        return reply

    def _ensure(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child,), daemon=True, name="cutegen-gpu-worker")
        self._proc.start()
        child.close()
        self._conn = parent

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(10)
        self._proc = self._conn = None


def _serve(conn) -> None:
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        conn.send(_handle(request))


def _handle(request: dict) -> dict:
    import torch

    from cutegen.harness.abi import KernelLibrary
    from cutegen.harness.gpu_checks import Failed, judge
    from cutegen.harness.problem import ProblemError, load_problem

    from cutegen.harness.modelnew import BuildFailed, ModelNewAdapter

    try:
        problem = load_problem(request["problem"])
        if request.get("modelnew"):
            lib = ModelNewAdapter(request["modelnew"], list(problem.module.get_init_inputs()))
        else:
            lib = KernelLibrary(request["library"])
        return judge(problem, lib, trials=request.get("trials", 5), seed=request.get("seed", 0),
                      timing=request.get("timing", False), baselines=request.get("baselines", []))
    except Failed as f:
        return f.to_json()
    except BuildFailed as b:
        return {"verdict": "build-failed", "message": f"load_inline failed: {b}", "build": {
            "ok": False, "log": b.log, "diagnostics": [d.to_json() for d in b.diagnostics]}}
    except (ProblemError, LookupError, OSError) as e:
        return {"verdict": "problem-error", "message": str(e)}
    except torch.OutOfMemoryError as e:
        torch.cuda.empty_cache()
        return {"verdict": "out-of-memory", "message": f"the GPU ran out of memory: {str(e).splitlines()[0]}"}
    except Exception as e:  # CUDA errors (illegal address, ...) surface here, asynchronously
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        cuda = "CUDA error" in text or "cuda" in type(e).__name__.lower() or isinstance(e, torch.AcceleratorError if hasattr(torch, "AcceleratorError") else ())
        return {"verdict": "cuda-error" if cuda else "error", "message": text, "poisoned": cuda,
                "traceback": traceback.format_exc(limit=6)}
