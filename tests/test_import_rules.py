"""The rules ARCHITECTURE.md states, kept by a test: the layer order, the leaf vocabularies, no protocol and
no printing in the engine. The modules are read with `ast`, never imported (no torch, no pygls needed), and every
import counts, a lazy one inside a function too: it couples the two modules just the same.

A known violation is listed in `KNOWN` with its reason; the table may only shrink (an entry that no longer
happens fails the test, so it is removed with the fix).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[1] / "server" / "cutegen"

# ARCHITECTURE.md's "Layers", top to bottom: a module may import its own layer and the layers below it.
# Module names are relative to `cutegen`; a name covers the module or the package and everything in it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("adapters", ("lsp", "cli", "__main__")),
    ("session", ("session",)),
    ("features", ("suite", "agent", "layouts", "background")),
    ("subsystems", ("compile", "diagnostics", "harness", "profiler", "knowledge", "sandbox", "typecheck")),
    ("result model", ("records", "model")),
    ("foundation", ("hardware", "state", "settings", "toolchain", "workspace_trust")),
    ("pairing", ("pairing",)),
    ("files", ("files",)),
    ("cancel", ("cancel",)),
]

# Vocabulary a producer owns and every layer may import: they import nothing of cutegen. `cutegen` itself is the
# package (its `__version__`).
LEAVES = ("", "harness.verdicts", "profiler.signals", "profiler.stalls",
          "harness.intervals",  # the 95 % intervals: statistics a record reads back, no engine state
          "agent.verdicts")

# Where the engine must print: none today. The adapters present; `lsp/` may not print either (stdout is the
# protocol's channel), so only `cli/` and `__main__` are exempt. A worker's answer on its pipe
# (`typecheck/clang_parse.py` writes JSON to sys.stdout) is not a print and is not checked.
PRINTING = ("cli", "__main__")

# (rule, module, imported module or name) → why it is still there. May only shrink.
KNOWN: dict[tuple[str, str, str], str] = {
}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@cache
def modules() -> dict[str, Path]:
    """Every engine module by its name relative to `cutegen` ('' is the package itself)."""
    found = {}
    for path in sorted(ENGINE.rglob("*.py")):
        parts = path.relative_to(ENGINE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _package_of(name: str) -> list[str]:
    path = modules()[name]
    parts = name.split(".") if name else []
    return parts if path.name == "__init__.py" else parts[:-1]


def _target(name: str, node: ast.ImportFrom, alias: str) -> str | None:
    """The cutegen module a `from X import alias` reaches: the submodule when alias is one, else X."""
    if node.level:
        base = _package_of(name)[: len(_package_of(name)) - node.level + 1]
        origin = ".".join(base + ([node.module] if node.module else []))
    elif node.module == "cutegen" or (node.module or "").startswith("cutegen."):
        origin = node.module.removeprefix("cutegen").removeprefix(".")
    else:
        return None
    sub = f"{origin}.{alias}" if origin else alias
    return sub if sub in modules() else origin


@cache
def tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].read_text(), filename=str(modules()[name]))


def _imports_by_name(node: ast.AST) -> bool:
    """A call that imports a module by its name: `importlib.import_module(...)`, `import_module(...)`,
    `__import__(...)`."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    return (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None) in (
        "import_module", "__import__")


def _imported_by_name(node: ast.AST) -> str | None:
    """The module a call imports by its name spelt as a string (`importlib.import_module("cutegen.x")`,
    `__import__("cutegen.x")`): an import no `import` statement shows is an import all the same."""
    if _imports_by_name(node) and isinstance(first := node.args[0], ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def cutegen_imports(name: str, module: ast.Module | None = None) -> list[tuple[int, str]]:
    """(line, imported engine module) for every import in the module (`module`: its text, parsed; default the
    file's), lazy ones and string imports included."""
    found = []
    for node in ast.walk(module or tree(name)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name.removeprefix("cutegen").removeprefix("."))
                      for a in node.names if _within(a.name, "cutegen")]
        elif isinstance(node, ast.ImportFrom):
            found += [(node.lineno, t) for a in node.names if (t := _target(name, node, a.name)) is not None]
        elif (by_name := _imported_by_name(node)) is not None and _within(by_name, "cutegen"):
            found.append((node.lineno, by_name.removeprefix("cutegen").removeprefix(".")))
    return found


def layer_of(name: str) -> int | None:
    for rank, (_, prefixes) in enumerate(LAYERS):
        if any(_within(name, p) for p in prefixes):
            return rank
    return None


def _is_leaf(name: str) -> bool:
    return name in LEAVES


def _report(found: dict[tuple[str, str, str], str], rule: str) -> list[str]:
    """The violations KNOWN does not excuse, and the KNOWN entries of this rule that no longer happen."""
    new = [why for key, why in found.items() if key not in KNOWN]
    gone = [f"{key} is in KNOWN but no longer happens: remove it" for key in KNOWN
            if key[0] == rule and key not in found]
    return new + gone


def _check(found: dict[tuple[str, str, str], str], rule: str) -> None:
    problems = _report(found, rule)
    assert not problems, "\n".join(problems)


def test_every_module_has_a_layer():
    assert [n for n in modules() if n and not _is_leaf(n) and layer_of(n) is None] == []


def test_no_module_imports_a_layer_above_its_own():
    found = {}
    for name in modules():
        if _is_leaf(name):
            continue
        for line, target in cutegen_imports(name):
            if _is_leaf(target) or layer_of(target) >= layer_of(name):
                continue
            found[("layer", name, target)] = (
                f"cutegen/{modules()[name].relative_to(ENGINE)}:{line} imports {target} "
                f"(layer '{LAYERS[layer_of(name)][0]}' imports layer '{LAYERS[layer_of(target)][0]}', above it)")
    _check(found, "layer")


def _package(name: str) -> str:
    return name.split(".")[0]


def test_packages_of_one_layer_import_each_other_one_way_only():
    """Within a layer packages may import each other, but never both ways: then one of them is really above."""
    edges: dict[tuple[str, str], tuple[str, int, str]] = {}
    for name in modules():
        for line, target in cutegen_imports(name):
            a, b = _package(name), _package(target)
            if a != b and not _is_leaf(target) and not _is_leaf(name) and layer_of(name) == layer_of(target):
                edges.setdefault((a, b), (name, line, target))
    found = {}
    for (a, b), (name, line, target) in edges.items():
        if a < b and (b, a) in edges:
            back = edges[(b, a)]
            found[("circle", name, target)] = (
                f"cutegen/{modules()[name].relative_to(ENGINE)}:{line} imports {target}, and {back[0]} "
                f"imports {back[2]} (line {back[1]}): {a} and {b} of layer '{LAYERS[layer_of(name)][0]}' "
                f"import each other")
    _check(found, "circle")


# What the adapters reach only through the session (issue 31, part 2; issue 57, part 3): the compile tiers, the
# harness, and the agent's and the layouts' engine work (placing and re-basing patches, verifying candidates,
# probe builds): Session and Agent methods do it.
ADAPTERS = ("lsp", "cli", "__main__")
THROUGH_THE_SESSION = ("compile", "harness", "agent.patch", "agent.candidates", "layouts.probe")


def _reached_past_the_session(name: str, module: ast.Module | None = None) -> dict[tuple[str, str, str], str]:
    found = {}
    for line, target in cutegen_imports(name, module):
        if any(_within(target, t) for t in THROUGH_THE_SESSION) and not _is_leaf(target):
            found[("adapter", name, target)] = (
                f"cutegen/{modules()[name].relative_to(ENGINE)}:{line} imports {target}: an adapter asks the "
                f"session (cutegen/session.py) for it")
    return found


def test_adapters_reach_the_engine_work_only_through_the_session():
    found = {}
    for name in modules():
        if any(_within(name, a) for a in ADAPTERS):
            found |= _reached_past_the_session(name)
    _check(found, "adapter")


def _computed_imports(module: ast.Module) -> list[int]:
    """Lines that import a module whose name is computed (a variable): no rule can read which one."""
    return [node.lineno for node in ast.walk(module) if _imports_by_name(node) and _imported_by_name(node) is None]


def test_adapters_import_no_module_by_a_computed_name():
    found = {("computed", name, str(line)): f"cutegen/{modules()[name].relative_to(ENGINE)}:{line} imports a module "
             "by a computed name: import it, or ask the session" for name in modules()
             if any(_within(name, a) for a in ADAPTERS) for line in _computed_imports(tree(name))}
    _check(found, "computed")


def test_a_string_import_is_an_import():
    """The side door an adapter once used (`importlib.import_module("cutegen.harness.run")` to see whether the
    harness is there) is seen as the import it is."""
    text = ("import importlib\n"
            "def ready():\n"
            "    importlib.import_module('cutegen.harness.run')\n"
            "    __import__('cutegen.layouts.probe')\n"
            "    importlib.import_module('json')\n")
    module = ast.parse(text)
    assert cutegen_imports("lsp.gpu_commands", module) == [(3, "harness.run"), (4, "layouts.probe")]
    assert set(_reached_past_the_session("lsp.gpu_commands", module)) == {
        ("adapter", "lsp.gpu_commands", "harness.run"), ("adapter", "lsp.gpu_commands", "layouts.probe")}
    assert _computed_imports(ast.parse("import importlib\nmodule = 'cutegen.harness.run'\n"
                                       "importlib.import_module(module)\n")) == [3]


def test_leaf_modules_import_nothing_of_cutegen():
    found = {("leaf", n, t): f"the leaf {n} imports {t} (line {line})"
             for n in LEAVES if n for line, t in cutegen_imports(n)}
    _check(found, "leaf")


def _third_party(name: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def test_the_engine_imports_no_pygls_or_lsprotocol():
    found = {("protocol", n, top): f"cutegen/{modules()[n].relative_to(ENGINE)}:{line} imports {top}"
             for n in modules() if not _within(n, "lsp")
             for line, top in _third_party(n) if top in ("pygls", "lsprotocol")}
    _check(found, "protocol")


def _prints(name: str) -> list[int]:
    return [node.lineno for node in ast.walk(tree(name))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"]


def test_only_the_cli_prints_or_imports_rich():
    found = {}
    for name in modules():
        if any(_within(name, p) for p in PRINTING):
            continue
        where = f"cutegen/{modules()[name].relative_to(ENGINE)}"
        found |= {("print", name, "rich"): f"{where}:{line} imports rich"
                  for line, top in _third_party(name) if top == "rich"}
        found |= {("print", name, "print"): f"{where}:{line} calls print()" for line in _prints(name)}
    _check(found, "print")


# -- state.py owns every path under `.cutegen/` (issue 31, part 4) ---------------------------------------------


def _docstrings(module: ast.Module) -> set[int]:
    """ids of the docstring constants of the module, its classes and functions (prose may name `.cutegen/`)."""
    owners = [module, *(n for n in ast.walk(module)
                        if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)))]
    return {id(o.body[0].value) for o in owners
            if o.body and isinstance(o.body[0], ast.Expr) and isinstance(o.body[0].value, ast.Constant)}


def _spells_state_path(node: ast.AST, docs: set[int]) -> bool:
    """A string constant naming `.cutegen` as a path: no whitespace in it. Prose (a help text, a message) names it
    for the reader, as docstrings and comments do, and builds nothing."""
    return (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
            and ".cutegen" in node.value and not any(c.isspace() for c in node.value))


def _joins_under_state(node: ast.AST) -> bool:
    """`<something named state…> / "name"`: a path built under a `.cutegen/` folder instead of asked of StateDir."""
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant)
            and isinstance(node.right.value, str) and "state" in ast.unparse(node.left))


def test_only_state_py_spells_or_builds_cutegen_paths():
    found = {}
    for name in modules():
        if name == "state":
            continue
        docs, where = _docstrings(tree(name)), f"cutegen/{modules()[name].relative_to(ENGINE)}"
        for node in ast.walk(tree(name)):
            if _spells_state_path(node, docs):
                found[("state", name, node.value)] = f"{where}:{node.lineno} spells {node.value!r}: ask state.py"
            elif _joins_under_state(node) and not _joins_under_state(node.left):  # the first join only
                text = ast.unparse(node)
                found[("state", name, text)] = f"{where}:{node.lineno} builds {text}: add a StateDir path"
    _check(found, "state")


def test_the_profiler_and_the_session_import_without_torch():
    """torch only inside the GPU worker and the profile driver's process: a machine without torch (the editor's,
    CI's) imports the profiler, the builder and the session, and collects their tests."""
    import subprocess
    import sys

    blocked = ("import builtins, sys\n"
               "real = builtins.__import__\n"
               "def guard(name, *a, **k):\n"
               "    if name == 'torch' or name.startswith('torch.'):\n"
               "        raise ImportError('torch imported by ' + str(sys._getframe(1).f_globals.get('__name__')))\n"
               "    return real(name, *a, **k)\n"
               "builtins.__import__ = guard\n"
               "import cutegen.profiler.profile, cutegen.profiler.sanitizer, cutegen.compile, cutegen.session\n")
    run = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True,
                         env={"PYTHONPATH": str(ENGINE.parent), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-2000:]
