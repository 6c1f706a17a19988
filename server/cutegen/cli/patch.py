"""`cutegen patch FILE --reply REPLY_FILE [--format ...]`: replay an LLM reply against a file.

Prints the unified diff the agent would apply, or why it refuses; changes nothing. The reply file
is the reply as text, or a transcript step (`.cutegen/agent/.../NN-roundR-patch.json`), whose
finish_reason is honoured and whose prompt gives the text the model saw (what JSON line numbers
refer to) unless --shown names it. Exit status: 0 placed, 1 refused, 2 unusable arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cutegen.agent.edit_formats import CHOICES


def add_parser(subparsers) -> argparse.ArgumentParser:
    from cutegen.cli.options import command

    p = command(subparsers, "patch", "print the diff an LLM reply would apply to a file (changes nothing)")
    p.add_argument("file", type=Path, help="the kernel the reply is for")
    p.add_argument("--reply", type=Path, required=True,
                   help="the reply: a text file, a transcript step .json, or - for stdin")
    p.add_argument("--format", choices=CHOICES, default="auto", help="the edit format to accept (default: any)")
    p.add_argument("--shown", type=Path, help="the file as the model saw it, if it changed since (JSON line numbers)")
    p.add_argument("--finish-reason", default=None, help="the endpoint's finish_reason (length = cut off)")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.set_defaults(run=run)
    return p


def run(args, out=None, err=None) -> int:
    from cutegen.agent import prompts
    from cutegen.session import Session

    out, err = out or sys.stdout, err or sys.stderr
    try:
        text = args.file.read_text()
        raw = sys.stdin.read() if str(args.reply) == "-" else args.reply.read_text()
        shown = args.shown.read_text() if args.shown else None
    except OSError as e:
        print(f"error: {e.filename}: {e.strerror}", file=err)
        return 2
    reply, finish = raw, args.finish_reason
    step = _transcript_step(raw)
    if step is not None:
        reply, finish = step["reply"], finish or step.get("finish_reason") or ""
        shown = shown if shown is not None else prompts.shown_text(step.get("messages") or [])
    p = Session.place_reply(reply, text, args.file.name, finish_reason=finish or "", fmt=args.format, shown=shown)
    if args.json:
        print(json.dumps({"ok": p.ok, "diff": p.diff if p.ok else None, "refusal": p.kind or None,
                          "error": p.error, "notes": p.notes, "added": p.added, "removed": p.removed}, indent=1),
              file=out)
        return 0 if p.ok else 1
    if not p.ok:
        print(f"refused ({p.kind}): {p.error}", file=err)
        return 1
    out.write(p.diff)
    for note in p.notes:
        print(f"note: {note}", file=err)
    return 0


def _transcript_step(raw: str) -> dict | None:
    """A transcript step holding a reply, or None for a plain reply text."""
    if not raw.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("reply"), str) else None


def main(argv: list[str] | None = None, out=None, err=None) -> int:
    """`python -m cutegen.cli.patch FILE --reply REPLY` (the same as `cutegen patch` once wired)."""
    parser = argparse.ArgumentParser(prog="cutegen")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = parser.parse_args(["patch", *(sys.argv[1:] if argv is None else argv)])
    return args.run(args, out, err)


if __name__ == "__main__":
    sys.exit(main())
