"""The failures models write (tests/corpus/model_errors, recorded nvcc 13.0 logs): broken structure, errors in
macro arguments, overload notes, decisive template bindings, At end of source. No compiler needed."""

from __future__ import annotations

import pytest

from cutegen.diagnostics import condense, parse_log
from cutegen.diagnostics.arguments import argument_position
from cutegen.diagnostics.macros import macro_position
from cutegen.diagnostics.structure import find_defects
from tests.conftest import CORPUS, corpus

CASES = [c for c in corpus("model_errors") if (CORPUS / "logs" / f"{c.path.stem}.log").exists()]
ROOT = CORPUS.parent.parent


def _condensed(case):
    log = (CORPUS / "logs" / f"{case.path.stem}.log").read_text()

    def lines(file: str) -> list[str]:
        p = ROOT / file
        return p.read_text().splitlines() if p.is_file() else []
    rel = str(case.path.relative_to(ROOT))
    return condense(parse_log(log), rel, lambda f: not f.startswith("$"), lines), log


def test_every_case_has_its_log():
    assert len(CASES) == len(corpus("model_errors")) >= 12


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_first_error_is_on_the_fix_line_with_its_root_cause(case):
    diagnostics, log = _condensed(case)
    errors = [d for d in diagnostics if d.severity.value == "error"]
    first = errors[0]
    assert first.line in case.bug_lines | case.alt_lines, (first.line, first.message)
    assert case.expect_root in first.message + first.root, first.message
    assert len(first.message) <= 240


def test_structural_error_keeps_nvccs_place_as_related():
    (case,) = [c for c in CASES if c.path.stem == "unclosed_for_softmax"]
    first = _condensed(case)[0][0]
    assert first.code == "structure-unclosed" and "a `}` is missing after line 19" in first.message
    nvcc_says = [r for r in first.related if r.message.startswith("nvcc reports")]
    assert {r.line for r in nvcc_says} >= {26, 6}  # the linkage error and 'At end of source' (to match line 6)


def test_torch_headers_are_not_user_code():
    """A torch-including kernel's log holds no warning from torch (system headers), only the user's error."""
    (case,) = [c for c in CASES if c.path.stem == "dispatch_undefined"]
    diagnostics, log = _condensed(case)
    assert all("$TORCH_INCLUDE" not in d.file for d in diagnostics)
    assert [d.severity.value for d in diagnostics] == ["error"]


def test_balanced_code_with_odd_indentation_is_not_a_defect():
    code = "void f() {\n  if (x) {\n      y();\n    }\n}\n#if A\nvoid g() {\n#else\nvoid g(int) {\n#endif\n}\n"
    assert find_defects(code) == []


def test_unterminated_if_and_stray_endif():
    assert [d.kind for d in find_defects("#if A\nint x;\n")] == ["unterminated-if"]
    assert [d.kind for d in find_defects("int x;\n#endif\n")] == ["stray-endif"]


def test_macro_caret_maps_into_the_argument():
    source = ["  DISPATCH(t, [&] {", "    run<<<1, 1>>>(x,", "        undefined_name);", "  });"]
    echo = "  [&] { run<<<1, 1>>>(x, undefined_name); }()"
    col = echo.index("undefined_name") + 1
    assert macro_position(source, 1, echo, col) == (3, 9)
    assert macro_position(["  f(x);"], 1, "  f(x);", 3) is None  # no macro: nothing to move


def test_argument_position_in_a_kernel_launch():
    source = ["  k<float><<<g, b, 0, s>>>(", "      a,", "      f(b, c),", "      n);"]
    assert argument_position(source, 1, 3, 2) == (3, 7)
    assert argument_position(source, 1, 3, 3) == (4, 7)
