"""A worker process that owns the CUDA context. A hang, a crash or a poisoned context kills the worker,
never the caller; the next request starts a fresh one. A healthy worker is reused (warm).

`Worker()` runs the user's own kernels with the user's rights (a spawned child). `Worker(jail=...)` runs
model-written candidates: the same loop, started as `bwrap ... python -m cutegen.harness.worker` and
spoken to over pipes in JSON (see cutegen.sandbox), so verdicts, timeouts and crashes read the same.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import signal
import threading
import traceback

from cutegen.harness.verdicts import Verdict


class Worker:
    def __init__(self, jail=None):
        self._ctx = mp.get_context("spawn")  # never fork a process that may hold a CUDA context
        self.jail = jail  # a cutegen.sandbox.Jail: candidates run inside it
        self._proc = None
        self._conn = None
        self._calls = threading.Lock()  # one request on the pipe at a time, whichever thread asks

    def call(self, request: dict, timeout: float) -> dict:
        with self._calls:
            return self._call(request, timeout)

    def _call(self, request: dict, timeout: float) -> dict:
        self._ensure()
        conn = self._conn  # stop() from another thread (a cancel) clears self._conn while this waits
        if self.jail is not None:
            request = {**request, "cpu_budget": timeout}
        killed_before = self._oom_kills()
        try:
            conn.send(request)
        except (OSError, ValueError):  # the worker died between requests (a broken pipe): as if it died in this one
            return self._dead()
        if not conn.poll(timeout):
            self.stop()
            return {"verdict": Verdict.TIMEOUT.value, "message": f"no result within {timeout:.0f} s: the kernel hangs "
                    "(or is far too slow); the worker was killed and will restart"}
        try:
            reply = conn.recv()
        except (EOFError, OSError):
            return self._dead()
        if reply.get("verdict") == Verdict.CRASHED.value and self._oom_kills() > killed_before:
            # the jail's memory cgroup killed the candidate process; the judge beside it lived to say "crashed"
            reply = {"verdict": Verdict.OUT_OF_MEMORY.value, "message": self._proc.memory_cap_text()}
        if reply.pop("poisoned", False):
            self.stop()  # a CUDA error leaves the context unusable: the next run gets a fresh process
        return reply

    def _oom_kills(self) -> int:
        return getattr(self._proc, "oom_kills", lambda: 0)()

    def _dead(self) -> dict:
        if self._proc is not None:
            self._proc.join(5)  # reap it, so the exit code is known
        code, proc = (self._proc.exitcode if self._proc else None), self._proc
        self.stop()
        return _died(code, self.jail is not None, proc)

    def _ensure(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        if self.jail is not None:
            from cutegen.sandbox.process import JailedProcess

            self._proc = JailedProcess(self.jail)
            self._conn = self._proc.conn
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
    from cutegen.harness.remote import seal_judge

    seal_judge()  # before any candidate process exists: none of them may attach to this one
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        budget = request.pop("cpu_budget", None)
        if budget is not None:
            from cutegen.sandbox.limits import cpu_budget

            cpu_budget(4 * budget)  # CPU time counts every thread; the wall-clock timeout stays the caller's
        conn.send(_handle(request))


def _died(code: int | None, jailed: bool, proc=None) -> dict:
    """The verdict for a worker that ended mid-run: out-of-memory when the jail's memory cgroup killed it (the
    message names the cap), else crashed, with the signal by name and which jail limit it means."""
    over_cap = getattr(proc, "ended_by_memory_cap", lambda: None)()
    if over_cap:
        return {"verdict": Verdict.OUT_OF_MEMORY.value, "message": over_cap}
    sig = -code if code is not None and code < 0 else None
    if jailed and code is not None and code > 128:
        sig = code - 128  # bwrap exits with 128+n when its child is killed by signal n
    if sig is None or sig not in signal.valid_signals():
        how = f"exit code {code}"
    else:
        limit = {signal.SIGXCPU: "; it used up its CPU-time limit", signal.SIGXFSZ: "; it wrote a file over the size "
                 "limit", signal.SIGKILL: "; it was killed (a resource limit or the timeout)"}.get(sig, "") if jailed else ""
        how = f"killed by {signal.Signals(sig).name}{limit}"
    where = " in the sandbox" if jailed else ""
    return {"verdict": Verdict.CRASHED.value, "message": f"the worker process died{where} during the run: a host-side "
            f"crash in the kernel library or the problem ({how})"}


def main(argv: list[str] | None = None) -> None:
    """The jailed worker: `python -m cutegen.harness.worker --read-fd R --write-fd W --cpu S ...`. Limits
    are set here, before any candidate code is loaded."""
    from multiprocessing.connection import Connection

    from cutegen.sandbox.limits import apply
    from cutegen.sandbox.process import JsonConnection

    ap = argparse.ArgumentParser(prog="python -m cutegen.harness.worker")
    for name in ("read-fd", "write-fd", "cpu", "memory", "file-size", "processes"):
        ap.add_argument(f"--{name}", type=int, required=True)
    args = ap.parse_args(argv)
    apply(cpu=args.cpu, memory=args.memory, file_size=args.file_size, processes=args.processes)
    _serve(JsonConnection(Connection(args.read_fd, writable=False), Connection(args.write_fd, readable=False)))


_CANDIDATES = None  # this judge's candidate processes (remote.Candidates), made on the first request


def _handle(request: dict) -> dict:
    """One judged run. This process is the judge: it loads the problem, draws the inputs from the request's seed,
    holds the reference, the truth, the clock and the verdict. The candidate's code is loaded only in a candidate
    process of its own (harness/remote.py), which is handed copies of the inputs and never the seed."""
    global _CANDIDATES
    import torch

    from cutegen.harness.gpu_checks import Failed, judge
    from cutegen.harness.problem import ProblemError, load_problem
    from cutegen.harness.remote import Candidates

    _CANDIDATES = _CANDIDATES or Candidates()
    try:
        device = request.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
        problem = load_problem(request["problem"])
        seed, init_seed = request.get("seed", 0), request.get("init_seed", request.get("seed", 0))
        kind, path = ("modelnew", request["modelnew"]) if request.get("modelnew") else ("library", request["library"])
        init = problem.init_values(init_seed) if kind == "modelnew" else []
        with _CANDIDATES.loaded(kind=kind, path=str(path), device=device, init=init, seed=init_seed,
                                timed=bool(request.get("timing"))) as lib:
            return judge(problem, lib, trials=request.get("trials", 5), seed=seed, init_seed=init_seed,
                         timing=request.get("timing", False), baselines=request.get("baselines", []),
                         reference=request.get("reference", "fp64"), device=device)
    except Failed as f:
        return f.to_json()
    except (ProblemError, LookupError, OSError) as e:
        return {"verdict": Verdict.PROBLEM_ERROR.value, "message": str(e)}
    except torch.OutOfMemoryError as e:
        torch.cuda.empty_cache()
        return {"verdict": Verdict.OUT_OF_MEMORY.value,
                "message": f"the GPU ran out of memory: {str(e).splitlines()[0]}"}
    except Exception as e:  # CUDA errors (illegal address, ...) surface here, asynchronously
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        cuda = "CUDA error" in text or "cuda" in type(e).__name__.lower() or isinstance(e, torch.AcceleratorError if hasattr(torch, "AcceleratorError") else ())
        if cuda and "out of memory" in text:  # a cudaMalloc the card refused, raised as a plain CUDA error (a
            # candidate that leaks device memory call after call): the context stays usable, but start afresh
            return {"verdict": Verdict.OUT_OF_MEMORY.value, "poisoned": True,
                    "message": f"the GPU ran out of memory: {text} (the kernel library allocates device memory it "
                               "does not free, or asks for more than the card has)"}
        return {"verdict": (Verdict.CUDA_ERROR if cuda else Verdict.ERROR).value, "message": text, "poisoned": cuda,
                "traceback": traceback.format_exc(limit=6)}


if __name__ == "__main__":
    main()
