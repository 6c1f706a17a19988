"""The tests' own layout, kept by a test (docs/dev/testing.md, "Layout"): the tests mirror the code, share their
constants through tests/support/ rather than the root conftest, and reach the engine through the `Session`, as the
CLI and the language server do. Modules are read with `ast`, never imported.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ENGINE = TESTS.parent / "server" / "cutegen"

# Folders of tests that are not one package's: what they test cuts across the engine, or is not engine code.
CROSS_CUTTING = {
    "bench": "the benchmarks in bench/ (their statistics and output), not an engine package",
    "docs": "the documentation pages: links, and the references that must match the code",
    "gpu": "end-to-end runs on a GPU across compile, harness and profiler (scripts/gpu-check.sh runs them)",
    "kernels": "the example kernels (KernelBench Level 1) judged as a user's would be; beside the test kernels",
}
# Folders without tests: data and helpers the tests share.
SHARED = {
    "corpus": "the broken and clean kernels the diagnostics, knowledge and LSP tests read",
    "support": "helpers and constants any test may import (paths, corpus, build cache, scripted endpoint, ...)",
}
# Test modules at the top of tests/: rules over the whole repository.
TOP_LEVEL = {"test_import_rules.py", "test_layout_of_tests.py"}

# The engine parts a Session builds, with its method, and the one package whose tests may build them by hand
# (they test the part itself). Everywhere else a test gets them from a Session, as the product does.
PARTS = {
    "Builder": ("compile", "session.builder(path)"),
    "TypeChecker": ("typecheck", "session.type_checker(path)"),
    "LayoutProbe": ("layouts", "session.layout_probe(path)"),
    "Agent": ("agent", "session.agent(path, gpu=...)"),
    "Verifier": ("agent", "session.agent(path, gpu=...).verifier"),
    "Worker": ("harness", "session.worker()"),
}
# (tests folder, part) → why that folder builds the part by hand. May only shrink.
ALSO_BY_HAND = {
    ("sandbox", "Verifier"): "the candidate gate's tests give the Verifier a builder that refuses to build",
    ("sandbox", "Worker"): "the jailed worker, Worker(jail=...), is what the sandbox makes; no Session holds one",
    ("suite", "Verifier"): "the suite wires the agent's candidates to its own GPU workers (suite/judge.py)",
}


@cache
def engine_names() -> set[str]:
    """The engine's packages and top-level modules (server/cutegen/<name>/ or <name>.py)."""
    return {p.name for p in ENGINE.iterdir() if (p / "__init__.py").exists()} | \
           {p.stem for p in ENGINE.glob("*.py") if not p.stem.startswith("__")}


def _test_modules() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def _python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts)


def _folder(path: Path) -> str:
    """The first folder under tests/ ('' for a module at the top)."""
    parts = path.relative_to(TESTS).parts
    return parts[0] if len(parts) > 1 else ""


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def test_every_folder_of_tests_is_a_package_or_a_known_cross_cutting_one():
    folders_with_tests = {_folder(p) for p in _test_modules()} - {""}
    unknown = sorted(f for f in folders_with_tests if f not in engine_names() and f not in CROSS_CUTTING)
    assert not unknown, (f"tests/{unknown[0]}/ is not named for an engine package or module (server/cutegen/): "
                         "move its tests to the package they test, or add the folder to CROSS_CUTTING with why")
    assert not folders_with_tests & set(SHARED), "tests/corpus and tests/support hold data and helpers, not tests"
    empty = sorted(f for f in set(CROSS_CUTTING) if f not in folders_with_tests)
    assert not empty, f"CROSS_CUTTING names {empty}, which hold no tests any more"
    top = sorted(p.name for p in _test_modules() if _folder(p) == "")
    assert set(top) <= TOP_LEVEL, f"a test module at the top of tests/: {top}; it belongs in its package's folder"


def _imports_root_conftest(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.module == "tests.conftest" or (node.module == "tests" and
                                                   any(a.name == "conftest" for a in node.names)):
                return True
        elif isinstance(node, ast.Import) and any(a.name == "tests.conftest" for a in node.names):
            return True
    return False


def test_no_test_imports_the_root_conftest():
    """Shared constants live in tests/support/; the root conftest holds fixtures, which pytest hands out."""
    importers = [str(p.relative_to(TESTS)) for p in _python_files() if _imports_root_conftest(_tree(p))]
    assert not importers, f"import from tests/support/ instead of tests.conftest: {importers}"


def hand_built(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, part) for each engine part (PARTS) the module constructs itself: a call of a name imported from
    `cutegen` (under any alias), or of an attribute of that name (`candidates.Verifier(...)`)."""
    local = {}  # the name bound in the module → the part
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "cutegen":
            local.update({a.asname or a.name: a.name for a in node.names if a.name in PARTS})
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in local:
            found.append((node.lineno, local[node.func.id]))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in PARTS:
            found.append((node.lineno, node.func.attr))
    return found


def test_the_detector_sees_a_builder_under_any_name():
    tree = ast.parse("from cutegen.compile import Builder as B\nfrom cutegen.agent import candidates\n"
                     "from tests.support.scripted_openai import Agent\n"
                     "B(tc, s, d)\ncandidates.Verifier(b, None)\nAgent()\n")
    assert hand_built(tree) == [(4, "Builder"), (5, "Verifier")]


def test_tests_get_engine_parts_from_a_session():
    """A test builds a Builder, an Agent, a worker... itself only where it tests that part (its package's folder);
    everywhere else it enters through `cutegen.session.Session` (the `make_session` and `builder` fixtures)."""
    wrong = []
    for path in _python_files():
        folder = _folder(path)
        for line, part in hand_built(_tree(path)):
            owner, method = PARTS[part]
            if folder != owner and (folder, part) not in ALSO_BY_HAND:
                wrong.append(f"{path.relative_to(TESTS)}:{line}: {part}(...) — use {method}")
    assert not wrong, "\n".join(wrong)
    used = {(_folder(p), part) for p in _python_files() for _, part in hand_built(_tree(p))}
    stale = sorted(set(ALSO_BY_HAND) - used)
    assert not stale, f"ALSO_BY_HAND lists {stale}, which no longer happen: remove them"
