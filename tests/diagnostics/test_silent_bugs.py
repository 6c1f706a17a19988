"""Kernels that compile cleanly but are wrong: the extra checks (PTX scan, ptxas -v) must warn."""

from __future__ import annotations

import pytest

from cutegen.compile import Tier
from cutegen.model import Severity
from tests.support.corpus import corpus


@pytest.mark.parametrize("case", corpus("silent"), ids=repr)
def test_silent_bug_is_a_warning_at_the_bug_line(case, arch_builder):
    result = arch_builder(case.arch).run(Tier.CHECK, case.path)  # compiles shared with test_retrieval's
    assert not result.errors, [d.format() for d in result.errors]
    warnings = [d for d in result.diagnostics if d.severity is Severity.WARNING]
    assert any(case.expect_warning in d.message for d in warnings), [d.format() for d in result.diagnostics]
    hit = [d for d in warnings if case.expect_warning in d.message][0]
    assert hit.line in case.bug_lines | case.alt_lines, hit.format()
