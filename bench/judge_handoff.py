"""GPU: what the judge's process boundary costs on the clock, and whether its pieces work here (and in the jail).

The judge times a candidate that runs in another process by recording its events on its own stream around a
cross-process hand-off: judge stream -> interprocess event A -> candidate stream (waits A, runs, records B) ->
judge stream (waits B). This measures, interleaved in rounds, the same work three ways:

  local   the work on the judge's own stream, between the judge's events (what an in-process judge measured)
  remote  the same work in a candidate process, between the judge's events, through the hand-off
  null    the hand-off alone (the candidate runs nothing between A and B)

for a short (~5 us), a medium (~50 us) and a long (~1 ms) kernel (torch.cuda._sleep of a cycle count, so both
processes run the identical instruction stream). It also checks that a tensor the judge allocates in a private
memory pool is written by the candidate through CUDA IPC and read back by the judge.

    python bench/judge_handoff.py [--rounds 30] [--jail] --out handoff.json

--jail runs the judge (and so its candidate) inside the project's bubblewrap jail, as a candidate runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from cutegen.harness.intervals import median_interval  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--jail", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child()
    if args.jail:
        from cutegen.sandbox import Jail, availability

        found = availability()
        if not found.ok:
            sys.exit(f"no jail: {found.reason}")
        jail = Jail(found.bwrap).with_paths(readonly=[str(ROOT)])
        cmd = [sys.executable, str(Path(__file__).resolve()), "--rounds", str(args.rounds)]
        proc = subprocess.run(jail.command(cmd, limited=False), capture_output=True, text=True, timeout=400)
        sys.stderr.write(proc.stderr[-4000:])
        result = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {"error": proc.returncode}
        result["jailed"] = True
    else:
        result = measure(args.rounds)
    line = json.dumps(result)
    print(line)
    if args.out:
        Path(args.out).write_text(line + "\n")


def measure(rounds: int) -> dict:
    import torch

    from cutegen.harness.calls import sleep_rate

    child = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, bufsize=1)
    ask = lambda msg: (child.stdin.write(json.dumps(msg) + "\n"), child.stdin.flush(), json.loads(child.stdout.readline()))[2]
    try:
        from torch.multiprocessing.reductions import reduce_tensor

        pool = torch.cuda.MemPool()
        with torch.cuda.use_mem_pool(pool):
            shared = torch.zeros(1 << 20, device="cuda")
        secret = torch.full((1 << 20,), 7.0, device="cuda")  # in the default pool: the candidate must not reach it
        fn, fargs = reduce_tensor(shared)
        import base64, pickle
        stream = torch.cuda.Stream()
        a = torch.cuda.Event(interprocess=True)
        reply = ask({"op": "open", "tensor": base64.b64encode(pickle.dumps((fn, fargs))).decode(),
                     "event": base64.b64encode(bytes(a.ipc_handle())).decode()})
        b = torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), base64.b64decode(reply["event"]))
        rate = sleep_rate()
        # ordering: the judge's stream sleeps 50 ms before A; the candidate fills after waiting A
        with torch.cuda.stream(stream):
            torch.cuda._sleep(int(50 * rate))
            shared.fill_(1.0)
            a.record(stream)
        ask({"op": "fill", "value": 3.0})
        stream.wait_event(b)
        with torch.cuda.stream(stream):
            total = float(shared.sum())
        out: dict = {"ipc_ordered_fill": total == 3.0 * (1 << 20), "secret_intact": float(secret[0]) == 7.0,
                     "segment_bytes": reply.get("segment_bytes"), "cycles_per_ms": rate}
        import time
        t = time.perf_counter()
        for _ in range(200):
            ask({"op": "noop"})
        out["pipe_roundtrip_us"] = (time.perf_counter() - t) / 200 * 1e6
        slack = int(max(0.3, 3 * out["pipe_roundtrip_us"] / 1e3) * rate)
        for name, ms in (("short", 0.005), ("medium", 0.05), ("long", 1.0)):
            cycles = int(ms * rate)
            rows: dict = {"local": [], "remote": [], "null": []}
            for r in range(rounds):
                order = ["local", "remote", "null"]
                for how in order[r % 3:] + order[:r % 3]:
                    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(16)]
                    with torch.cuda.stream(stream):
                        for s, e in pairs:
                            torch.cuda._sleep(slack)
                            s.record(stream)
                            if how == "local":
                                torch.cuda._sleep(cycles)
                            else:
                                a.record(stream)
                                ask({"op": "run", "cycles": cycles if how == "remote" else 0})
                                stream.wait_event(b)
                            e.record(stream)
                    pairs[-1][1].synchronize()
                    rows[how].append([s.elapsed_time(e) for s, e in pairs])
            out[name] = {how: _summary(v) for how, v in rows.items()}
            loc = [statistics.median(v) for v in rows["local"]]
            rem = [statistics.median(v) for v in rows["remote"]]
            out[name]["remote_over_local"] = _summary([[y / x] for x, y in zip(loc, rem)])
        return out
    finally:
        child.kill()


def child() -> None:
    import base64
    import pickle

    import torch

    stream = torch.cuda.Stream()
    b = torch.cuda.Event(interprocess=True)
    shared = a = None
    for line in sys.stdin:
        msg = json.loads(line)
        reply: dict = {}
        if msg["op"] == "open":
            fn, fargs = pickle.loads(base64.b64decode(msg["tensor"]))
            shared = fn(*fargs)
            a = torch.cuda.Event.from_ipc_handle(torch.cuda.current_device(), base64.b64decode(msg["event"]))
            reply = {"event": base64.b64encode(bytes(b.ipc_handle())).decode(),
                     "segment_bytes": shared.untyped_storage().nbytes()}
        elif msg["op"] == "fill":
            stream.wait_event(a)
            with torch.cuda.stream(stream):
                shared.fill_(msg["value"])
            b.record(stream)
        elif msg["op"] == "run":
            stream.wait_event(a)
            with torch.cuda.stream(stream):
                if msg["cycles"]:
                    torch.cuda._sleep(msg["cycles"])
            b.record(stream)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def _summary(blocks: list[list[float]]) -> dict:
    meds = [statistics.median(b) for b in blocks]  # one block of calls a round
    low, high = median_interval(meds)
    return {"median": statistics.median(meds), "low": low, "high": high, "n": len(meds)}


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
