"""Stream order judged as a PyTorch program calls a kernel, with stand-in kernels on CPU streams (cpu_streams.py):
each way of getting the order wrong gets the verdict that names its direction, and none passes; kernels that are
simply wrong (or cache, or race inside themselves) keep their own verdicts instead of a stream one."""

from __future__ import annotations

import pytest

from cutegen.harness.gpu_checks import Failed, judge
from cutegen.harness.problem import load_problem
from tests.harness.cpu_streams import CpuStream, QueueCaller

PROBLEM = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x / (1 + torch.abs(x))
def get_inputs():
    return [torch.randn(16, 257)]
def get_init_inputs():
    return []
"""


@pytest.fixture
def problem(tmp_path):
    p = tmp_path / "softsign.py"
    p.write_text(PROBLEM)
    return load_problem(p)


def softsign_into(inputs, outputs):
    x = inputs[0]
    outputs[0].copy_(x / (1 + x.abs()))


def verdict(problem, kernel, *sides, trials=5) -> str:
    try:
        return judge(problem, kernel, trials=trials, seed=0, timing=False, baselines=[],
                     caller=QueueCaller(*sides))["verdict"]
    except Failed as f:
        return f.verdict.value


def failure(problem, kernel, *sides) -> Failed:
    with pytest.raises(Failed) as e:
        judge(problem, kernel, trials=5, seed=0, timing=False, baselines=[], caller=QueueCaller(*sides))
    return e.value


def test_work_on_the_callers_stream_passes(problem):
    def kernel(inputs, outputs, stream):
        stream.enqueue(lambda: softsign_into(inputs, outputs))
        return 0
    assert verdict(problem, kernel) == "pass"


def test_reading_the_inputs_at_once_did_not_wait_for_them(problem):
    """What a kernel on a stream of its own that never waits for the caller's stream does: it runs while the
    caller is still writing its inputs. The old judge synchronized the device before the call: it passed."""
    def kernel(inputs, outputs, stream):
        softsign_into(inputs, outputs)  # before the staged inputs are written
        return 0
    f = failure(problem, kernel)
    assert f.verdict.value == "inputs-not-awaited" and "did not wait for its inputs" in f.message


def test_waiting_on_the_wrong_stream_did_not_wait_for_the_inputs(problem):
    default = CpuStream()  # the legacy default stream: nothing of the caller's is on it

    def kernel(inputs, outputs, stream):
        default.run()  # cudaStreamWaitEvent on an event of the wrong stream: nothing to wait for
        softsign_into(inputs, outputs)
        return 0
    assert verdict(problem, kernel, default) == "inputs-not-awaited"


def test_a_side_stream_the_caller_does_not_wait_for_is_a_result_not_ready(problem):
    side = CpuStream()

    def kernel(inputs, outputs, stream):
        side.enqueue(lambda: softsign_into(inputs, outputs))  # waits for the inputs, never joined back
        return 0
    f = failure(problem, kernel, side)
    assert f.verdict.value == "result-not-ready" and "not ready when the call returned" in f.message


def test_an_event_recorded_but_never_waited_for_is_a_result_not_ready(problem):
    side = CpuStream()
    recorded = []

    def kernel(inputs, outputs, stream):
        side.enqueue(lambda: softsign_into(inputs, outputs))
        side.enqueue(lambda: recorded.append("event"))  # cudaEventRecord(done, side): nobody waits on `done`
        return 0
    assert verdict(problem, kernel, side) == "result-not-ready" and recorded


def test_unordered_both_ways_is_other_stream(problem):
    side = CpuStream()

    def kernel(inputs, outputs, stream):
        x = inputs[0].clone()  # read now (the poison) ...
        side.enqueue(lambda: outputs[0].copy_(x / (1 + x.abs())))  # ... written after the caller read it
        return 0
    assert verdict(problem, kernel, side) == "other-stream"


def test_a_race_that_loses_only_sometimes_is_caught_across_trials(problem):
    side, calls = CpuStream(), []

    def kernel(inputs, outputs, stream):
        calls.append(1)
        target = side if len(calls) % 4 == 3 else stream  # late on the third call only
        target.enqueue(lambda: softsign_into(inputs, outputs))
        return 0
    assert verdict(problem, kernel, side) == "result-not-ready"


def test_a_wrong_kernel_on_the_right_stream_is_a_mismatch_not_a_stream_fault(problem):
    def kernel(inputs, outputs, stream):
        stream.enqueue(lambda: outputs[0].copy_(inputs[0] / (1 + inputs[0].abs()) * 1.01))
        return 0
    f = failure(problem, kernel)
    assert f.verdict.value == "mismatch" and "worst error" in f.message


def test_a_race_inside_the_kernel_stays_a_mismatch(problem):
    """Wrong on every other call, all on the caller's stream: a re-run with the device synchronized fails too,
    so the failure is not pinned on stream order."""
    calls = []

    def kernel(inputs, outputs, stream):
        calls.append(1)
        bad = len(calls) % 2 == 0

        def work():
            softsign_into(inputs, outputs)
            if bad:
                outputs[0].view(-1)[7] += 1.0
        stream.enqueue(work)
        return 0
    assert verdict(problem, kernel) == "mismatch"


def test_results_cached_by_pointer_stay_cached_results(problem):
    cache = {}

    def kernel(inputs, outputs, stream):
        def work():
            key = inputs[0].data_ptr()
            if key not in cache:
                softsign_into(inputs, outputs)
                cache[key] = outputs[0].clone()
            outputs[0].copy_(cache[key])
        stream.enqueue(work)
        return 0
    assert verdict(problem, kernel) == "cached-results"


class SideStreamModelNew:
    """A ModelNew that runs its kernel under `with torch.cuda.stream(side)` into memory the allocator gives it
    again every call, and returns without `current.wait_stream(side)`: the caller's copy reads the previous
    call's values. The old judge called these cached-results (or constant-output, or mismatch)."""

    def __init__(self, side: CpuStream):
        self.side, self.buffer, self.returned = side, None, None

    def __call__(self, inputs, outputs, stream):
        x = inputs[0]
        if self.buffer is None:
            self.buffer = x.new_zeros(x.shape)
        r = self.buffer
        self.side.enqueue(lambda: r.copy_(x / (1 + x.abs())))
        stream.enqueue(lambda: outputs[0].copy_(r))  # the adapter's copy: the caller reads the result
        self.returned = [r]
        return 0

    def release(self):
        self.returned = None


def test_a_side_stream_modelnew_is_result_not_ready_not_cached_results(problem):
    side = CpuStream()
    assert verdict(problem, SideStreamModelNew(side), side) == "result-not-ready"


def test_a_launch_error_is_still_a_launch_error(problem):
    assert verdict(problem, lambda i, o, s: 700) == "launch-error"
