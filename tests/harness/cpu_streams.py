"""Streams on the CPU, for judging Python stand-in kernels the way the GPU judge calls real ones (calls.py).

A stream is a queue of work that runs when the device is synchronized, in order: first the caller's stream
(the staged inputs, then whatever was put on it, then the judge's read of the outputs), then every side stream.
So, for a stand-in kernel:
- work enqueued on the `stream` it is handed is ordered with the caller both ways (correct);
- work done at once, during the call, runs before the staged inputs are written: it reads the poison (a
  kernel that does not wait for its inputs);
- work enqueued on a side stream runs after all of the caller's work, after the judge has read the outputs
  (a result not ready when the call returned).
"""

from __future__ import annotations

from cutegen.harness.calls import HostCaller


class CpuStream:
    def __init__(self):
        self.pending: list = []

    def enqueue(self, fn) -> None:
        self.pending.append(fn)

    def run(self) -> None:
        while self.pending:
            self.pending.pop(0)()


class QueueCaller(HostCaller):
    def __init__(self, *sides: CpuStream):
        self.stream = CpuStream()
        self.sides = list(sides)

    def sync(self) -> None:
        self.stream.run()
        for side in self.sides:
            side.run()

    def stage(self, buffers: list, fresh: list) -> None:
        pairs = list(zip(buffers, fresh))
        self.stream.enqueue(lambda: [b.copy_(f) for b, f in pairs])

    def consume(self, fn):
        box: dict = {}
        self.stream.enqueue(lambda: box.update(value=fn()))
        return box

    def value(self, pending):
        return super().value(pending["value"] if isinstance(pending, dict) else pending)
