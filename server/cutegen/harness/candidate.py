"""The candidate process: the only process that loads a candidate's code (a kernel library, or a ModelNew module
and what its load_inline builds). It holds no problem file, no reference, no truth, no seed of the inputs and no
clock; it gets copies of the inputs and the output buffers as shared memory (CUDA IPC on a GPU, shared files on
the CPU), calls the candidate when the judge says so, and answers in JSON.

    python -m cutegen.harness.candidate --read-fd R --write-fd W --device cuda|cpu

What the judge sends is pickled (the judge is trusted: the candidate may unpickle it); what this process sends
back is JSON the judge validates field by field (harness/remote.py), never pickle, and never a verdict that
passes: a reply can only say a call ran (its return code) or name a failure. So code loaded here can rewrite
anything in this process — torch, its events, this loop — and still reach nothing of the judge's but the
buffers it was handed and the pipe whose every message is checked.

On a GPU, a call is ordered with the judge's stream by interprocess events: this stream waits for the judge's
event (its inputs are written), runs the call, records `after_call` (the judge's clock stops there) and, for a
ModelNew, copies what forward returned into the judge's output buffers and records `after_copy` (the judge
reads its outputs after that one). Timed and checked calls are the same message: nothing tells them apart.
"""

from __future__ import annotations

import argparse
import json
import pickle
import signal
import traceback
from multiprocessing.connection import Connection
from typing import Any

FD_LIMIT = 64 << 20


class CandidateHost:
    """The candidate's side of the calls: its code, the shared buffers by id, its stream and events."""

    def __init__(self, device: str):
        self.device = device
        self.lib: Any = None  # a KernelLibrary or a ModelNewAdapter, once loaded
        self.shared: dict[int, Any] = {}  # the judge's buffers, by the ids it gave them
        self.stream: Any = None
        self.judge_event: Any = None
        self.after_call: Any = None
        self.after_copy: Any = None

    def handle(self, msg: dict) -> dict:
        op = getattr(self, "op_" + str(msg.get("op")), None)
        if op is None:
            return {"ok": False, "verdict": "error", "message": f"unknown request {msg.get('op')!r}"}
        try:
            return {"ok": True, **(op(msg) or {})}
        except BaseException as e:  # noqa: BLE001 (every end of a request is an answer; the judge names it)
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            return failure(e)

    def op_events(self, msg: dict) -> dict:
        """The stream and events of the calls, made before any candidate code is loaded (the judge measures the
        hand-off through them first: `op_handoff`)."""
        import torch

        self.stream = torch.cuda.Stream()
        self.judge_event = torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), msg["judge_event"])
        self.after_call = torch.cuda.Event(interprocess=True)
        self.after_copy = torch.cuda.Event(interprocess=True)
        return {"events": [bytes(e.ipc_handle()).hex() for e in (self.after_call, self.after_copy)]}

    def op_handoff(self, msg: dict) -> None:
        """A known short kernel between the judge's event and this process's: the judge times the hand-off."""
        import torch

        self.stream.wait_event(self.judge_event)
        with torch.cuda.stream(self.stream):
            torch.cuda._sleep(int(msg["cycles"]))
        self._record(self.after_call, self.after_copy)

    def op_load(self, msg: dict) -> dict:
        if msg["kind"] == "modelnew":
            from cutegen.harness.modelnew import ModelNewAdapter

            self.lib = ModelNewAdapter(msg["path"], msg["init"], msg["seed"], device=self.device)
        else:
            from cutegen.harness.abi import KernelLibrary

            self.lib = KernelLibrary(msg["path"])
        return {"abi_version": getattr(self.lib, "abi_version", 0)}

    def op_bind_init(self, msg: dict) -> None:
        self.lib.bind_init(msg["values"])

    def op_share(self, msg: dict) -> None:
        for key, ref in msg["refs"].items():
            self.shared[key] = open_shared(ref)

    def op_forget(self, msg: dict) -> None:
        """The request ended. The judge's buffers stay open here, and the code stays loaded: the next request of
        this process is for the same code (remote.Candidates), gets the same buffers back (remote.Shared recycles
        them) and needs no new IPC mapping and no new load."""
        release = getattr(self.lib, "release", None)
        if release is not None:
            release()

    def op_call(self, msg: dict) -> dict:
        import torch

        args = [self.shared[v] if kind == "t" else v for kind, v in msg["inputs"]]
        outs = [self.shared[i] for i in msg["outputs"]]
        prepare = getattr(self.lib, "arguments", None)
        args = prepare(args) if prepare else args
        if self.device != "cuda":
            return {"code": int(self._call(args, outs, None))}
        self.stream.wait_event(self.judge_event)
        stage = msg.get("stage")
        with torch.cuda.stream(self.stream):
            if stage:  # as a program calls: the inputs written on the caller's stream just before the call
                torch.cuda._sleep(int(stage["sleep"]))
                for buffer, values in stage["pairs"]:
                    self.shared[buffer].copy_(self.shared[values])
            code = self._call(args, outs, self.stream, stage and self.shared[stage["fingerprints"]])
        return {"code": int(code)}

    def _call(self, args, outs, stream, fingerprints=None) -> int:
        """The candidate's call; `after_call` right after it, then (a ModelNew's) the copy into the outputs and,
        for a checked call, the outputs' fingerprints as the caller's stream reads them right after the call."""
        forward = getattr(self.lib, "forward", None)
        if forward is None:
            code = self.lib(args, outs, stream)
            self._record(self.after_call)
        else:
            results = forward(args)
            self._record(self.after_call)
            self.lib.deliver(results, args, outs)
            code = 0
        if fingerprints is not None:
            from cutegen.harness.calls import fingerprint

            for i, o in enumerate(outs):
                fingerprints[i].copy_(fingerprint(o).to(fingerprints.dtype))
        self._record(self.after_copy)
        return code

    def _record(self, *events) -> None:
        for e in events:
            if e is not None:
                e.record(self.stream)

    def op_final(self, msg: dict) -> None:
        """A ModelNew's returned tensors once everything it started is done, into the judge's `final` buffers; then
        let go of them, as `release` does (the judge reads them from its buffers from now on)."""
        self.op_sync(msg)
        returned = self.lib.returned or []
        for r, key in zip(returned, msg["outputs"]):
            self.shared[key].copy_(r)
        self.op_sync(msg)
        self.op_release(msg)

    def op_sync(self, msg: dict) -> None:
        if self.device == "cuda":
            import torch

            torch.cuda.synchronize()

    def op_release(self, msg: dict) -> None:
        release = getattr(self.lib, "release", None)
        if release is not None:
            release()

    def op_noop(self, msg: dict) -> None:
        return None


def open_shared(ref: tuple):
    """A judge's buffer, from the description remote.Shared made of it: CUDA IPC (torch's own rebuild) or a file."""
    kind = ref[0]
    if kind == "cuda":
        rebuild, args = ref[1]
        return rebuild(*args)
    import torch

    _, path, nbytes, dtype, shape, stride = ref
    raw = torch.from_file(path, shared=True, size=nbytes, dtype=torch.uint8)
    return raw.view(getattr(torch, dtype)).as_strided(shape, stride)


def failure(e: BaseException) -> dict:
    """A request that raised, as the judge's vocabulary names it (the judge checks the name; no name passes)."""
    from cutegen.harness.verdicts import Failed, Verdict

    if isinstance(e, Failed):
        return {"ok": False, "verdict": e.verdict.value, "message": e.message, **e.details}
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    name = type(e).__name__
    if name == "BuildFailed":
        assert hasattr(e, "log") and hasattr(e, "diagnostics")
        return {"ok": False, "verdict": Verdict.BUILD_FAILED.value, "message": f"load_inline failed: {e}",
                "build": {"ok": False, "log": e.log, "diagnostics": [d.to_json() for d in e.diagnostics]}}
    if name == "InitValueError" or isinstance(e, (LookupError, OSError)):  # a library that does not load, as before
        return {"ok": False, "verdict": Verdict.PROBLEM_ERROR.value, "message": text}
    if name == "OutOfMemoryError" or ("CUDA" in text and "out of memory" in text):
        return {"ok": False, "verdict": Verdict.OUT_OF_MEMORY.value, "poisoned": True,
                "message": f"the GPU ran out of memory in the candidate: {text}"}
    cuda = "CUDA error" in text or "cuda" in name.lower() or name == "AcceleratorError"
    return {"ok": False, "verdict": (Verdict.CUDA_ERROR if cuda else Verdict.ERROR).value, "message": text,
            "poisoned": cuda, "traceback": traceback.format_exc(limit=6)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m cutegen.harness.candidate")
    ap.add_argument("--read-fd", type=int, required=True)
    ap.add_argument("--write-fd", type=int, required=True)
    ap.add_argument("--device", choices=("cuda", "cpu"), required=True)
    args = ap.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the judge stops it; a Ctrl-C in a terminal reaches the judge
    requests = Connection(args.read_fd, writable=False)
    replies = Connection(args.write_fd, readable=False)
    host = CandidateHost(args.device)
    while True:
        try:
            msg = pickle.loads(requests.recv_bytes(FD_LIMIT))
        except EOFError:
            return
        replies.send_bytes(json.dumps(host.handle(msg), default=str).encode())


if __name__ == "__main__":
    main()
