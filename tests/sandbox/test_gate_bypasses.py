"""Ordinary C++ that hid a `system()` call from the old text gate (issue 25), each class twice: the gate, on the
real preprocessor's view of the candidate, refuses it before building with the line; and built anyway (as if
the gate had missed it), its library is refused for what it imports. Plus the binary's other checks: a static
initializer and a raw system call, and a harmless candidate that passes both."""

from __future__ import annotations

import pytest

from cutegen.agent.candidates import Verifier
from cutegen.compile import Tier
from cutegen.sandbox import library

BASE = r"""#include <cutegen/abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <tuple>
// PRELUDE

__global__ void twice(const float* x, float* y, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  // LAUNCHER
  twice<<<unsigned((n + 255) / 256), 256, 0, stream>>>(cutegen_data<const float>(inputs[0]),
                                                       cutegen_data<float>(outputs[0]), n);
  return (int)cudaGetLastError();
}
"""
_LAUNCHER_LINE = BASE.splitlines().index("  // LAUNCHER") + 1

# name → (code before the kernel, code in the launcher, the line the gate names)
BYPASSES = {
    "token pasting": ("#define CAT(a, b) a##b", 'CAT(sys, tem)("true");', _LAUNCHER_LINE),
    "weakref attribute": ('static int run_it(const char*) __attribute__((weakref("system")));', 'run_it("true");', 5),
    "digit separator": ("", "int a = 1'000; if (a == n) system(\"true\"); int b = 2'000; (void)b;", _LAUNCHER_LINE),
    "raw string": ("", 'const char* s = R"(")"; (void)s; system("true");', _LAUNCHER_LINE),
    "#if 0 device head": ('#if 0\n__device__\n#endif\nint helper() { return system("true"); }', "helper();", 8),
    "macro argument head": ('#define ON(where)\nON(__device__) int helper() { return system("true"); }', "helper();", 6),
    "function pointer in braces": ("static int (*const table[])(const char*) = {system};", 'table[0]("true");', 5),
    "function pointer as an argument": ("", 'auto t = std::make_tuple(system, 0); std::get<0>(t)("true");',
                                        _LAUNCHER_LINE),
    "line continuation in a name": ("", 'sys\\\ntem("true");', _LAUNCHER_LINE),
    # Host-only code: a device-side preprocessing (`nvcc -E` defines __CUDA_ARCH__) would not contain it.
    "host-only branch": ("", '#ifndef __CUDA_ARCH__\n  system("true");\n#endif', _LAUNCHER_LINE + 1),
}


def _candidate(prelude: str, launcher: str) -> str:
    return BASE.replace("// PRELUDE", prelude).replace("  // LAUNCHER", "  " + launcher)


def _stable(builder, name: str, text: str):
    """A source at a path that stays the same between runs, so the shared build cache keeps its library."""
    folder = builder.cache.root.parent / "sandbox-cases"
    folder.mkdir(exist_ok=True)
    path = folder / (name.replace(" ", "_").replace("#", "") + ".cu")
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


@pytest.fixture
def kernel(kept_path):
    """The user's kernel in a kept folder (the Verifier's state dir beside it): a candidate's shadow copy lies at the
    same path every run, so the shared build cache keeps its check and build (the gate and the library's review run
    every time)."""
    path = kept_path / "twice.cu"
    path.write_text(BASE)
    return path


@pytest.mark.parametrize("name", list(BYPASSES))
def test_the_gate_sees_through_the_spelling(name, kernel, builder):
    prelude, launcher, line = BYPASSES[name]
    verifier = Verifier(builder, None, state_dir=kernel.parent / ".cutegen", gpu=False)
    v = verifier.candidate(kernel, _candidate(prelude, launcher))
    assert v.verdict == "refused" and "refused before building" in v.label, v.label
    assert f"line {line}: process API `system`" in v.label or f"line {line}: symbol alias `weakref`" in v.label, v.label
    assert "check_s" not in v.figures  # nothing was compiled but the preprocessor's view


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BYPASSES))
def test_built_anyway_its_library_is_refused(name, builder, tmp_path):
    prelude, launcher, _ = BYPASSES[name]
    built = builder.run(Tier.BUILD, _stable(builder, name, _candidate(prelude, launcher)))
    assert built.ok, built.raw_log[-1500:]
    refusal = library.review(built.artifact)
    assert refusal is not None and "imported symbol `system`" in refusal.reason, refusal
    assert refusal.reason.startswith("refused after building: the built library has host code")


@pytest.mark.slow
def test_a_static_initializer_and_a_raw_system_call_are_refused_in_the_binary(builder, tmp_path):
    path = _stable(builder, "initializer and syscall", _candidate(
        '#define EARLY __attribute__((constructor))\nEARLY void early() {}\n'
        'static long raw() { long r; asm volatile("syscall" : "=a"(r) : "a"(39L) : "rcx", "r11"); return r; }',
        "if (raw() < 0) return 1;"))
    built = builder.run(Tier.BUILD, path)
    assert built.ok, built.raw_log[-1500:]
    reason = library.review(built.artifact).reason
    assert "static initializer `_Z5earlyv`" in reason and "system call instruction `in cutegen_forward`" in reason, reason
    v = Verifier(builder, None, state_dir=tmp_path / ".cutegen", gpu=False)
    kernel = tmp_path / "k.cu"
    kernel.write_text(BASE)
    refused = v.candidate(kernel, path.read_text()).label
    assert "line 6: static initializer `constructor`" in refused and "inline assembly in host code" in refused, refused


@pytest.mark.slow
def test_a_harmless_candidate_passes_the_gate_and_the_library_check(kernel, builder):
    candidate = BASE.replace("2.0f * x[i]", "x[i] + x[i]").replace("  // LAUNCHER", '  if (n < 0) printf("n < 0\\n");')
    v = Verifier(builder, None, state_dir=kernel.parent / ".cutegen", gpu=False).candidate(kernel, candidate)
    assert v.ok and v.tiers == ["check", "build"] and v.label.startswith("compiled and built"), v.label
    assert v.figures["gate_s"] > 0 and "inspect_s" in v.figures


@pytest.mark.slow
def test_host_code_the_preprocessor_cannot_read_is_refused_after_the_device_check(kernel, builder):
    """Compiles for the device (the check tier), yet has no host side the gate could read: refused, not built."""
    candidate = BASE.replace("// PRELUDE", "#ifndef __CUDA_ARCH__\n#error the host side is hidden\n#endif")
    v = Verifier(builder, None, state_dir=kernel.parent / ".cutegen", gpu=False).candidate(kernel, candidate)
    assert v.verdict == "refused" and v.tiers == ["check"] and "build_s" not in v.figures, v.label
    assert "does not preprocess" in v.label and "the host side is hidden" in v.label, v.label
