"""`cutegen versions FILE`: the tree of versions that Optimize searches grew (agent/tree.py): each version's id,
its ratio against the latest search's start (through the path between them) with the judge's noise, its verdict
and its one-line change; `best` marks the best version by the objective the tree was searched with (agent/tree.py
`VersionTree.best`), or a last line says why no version is.
`--show ID` prints what that version changed (a diff from its parent); `--restore ID` re-verifies it and prints
the patch from the file's current text, which `--apply` writes only while the file still holds that text."""

from __future__ import annotations

from pathlib import Path

from cutegen.agent.tree import Node, VersionTree
from cutegen.cli.agent import _common, _main
from cutegen.cli.options import command
from cutegen.state import StateDir


def add_parser(sub) -> None:
    p = command(sub, "versions", "list the versions Optimize searches kept of a kernel; show or restore one")
    p.add_argument("file", type=Path, help="the kernel")
    p.add_argument("--show", metavar="ID", help="print what a version changed (a diff from its parent)")
    p.add_argument("--restore", metavar="ID", help="re-verify a version and print the patch back to it")
    p.add_argument("--apply", action="store_true", help="with --restore: write it into the file")
    p.add_argument("--problem", help="the reference problem (for --restore's verification)")
    _common(p, llm=False)
    p.set_defaults(run=_versions)


def _versions(args) -> int:
    if args.restore:
        return _main(args, lambda a, agent: agent.restore_version(a.file.resolve(), a.file.read_text(), a.restore),
                     "versions")
    if not args.file.is_file():
        print(f"error: {args.file} is not a file")
        return 2
    kernel = args.file.resolve()
    state = StateDir(args.state_dir) if args.state_dir else StateDir.for_file(kernel)
    tree = VersionTree(state, kernel)
    if not tree.nodes:
        print(f"No versions of {kernel.name} yet: run `cutegen optimize --search beam:4x3 {args.file}`.")
        return 1
    if args.show:
        return _show(tree, args.show, kernel.name)
    current = kernel.read_text(errors="replace")
    for line in listing(tree, current):
        print(line)
    return 0


def listing(tree: VersionTree, current: str) -> list[str]:
    """One line a version, the tree's shape by indentation: id, ratio (± noise), verdict, change; `*` marks the
    file's current text, `best` the best verified version by the tree's objective; without one, the last line
    says why."""
    from cutegen.agent.history import text_id

    best = tree.best()
    here = text_id(current)
    children: dict[str | None, list[Node]] = {}
    for n in tree.nodes.values():
        children.setdefault(n.parent if n.parent in tree.nodes else None, []).append(n)
    out = [f"{len(tree.nodes)} versions of {Path(tree.kernel).name} ({len(tree.failures)} candidates that did not "
           f"join as better versions); the tree is {tree.path}"]

    width = max([14] + [len(tree.ratio(n)) for n in tree.nodes.values()])  # "1.30× energy ±5%" is wider

    def walk(parent: str | None, depth: int) -> None:
        for n in sorted(children.get(parent, []), key=lambda n: (n.step, n.time)):
            is_best = best is not None and n.id == best.id
            mark = ("*" if n.id == here else " ") + ("best" if is_best else "    ")
            ratio = tree.ratio(n)
            out.append(f"{mark} {'  ' * depth}{n.id[:10]}  {ratio:>{width}}  {n.verdict:<13} {n.change or '(start)'}")
            walk(n.id, depth + 1)

    walk(None, 0)
    if best is None:
        out.append(f"No version is marked best: {tree.why_no_best()}.")
    elif tree.objective != "time":
        out.append(f"best: judged by {tree.objective} (the objective the tree was searched with)")
    return out


def _show(tree: VersionTree, vid: str, name: str) -> int:
    node = tree.find(vid)
    if node is None:
        print(f"error: no version {vid!r} (or more than one starts so); `cutegen versions FILE` lists them")
        return 2
    print(f"# {node.id}: {node.change or '(start)'} · {node.verdict} · {node.label}")
    print(tree.diff(node.id, name), end="")
    return 0

