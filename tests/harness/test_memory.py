"""Bounded memory: the judge counts its full-size buffers from a meta-device run (nothing allocated), compares in
chunks, and an out-of-memory is a verdict that names the problem's sizes. Judging a 3.2e9-element fp32 problem
ran out of memory on a 140 GB card ("90.00 GiB is allocated by PyTorch"); these check the accounting and the
chunked comparison on small tensors."""

from __future__ import annotations

import itertools
import json

import pytest
import torch

from cutegen.harness import memory
from cutegen.harness.compare import compare, measure
from cutegen.harness.gpu_checks import Failed, judge
from cutegen.harness.problem import load_problem

HUGE = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x / (1 + torch.abs(x))
def get_inputs():
    return [torch.rand(4096, 786432)]  # 3.2e9 fp32 elements: 12.9 GB
def get_init_inputs():
    return []
"""


def problem_from(tmp_path, text, name="p.py"):
    p = tmp_path / name
    p.write_text(text)
    return load_problem(p)


def test_the_plan_sizes_a_huge_problem_without_allocating_it(tmp_path):
    plan = memory.plan(problem_from(tmp_path, HUGE))
    n = 4096 * 786432 * 4
    assert (plan.input_bytes, plan.output_bytes) == (n, n) and plan.outputs == [((4096, 786432), torch.float32)]
    assert plan.judge_bytes() == 4 * n  # input buffers, outputs, truth, one reference temporary
    assert plan.judge_bytes(returned=True) == 5 * n  # + a ModelNew's own returned outputs
    assert plan.judge_bytes(fp64=True) == 4 * n + 6 * n  # + inputs and outputs in float64, one float64 temporary
    assert "inputs 12.88 GB, outputs 12.88 GB" in memory.message(plan, "cpu")


def test_what_fits_in_half_the_card_is_judged():
    card = 140e9
    for i_share, o_share in itertools.product([0.0, 0.05, 0.1, 0.2, 0.3, 0.5], repeat=2):
        i, o = int(i_share * card), int(o_share * card)
        if i + 2 * o <= card / 2:  # inputs + outputs + reference in half the card
            for returned in (False, True):
                assert memory.Plan(i, o).judge_bytes(returned=returned) <= card, (i_share, o_share, returned)


def test_a_problem_that_does_not_run_on_meta_is_sized_when_it_runs(tmp_path):
    text = HUGE.replace("return x / (1 + torch.abs(x))", "return x * float(x.sum().item() > 0)")
    plan = memory.plan(problem_from(tmp_path, text))
    assert plan.output_bytes is None and plan.judge_bytes() is None
    assert "unknown" in memory.message(plan, "cpu")


def test_an_out_of_memory_is_a_verdict_that_names_the_sizes(tmp_path):
    small = problem_from(tmp_path, HUGE.replace("torch.rand(4096, 786432)", "torch.rand(64, 100)"))

    def allocates_too_much(inputs, outputs, stream):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 90.00 GiB")
    with pytest.raises(Failed) as e:
        judge(small, allocates_too_much, trials=1, seed=0, timing=False, baselines=[])
    f = e.value
    assert f.verdict.value == "out-of-memory"
    assert "the problem's inputs 25.6 KB, outputs 25.6 KB; judging it holds about 102.4 KB at once" in f.message
    assert "Tried to allocate 90.00 GiB" in f.message and f.details["sizes"]["input_bytes"] == 64 * 100 * 4


CASES = {
    "tail": lambda o: o.view(-1)[-13:].fill_(float("nan")),
    "periodic": lambda o: o.view(-1)[::16].add_(1.0),
    "scattered": lambda o: o.view(-1).index_add_(0, torch.tensor([3, 400, 1001, 2047]), torch.full((4,), 0.5)),
    "inf": lambda o: o.view(-1)[5:9].fill_(float("inf")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_chunked_comparison_is_the_whole_tensor_comparison(case):
    torch.manual_seed(0)
    ref = torch.randn(64, 32)
    out = ref.clone()
    CASES[case](out)
    whole, pieces = compare(out, ref, 1e-4, 1e-4), compare(out, ref, 1e-4, 1e-4, chunk=7)
    assert whole is not None and json.dumps(whole.to_json()) == json.dumps(pieces.to_json())  # NaN as text
    assert measure(out, ref, 1e-4, 1e-4).worst == measure(out, ref, 1e-4, 1e-4, chunk=7).worst


def test_the_worst_error_is_in_units_of_the_tolerance():
    ref = torch.tensor([1.0, -2.0, 0.0, float("inf")])
    out = torch.tensor([1.0003, -2.0, 1e-4, float("inf")])  # 0.0003 / (1e-4 + 1e-4) = 1.5; 1e-4 / 1e-4 = 1
    m = measure(out, ref, 1e-4, 1e-4, chunk=3)
    assert m.worst == pytest.approx(1.5, rel=1e-3) and m.bad == 1
    assert measure(torch.tensor([float("nan")]), torch.tensor([1.0]), 1e-4, 1e-4).worst == float("inf")


def test_a_judge_in_small_chunks_gives_the_same_verdicts(tmp_path):
    small = problem_from(tmp_path, HUGE.replace("torch.rand(4096, 786432)", "torch.randn(33, 71)"))

    def softsign(inputs, outputs, stream):
        outputs[0].copy_(inputs[0] / (1 + inputs[0].abs()))
        return 0

    def tail(inputs, outputs, stream):
        softsign(inputs, outputs, stream)
        outputs[0].view(-1)[-5:] = 7.0
        return 0
    assert judge(small, softsign, trials=2, seed=0, timing=False, baselines=[], chunk=100)["verdict"] == "pass"
    with pytest.raises(Failed) as e:
        judge(small, tail, trials=2, seed=0, timing=False, baselines=[], chunk=100)
    assert e.value.details["mismatch"]["pattern"] == "tail"


def test_a_problem_too_big_for_the_card_is_refused_before_the_buffers(tmp_path, monkeypatch):
    """A card with 100 KB free (the CPU has no such count: the test gives it one): the 25.6 KB problem's judge needs
    about 4 x that, so it is refused with the sizes, before its buffers are allocated or the kernel runs."""
    small = problem_from(tmp_path, HUGE.replace("torch.rand(4096, 786432)", "torch.rand(64, 100)"))
    monkeypatch.setattr(memory, "available", lambda device: 60_000)
    monkeypatch.setattr(memory, "total", lambda device: 80_000)
    calls = []
    with pytest.raises(Failed) as e:
        judge(small, lambda i, o, s: calls.append(1) or 0, trials=1, seed=0, timing=False, baselines=[])
    assert e.value.verdict.value == "out-of-memory" and "refused before allocating" in e.value.message
    assert "inputs 25.6 KB, outputs 25.6 KB" in e.value.message and not calls
