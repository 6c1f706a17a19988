"""The gate on Python (ModelNew) candidates (issue 53): process families by prefix, run-time name lookups, and the
C++ in every string as Python makes it. A tripwire before the jail, not the boundary (docs/security.md)."""

from __future__ import annotations

import pytest

from cutegen.sandbox import gate

ORIGINAL = '''import torch
from torch.utils.cpp_extension import load_inline

cuda_source = """
__global__ void k(float* y) { y[0] = 1.f; }
"""
'''


def _refused(candidate: str) -> str:
    refusal = gate.review(candidate, ORIGINAL, python=True)
    assert refusal is not None, candidate
    return refusal.reason


@pytest.mark.parametrize("call, name", [("os.spawnv(os.P_WAIT, '/bin/sh', ['sh'])", "os.spawnv"),
                                        ("os.execvpe('sh', ['sh'], {})", "os.execvpe"),
                                        ("os.posix_spawnp('sh', ['sh'], {})", "os.posix_spawnp"),
                                        ("os.forkpty()", "os.forkpty"), ("os.execl('/bin/sh', 'sh')", "os.execl")])
def test_process_families_are_refused_by_prefix(call, name):
    assert f"process API `{name}`" in _refused(ORIGINAL + f"import os\n{call}\n")


@pytest.mark.parametrize("code, name", [("getattr(__import__('o' + 's'), 'system')('id')", "getattr"),
                                        ("__builtins__['ev' + 'al']('1')", "__builtins__"),
                                        ("globals()['x'] = 1", "globals"), ("vars(torch)['load']", "vars")])
def test_run_time_lookups_are_refused(code, name):
    assert f"reflection API `{name}`" in _refused(ORIGINAL + code + "\n")


@pytest.mark.parametrize("strings", [
    'cpp = "#include <cstdlib>\\nvoid f() { sys" "tem(\\"id\\"); }"',  # adjacent literals: one C++ text
    'cpp = "void f() { sys" + "tem(\\"id\\"); }"',  # joined with +
    'cpp = "void f() { \\x73ystem(\\"id\\"); }"',  # an escape
    'cpp = f"void f() {{ {\'sys\'}tem(\\"id\\"); }}"',  # an f-string's constant part
])
def test_cpp_in_any_string_is_scanned_as_python_makes_it(strings):
    assert "process API `system`" in _refused(ORIGINAL + strings + "\n")


def test_token_pasting_and_line_directives_in_strings_are_refused():
    reason = _refused(ORIGINAL + 'cpp = """\n#define CALL(a, b) a##b\nvoid f() { CALL(sys, tem)("id"); }\n"""\n')
    assert "directive `## (token pasting)`" in reason
    assert "directive `#line`" in _refused(ORIGINAL + 'cpp = "#line 1 \\"x.cu\\"\\n"\n')


def test_what_the_original_already_does_is_kept():
    assert gate.review(ORIGINAL + "y = getattr(torch, 'float32')\n", ORIGINAL + "x = getattr(torch, 'float16')\n",
                       python=True) is None
    assert gate.review(ORIGINAL + "x = 1\n", ORIGINAL, python=True) is None
