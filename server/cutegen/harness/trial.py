"""One correctness trial, called as a PyTorch program calls (calls.py), and what its failure is attributed to.

A trial: fresh seeded inputs written into the SAME input buffers as every trial (a kernel caching results by
pointer sees new values at an old address), the SAME output buffers poisoned, the call, then in order: a
launch error, outputs still changing after the caller's stream read them, inputs written to, the truth
(truth.py, computed only now), the outputs against it.

A failure is attributed before it is named. The trial is re-run with the device synchronized around the call:
if it then passes twice, the kernel computes right and its stream order is what failed, and the direction is
found by re-running with each half of the protocol alone (inputs written on the stream just before the call
but the result read only after a device synchronization: fails twice -> it did not wait for its inputs; its
result changed after the caller's stream read it -> not ready when the call returned). Only when no stream
fault shows is the failure the kernel's own: constant output, cached results (bit-identical to the previous
trial's for new inputs), or a mismatch. A race that loses only sometimes is caught across trials: each one
runs the whole protocol.
"""

from __future__ import annotations

import time

import torch

from cutegen.harness import memory
from cutegen.harness import truth as truths
from cutegen.harness.abi import SCALARS
from cutegen.harness.calls import fingerprints, poison
from cutegen.harness.compare import CHUNK, kind_mismatch, measure, report
from cutegen.harness.verdicts import Failed, Verdict

RERUNS = 2  # each re-run that attributes a failure must agree twice: an in-kernel race is not a stream fault


class Trials:
    """The state a run's trials share: the buffers, the previous trial's output fingerprints, the errors seen."""

    def __init__(self, problem, lib, caller, model, mode: str, *, chunk: int = CHUNK):
        self.problem, self.lib, self.caller, self.model = problem, lib, caller, model
        self.mode, self.chunk = mode, chunk
        self.plan: memory.Plan | None = None  # the sizes, from the first trial (see _allocate)
        self.truth: truths.Truth | None = None
        self.buffers: list | None = None
        self._refs: list[torch.Tensor] | None = None  # this trial's fp32 reference, when at hand (_allocate, _expected)
        self.outs: list[torch.Tensor] | None = None
        self.prev: list[int] | None = None
        self.kernel_error = 0.0
        self.reference_error: float | None = None
        self.tolerance: tuple[float, float] | None = None
        self.count = 0

    # -- what the first trial made (_allocate): every other step runs after it ----------------------

    @property
    def _buffers(self) -> list:
        assert self.buffers is not None, "used before the first trial"
        return self.buffers

    @property
    def _outs(self) -> list[torch.Tensor]:
        assert self.outs is not None, "used before the first trial"
        return self.outs

    @property
    def _truth(self) -> truths.Truth:
        assert self.truth is not None, "used before the first trial"
        return self.truth

    # -- a trial ----------------------------------------------------------------------------------

    def run(self, seed: int) -> None:
        fresh = self._fresh(seed)
        self._allocate(fresh)
        args = self._args(fresh)
        late, final = self._call(args, fresh)
        self._check_unchanged(fresh)
        # The truth is computed on the judge's own copy of the inputs, never on the buffers the kernel holds: a
        # candidate in another process could rewrite those between the check above and the truth below.
        expected = self._expected(fresh)
        self._check_kinds(expected)
        failure = self._judge(self.outs, expected, fresh, first=self.count == 0)
        del fresh
        if failure is None and not late:
            failure = self._constant_output(expected)
        if late or failure is not None:
            self._attribute(seed, late, failure, expected, args, final)
        self.prev = final
        self.count += 1
        self._refs = None
        _release(self.lib)

    def _fresh(self, seed: int) -> list:
        torch.manual_seed(seed)
        device = self.caller.device
        with torch.device(device):
            values = self.problem.make_inputs()
        bad = [type(x).__name__ for x in values if not isinstance(x, (torch.Tensor, *SCALARS))]
        if bad:
            raise Failed(Verdict.PROBLEM_ERROR, f"get_inputs() returned values the kernel ABI cannot pass "
                                                f"({', '.join(bad)}): tensors and Python numbers only")
        return [x.to(device).contiguous() if isinstance(x, torch.Tensor) else x for x in values]

    def _allocate(self, fresh: list) -> None:
        """On the first trial: the outputs' shapes from the reference on these inputs, the memory plan from the real
        sizes (an early out-of-memory verdict when the judge's buffers cannot fit), the truth for this problem and
        device, and the buffers every trial reuses. That fp32 result is kept for the first trial's own uses (the
        fp32 reference's error, or the truth in kernelbench mode) rather than computed twice: it is in memory
        during the first call only, and a candidate that found and copied it would fail the next trial. (A
        meta-device run would size the problem without running it, but its first use costs seconds of imports
        in every fresh worker.)"""
        if self.outs is not None:
            return
        self._refs = truths.listed(self.model(*fresh))
        specs = [(tuple(r.shape), r.dtype) for r in self._refs]
        device, returned = self.caller.device, hasattr(self.lib, "returned")
        self.plan = memory.Plan(memory.bytes_of(fresh), sum(_numel(s) * d.itemsize for s, d in specs), specs)
        refused = memory.check_fits(self.plan, device, returned=returned, allocated=memory.bytes_of(fresh))
        if refused:
            raise Failed(Verdict.OUT_OF_MEMORY, refused, sizes={"input_bytes": self.plan.input_bytes,
                                                                "output_bytes": self.plan.output_bytes})
        self.truth = truths.Truth(self.model, self.mode, [d for _, d in specs],
                                  memory.fp64_fits(self.plan, device, returned=returned,
                                                   allocated=memory.bytes_of(fresh)))
        self.buffers = [self._empty(tuple(x.shape), x.dtype) if isinstance(x, torch.Tensor) else x for x in fresh]
        self.outs = [self._empty(shape, dtype) for shape, dtype in specs]

    def _empty(self, shape: tuple, dtype: torch.dtype) -> torch.Tensor:
        """A buffer the kernel is handed: from a candidate process's shared allocator (harness/remote.py: apart
        from the judge's other memory), or plain for a library loaded in this process (benches, tests)."""
        empty = getattr(self.lib, "empty", None)
        return empty(shape, dtype) if empty else torch.empty(shape, dtype=dtype, device=self.caller.device)

    def _args(self, fresh: list) -> list:
        """The call's values: the input buffers for tensors, this trial's numbers as they are."""
        return [b if isinstance(b, torch.Tensor) else f for b, f in zip(self._buffers, fresh)]

    def _call(self, args: list, fresh: list | None = None) -> tuple[bool, list[int]]:
        """One call under the protocol. With `fresh`, its values are written into the input buffers on the caller's
        stream just before the call (staged); without, the buffers already hold them and the device is
        synchronized before the call. Returns (late, final fingerprints): late = the outputs changed after the
        caller's stream read them."""
        caller, lib, outs = self.caller, self.lib, self._outs
        for o in outs:
            poison(o)
        if fresh is not None:
            for b in _tensors(self._buffers):
                poison(b, inputs=True)
        caller.sync()
        if fresh is not None:
            getattr(caller, "expect_outputs", lambda n: None)(len(outs or []))
            caller.stage(_tensors(self._buffers), _tensors(fresh))
        prepare = getattr(lib, "arguments", None)
        started = time.perf_counter()
        code = lib(prepare(args) if prepare else args, outs, caller.stream)
        caller.called(time.perf_counter() - started)
        consumed = caller.consume(lambda: fingerprints(outs))
        if code != 0:
            raise Failed(Verdict.LAUNCH_ERROR,
                         f"cutegen_forward returned {code} (a cudaError_t: {cuda_error_name(code)})")
        caller.sync()
        final = caller.value(fingerprints(_final_values(lib, outs)))
        return caller.value(consumed) != final, final

    def _check_unchanged(self, fresh: list) -> None:
        for b, f in zip(_tensors(self._buffers), _tensors(fresh)):
            if not same_bits(b, f):
                raise Failed(Verdict.INPUTS_MUTATED, "the kernel wrote into its inputs (they must stay unchanged)")

    def _check_kinds(self, expected: list[torch.Tensor]) -> None:
        returned = _final_values(self.lib, self._outs)
        for i, (r, t) in enumerate(zip(returned, expected)):
            wrong = kind_mismatch(r, t)
            if wrong is not None:
                raise Failed(Verdict.MISMATCH, f"output {i}: {wrong.message}", mismatch=wrong.to_json())

    def check_timed(self, originals: list, args: list) -> None:
        """After timing: the inputs the last timed call was handed must still be the judge's values (`originals`,
        kept apart), and the outputs it left must be right for them. A kernel that computes while it is checked
        and skips work, or rewrites its inputs, while it is timed ends here."""
        assert self.truth is not None and self.outs is not None  # the trials ran first
        self.caller.sync()
        for b, f in zip(_tensors(args), _tensors(originals)):
            if not same_bits(b, f):
                raise Failed(Verdict.INPUTS_MUTATED, "the kernel wrote into its inputs while it was timed (they must "
                                                     "stay unchanged)")
        values = _final_values(self.lib, self.outs)  # the truth on the judge's copy, as in a trial (run)
        failure = self._judge(values, self.truth.evaluate(originals), originals, first=False, record=False)
        _release(self.lib)
        if failure is not None:
            raise Failed(Verdict.TIMED_CALLS_WRONG, f"correct in {self.count} checked calls, but the outputs its timed "
                                                    f"calls left are wrong ({self.errors_text(failure)}): it does "
                                                    "less work when it is timed than when it is checked")

    # -- the rule ---------------------------------------------------------------------------------

    def _expected(self, args: list) -> list[torch.Tensor]:
        """What this trial is judged against. The first trial: the truth, so the record holds the kernel's and the
        fp32 reference's errors against it. A later one, under the fp64 truth: the fp32 reference first, and the
        truth only when the kernel is not within tolerance of it: the rule accepts either (truth.py), so the float64
        evaluation (every tensor read and written at twice the width) is paid only where it can change the verdict."""
        truth, outs = self.truth, self.outs
        assert truth is not None and outs is not None  # set by the first trial's _allocate
        if self.count == 0 or truth.kind != "fp64":
            return truth.evaluate(args, fp32=self._refs)
        refs = truth.reference(args)
        self._check_kinds(refs)
        if all(self._error(o, r) <= 1.0 for o, r in zip(outs, refs)):
            return refs
        self._refs = refs
        return truth.evaluate(args, fp32=refs)

    def _tolerance(self, t: torch.Tensor) -> tuple[float, float]:
        """(atol, rtol) for an output of `t`'s dtype (the problem's own, else problem.DEFAULT_TOLERANCE)."""
        return self.problem.tolerance(str(t.dtype).removeprefix("torch."))

    def _error(self, out: torch.Tensor, against: torch.Tensor) -> float:
        return measure(out, against, *self._tolerance(against), chunk=self.chunk).worst

    def _judge(self, values, expected, args, *, first: bool, record: bool = True) -> dict | None:
        """None when every output passes truth.passes; else what failed (output, errors). `record`: the errors
        count for the run's accuracy (a re-run's do not)."""
        refs_error = None
        for i, (o, t) in enumerate(zip(values, expected)):
            atol, rtol = self._tolerance(t)
            self.tolerance = self.tolerance or (atol, rtol)
            error = self._error(o, t)
            if refs_error is None and (first or error > 1.0):
                refs_error = self._reference_errors(args, expected)
            ref_error = refs_error[i] if refs_error else None
            if record:
                self._record(error, ref_error)
            if not truths.passes(error, ref_error) and not self._within_reference(i, o, args):
                return {"output": i, "error": error, "reference_error": ref_error, "atol": atol, "rtol": rtol}
        return None

    def _reference_errors(self, args, expected) -> list[float] | None:
        tolerances = [self._tolerance(t) for t in expected]
        return truths.reference_error(self._truth, args, expected, tolerances, chunk=self.chunk, refs=self._refs)

    def _within_reference(self, i: int, out: torch.Tensor, args: list) -> bool:
        """KernelBench's own check, the rule's other half under the fp64 truth: within tolerance of the fp32
        reference. (Under the fp32 truth that reference is what was just measured.)"""
        truth = self.truth
        if truth is None or truth.kind != "fp64":
            return False
        if self._refs is None:
            self._refs = truth.reference(args)
        return self._error(out, self._refs[i]) <= 1.0

    def _record(self, error: float, ref_error: float | None) -> None:
        self.kernel_error = max(self.kernel_error, error)
        if ref_error is not None:
            self.reference_error = max(self.reference_error or 0.0, ref_error)

    # -- attribution --------------------------------------------------------------------------------

    def _attribute(self, seed, late, failure, expected, args, final) -> None:
        stream = self._stream_fault(seed, late, expected, args)
        if stream is not None:
            raise stream
        self._kernel_fault(failure, expected, final, seed)

    def _stream_fault(self, seed, late, expected, args) -> Failed | None:
        synced_ok = True
        for _ in range(RERUNS):  # the device synchronized before the call, the result judged after another sync
            ok, lt = self._rerun(args, None, expected)
            late, synced_ok = late or lt, synced_ok and ok
            if not ok:
                break
        inputs_bad = False
        if synced_ok:
            fresh = self._fresh(seed)
            if all(same_bits(b, f) for b, f in zip(_tensors(self._buffers), _tensors(fresh))):  # a repeatable trial
                staged = [self._rerun(args, fresh, expected) for _ in range(RERUNS)]
                late = late or any(lt for _, lt in staged)
                inputs_bad = not any(ok for ok, _ in staged)
        return _stream_verdict(inputs_bad, late, synced_ok)

    def _rerun(self, args, fresh, expected) -> tuple[bool, bool]:
        """(correct, late) of one more call: with `fresh`, staged as in a trial; without, the device synchronized
        before it. Correct is judged on the final values (a ModelNew's returned tensors after synchronizing)."""
        late, _ = self._call(args, fresh)
        ok = self._judge(_final_values(self.lib, self._outs), expected, args, first=False, record=False) is None
        _release(self.lib)
        return ok, late

    def _constant_output(self, expected) -> dict | None:
        """A constant (often zero) output where the truth is not is a failure even within tolerance: zeros pass
        a loose tolerance wherever the true values are small (a known reward hack)."""
        for i, (out, t) in enumerate(zip(self._outs, expected)):
            if out.numel() > 1 and t.numel() > 1 and _constant(out) and not _constant(t):
                return {"output": i, "constant": True}
        return None

    def _kernel_fault(self, failure, expected, final, seed) -> None:
        i = failure["output"]
        out, t = self._outs[i], expected[i]
        if failure.get("constant") or (out.numel() > 1 and t.numel() > 1 and _constant(out) and not _constant(t)):
            first = float(out.reshape(-1)[0])
            kind = "zero" if first == 0.0 else f"constant ({first:.6g})"
            raise Failed(Verdict.CONSTANT_OUTPUT, f"output {i} is {kind} everywhere; the truth is not")
        mismatch = report(out, t, failure["atol"], failure["rtol"], chunk=self.chunk)
        if self.prev is not None and final == self.prev:
            raise Failed(Verdict.CACHED_RESULTS, "new input values gave bit-identical outputs to the previous call: "
                                                 "results are cached across calls instead of computed",
                         mismatch=mismatch.to_json())
        raise Failed(Verdict.MISMATCH, f"output {i}: {mismatch.message} (atol={failure['atol']:g}, "
                                       f"rtol={failure['rtol']:g}, seed {seed}); {self.errors_text(failure)}",
                     mismatch=mismatch.to_json())

    def errors_text(self, failure: dict) -> str:
        against = "the fp64 truth" if self._truth.kind == "fp64" else "the fp32 eager reference"
        text = f"worst error {failure['error']:.3g}× the tolerance against {against}"
        if failure["reference_error"] is not None:
            text += f" (the fp32 eager reference's own: {failure['reference_error']:.3g}×)"
        return text

    # -- what the record keeps ----------------------------------------------------------------------

    def accuracy(self) -> dict:
        atol, rtol = self.tolerance or (0.0, 0.0)
        return {"truth": self._truth.kind, "mode": self.mode, "atol": atol, "rtol": rtol,
                "kernel_error": self.kernel_error, "reference_error": self.reference_error, "note": self._truth.note}


def _stream_verdict(inputs_bad: bool, late: bool, synced_ok: bool) -> Failed | None:
    if inputs_bad and late:
        return Failed(Verdict.OTHER_STREAM, "its work is unordered with the caller's stream both ways: it read its "
                                            "inputs before the caller's stream had written them, and its result was "
                                            "not ready when the call returned (correct with the device synchronized "
                                            "around the call)")
    if inputs_bad:
        return Failed(Verdict.INPUTS_NOT_AWAITED, "did not wait for its inputs: called as a PyTorch program calls it "
                                                  "(inputs written on the caller's stream just before the call), it "
                                                  "read them before they were written; with the device synchronized "
                                                  "before the call it is correct")
    if late:
        what = "correct once the device is synchronized" if synced_ok else "and wrong even with the device synchronized"
        return Failed(Verdict.RESULT_NOT_READY, "result not ready when the call returned: its outputs still changed "
                                                f"after the caller's stream had read them ({what}); work on another "
                                                "stream must be waited for by the caller's stream before returning")
    return None


def _final_values(lib, outs: list[torch.Tensor]) -> list[torch.Tensor]:
    """What the kernel produced, once everything it started is done: a ModelNew's returned tensors, else the
    output buffers it wrote."""
    returned = getattr(lib, "returned", None)
    return returned if returned is not None else outs


def _release(lib) -> None:
    release = getattr(lib, "release", None)
    if release is not None:
        release()


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _tensors(values: list) -> list[torch.Tensor]:
    return [x for x in values if isinstance(x, torch.Tensor)]


def _constant(t: torch.Tensor) -> bool:
    """Every element equal (one pass; NaN makes it False: an unwritten output is a mismatch of NaN, not constant)."""
    flat = t.reshape(-1)
    if flat.is_floating_point():
        low, high = torch.aminmax(flat)
        return bool(low == high)
    return bool(flat.min() == flat.max())


_WORDS = {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.uint8}


def same_bits(a: torch.Tensor, b: torch.Tensor, chunk: int = 1 << 26) -> bool:
    """Bitwise equality (NaN poison equals itself here; torch.equal says NaN != NaN), one machine word per
    element and in chunks, so the comparison's temporary stays small."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    wa, wb = _words(a), _words(b)
    return all(torch.equal(wa[i:i + chunk], wb[i:i + chunk]) for i in range(0, wa.numel(), chunk))


def _words(t: torch.Tensor) -> torch.Tensor:
    flat = (t if t.is_contiguous() else t.contiguous()).reshape(-1)
    return flat.view(_WORDS[t.element_size()]) if t.dtype is not torch.bool else flat.view(torch.uint8)


def cuda_error_name(code: int) -> str:
    try:
        from cuda.bindings import runtime  # present with recent CUDA Python; optional
        return runtime.cudaGetErrorName(code)[1].decode()
    except Exception:
        return {1: "cudaErrorInvalidValue", 2: "cudaErrorMemoryAllocation", 9: "cudaErrorInvalidConfiguration",
                98: "cudaErrorInvalidDeviceFunction", 209: "cudaErrorNoKernelImageForDevice",
                700: "cudaErrorIllegalAddress", 719: "cudaErrorLaunchFailure"}.get(code, "see cudaGetErrorName")
