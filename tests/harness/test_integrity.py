"""The integrity checks with CPU stand-in kernels: each known cheat gets its own named verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.harness.gpu_checks import Failed, judge
from cutegen.harness.problem import load_problem
from cutegen.pairing import find_problem

PROBLEM = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x / (1 + torch.abs(x))
batch_size, dim = 8, 1000
def get_inputs():
    return [torch.randn(batch_size, dim)]
def get_init_inputs():
    return []
"""


@pytest.fixture
def problem(tmp_path):
    p = tmp_path / "softsign.py"
    p.write_text(PROBLEM)
    return load_problem(p)


def softsign(inputs, outputs, stream):
    x = inputs[0]
    outputs[0].copy_(x / (1 + x.abs()))
    return 0


def run(problem, kernel):
    try:
        return judge(problem, kernel, trials=5, seed=0, timing=False, baselines=[])["verdict"]
    except Failed as v:
        return v.verdict.value


def test_correct_kernel_passes(problem):
    assert run(problem, softsign) == "pass"


def test_zero_and_constant_outputs_are_named(problem):
    assert run(problem, lambda i, o, s: (o[0].zero_(), 0)[1]) == "constant-output"
    assert run(problem, lambda i, o, s: (o[0].fill_(0.5), 0)[1]) == "constant-output"


def test_mutating_inputs_is_caught(problem):
    def mutating(inputs, outputs, stream):
        softsign(inputs, outputs, stream)
        inputs[0].copy_(outputs[0])
        return 0
    assert run(problem, mutating) == "inputs-mutated"


def test_results_cached_across_calls_are_caught(problem):
    cache = {}

    def caching(inputs, outputs, stream):
        key = inputs[0].data_ptr()
        if key not in cache:
            softsign(inputs, outputs, stream)
            cache[key] = outputs[0].clone()
        outputs[0].copy_(cache[key])
        return 0
    assert run(problem, caching) == "cached-results"


def test_unwritten_tail_is_a_mismatch_with_report(problem):
    def tail_bug(inputs, outputs, stream):
        x = inputs[0].reshape(-1)[:-7]
        outputs[0].reshape(-1)[:-7].copy_(x / (1 + x.abs()))
        return 0
    with pytest.raises(Failed) as v:
        judge(problem, tail_bug, trials=5, seed=0, timing=False, baselines=[])
    assert v.value.verdict == "mismatch" and v.value.details["mismatch"]["pattern"] == "tail"


def test_error_code_from_launcher_is_a_launch_error(problem):
    assert run(problem, lambda i, o, s: 700) == "launch-error"


def test_problem_pairing_directive_then_sibling(tmp_path):
    (tmp_path / "k.py").write_text(PROBLEM)
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "other.py").write_text(PROBLEM)
    k = tmp_path / "k.cu"
    k.write_text("// nothing\n")
    assert find_problem(k) == (tmp_path / "k.py").resolve()
    k.write_text("// cutegen: problem=refs/other.py\n")
    assert find_problem(k) == (tmp_path / "refs" / "other.py").resolve()
    (tmp_path / "lonely.cu").write_text("")
    assert find_problem(tmp_path / "lonely.cu") is None


def test_problem_errors_are_plain(tmp_path):
    from cutegen.harness.problem import ProblemError
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\nclass Model: pass\n")
    with pytest.raises(ProblemError, match="lacks get_inputs, get_init_inputs"):
        load_problem(bad)
    broken = tmp_path / "broken.py"
    broken.write_text("def broken(:\n")
    with pytest.raises(ProblemError, match="failed to import: SyntaxError"):
        load_problem(broken)


def test_modelnew_returning_its_input_is_named_aliasing(problem, tmp_path):
    from cutegen.harness.modelnew import ModelNewAdapter

    path = Path(__file__).resolve().parents[1] / "kernels" / "modelnew_alias.py"
    assert run(problem, ModelNewAdapter(path, problem.init_values(0), 0)) == "output-aliases-input"


def test_load_inline_errors_map_to_python_lines(tmp_path):
    from cutegen.harness.modelnew import map_build_errors

    py = tmp_path / "model_new.py"
    py.write_text('src = """\n__global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n"""\nclass ModelNew: pass\n')
    gen = tmp_path / "build" / "cuda.cu"
    gen.parent.mkdir()
    gen.write_text("#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n\n"
                   "__global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n")
    log = f'Error building extension \'m\': [1/2] nvcc ...\nFAILED: cuda.cuda.o\n{gen}(6): error: identifier "undefined_name" is undefined\n'
    (d,) = map_build_errors(log, py)
    assert (d.file, d.line, d.col) == (str(py), 3, 3) and "undefined_name" in d.message

