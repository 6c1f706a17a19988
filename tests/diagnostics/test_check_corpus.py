"""Real nvcc on the project's broken CuTe kernels: each error lands on the bug line with its root cause."""

from __future__ import annotations

import pytest

from cutegen.compile import Tier
from cutegen.model import Severity
from tests.support.corpus import corpus

ERRORS = corpus("errors")
CLEAN = corpus("clean")


@pytest.mark.parametrize("case", ERRORS, ids=repr)
def test_error_lands_on_bug_line_with_root_cause(builder, case):
    result = builder.run(Tier.CHECK, case.path)
    errors = result.errors
    assert not result.ok
    assert errors, f"no error diagnostic; raw log:\n{result.raw_log[:2000]}"
    first = errors[0]
    assert first.line in case.bug_lines | case.alt_lines, (
        f"first error at line {first.line}, expected {sorted(case.bug_lines | case.alt_lines)}: {first.message}")
    assert case.expect_root in first.root + first.message
    # Condensed: one diagnostic per cause, not one per template frame.
    assert len(errors) <= 3, [e.format() for e in errors]
    assert len(first.message) <= 240


@pytest.mark.parametrize("case", CLEAN, ids=repr)
def test_clean_kernel_has_no_errors_or_warnings(builder, case):
    result = builder.run(Tier.CHECK, case.path)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert not [d for d in result.diagnostics if d.severity is not Severity.INFO]
    assert result.resources, "ptxas resource usage missing"
    assert all(k.registers > 0 for k in result.resources)
