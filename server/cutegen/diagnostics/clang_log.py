"""clang's diagnostics (libclang's structured form, as the type tier's parser process sends them) → the
RawMessage structure the condenser reads for nvcc's EDG messages.

No text is parsed back out of a printed log: libclang gives each diagnostic with its location and its notes.
The mapping keeps clang's words and changes only what the condenser reads structurally:
- "in instantiation of X requested here" notes are the instantiation chain, innermost first (as EDG's
  "detected during" frames): `Frame(X, file, line)` is where X was instantiated;
- a failed static_assert with a message reads as EDG's `static assertion failed with "MESSAGE"`, the condenser's
  root-cause form; without one, the asserting source line is kept so the condenser can quote the expression;
- other notes (candidates, "expanded from macro", "to match this") are notes with their places;
- a missing token ("expected ';' after struct") is placed where clang's fix-it inserts it;
- a call that spans lines is placed where nvcc puts it, on its closing parenthesis's line (the last argument's),
  not on the callee's name where clang does: the squiggle stays put when the save's nvcc check replaces it;
  a call whose candidates all fail on one argument is placed on that argument, as nvcc's condensed error is.
"""

from __future__ import annotations

import re

from cutegen.diagnostics.arguments import argument_position
from cutegen.diagnostics.nvcc_log import Frame, RawMessage

TOOL = "clang"
_INSTANTIATION = re.compile(r"^in instantiation of (?:[\w ]+?) '(?P<what>.+)' requested here$")
_SUBSTITUTION = re.compile(r"^(?:while substituting (?:deduced )?template arguments into|in call to|while checking)"
                           r" .*?'(?P<what>.+?)'")
_NTH_ARGUMENT = re.compile(r"for (\d+)(?:st|nd|rd|th) argument")
_ASSERT = re.compile(r"^static assertion failed(?: due to requirement '(?P<expr>.*)')?(?:: (?P<text>.*))?$", re.S)


def to_raw_messages(diagnostics: list[dict], lines) -> list[RawMessage]:
    """`lines(file)` gives a file's source lines (the unsaved text for the main file)."""
    return [_message(d, lines) for d in diagnostics if d["severity"] in ("error", "fatal", "warning")]


# nvcc only warns (and drops the device side) when a __host__ __device__ function calls a host function: so
# does this tier, which reports errors only.
_HOST_DEVICE_WRONG_SIDE = re.compile(r"(?:reference to|call to) __host__ function.* in __host__ __device__ function")


def _message(d: dict, lines) -> RawMessage:
    file, line, col = d["file"], d["line"], d["col"]
    insert = next((f for f in d.get("fixits", []) if f["file"] == file and f["line"]), None)
    if insert is not None and d["text"].startswith("expected '"):
        file, line, col = insert["file"], insert["line"], insert["col"]  # where the missing token goes
    at_fault = _argument_at_fault(d, lines)
    if at_fault is not None:
        line, col = at_fault
    severity = "warning" if _HOST_DEVICE_WRONG_SIDE.search(d["text"]) else d["severity"]
    msg = RawMessage(TOOL, severity, d["text"], file, line, col, code=_code(d))
    msg.source_line = _line(lines, file, line)
    found = _ASSERT.match(d["text"])
    if found and found["text"]:
        msg.text = f'static assertion failed with "{found["text"]}"'
    elif found:
        msg.text = "static assertion failed"
    candidates = [n["text"] for n in d["children"] if n["text"].startswith("candidate ")]
    if len(candidates) == 1 and ": " in candidates[0]:  # the one candidate: why it does not fit is the cause
        msg.text += f" ({candidates[0]})"
    for note in d["children"]:
        frame = _INSTANTIATION.match(note["text"]) or _SUBSTITUTION.match(note["text"])
        if frame and note["file"] and note["line"]:
            msg.frames.append(Frame(frame["what"], note["file"], call_end(lines(note["file"]), note["line"],
                                                                          note.get("col"))))
        elif note["file"] and note["line"]:
            msg.notes.append(note["text"])
            msg.note_places.append(Frame(note["text"], note["file"], note["line"],
                                         echo=_line(lines, note["file"], note["line"]).strip()))
        else:
            msg.notes.append(note["text"])
    return msg


def call_end(text: list[str], line: int, col: int | None) -> int:
    """The line of the closing parenthesis of the call whose name starts at `line`:`col` (1-based), or `line`
    when no call starts there (template arguments `f<A, B>(...)` are skipped, `//` comments cut; strings and block
    comments are not parsed: a parenthesis inside one may end the search early, never move it past a `;`)."""
    if not col or not 0 < line <= len(text):
        return line
    rest = "\n".join(t.split("//")[0] for t in text[line - 1:line + 40])  # line comments cut (their parentheses)
    at = col - 1
    while at < len(rest) and (rest[at].isalnum() or rest[at] in "_:~ \t"):  # the callee's name
        at += 1
    if rest[at:at + 1] == "<":
        closed = _balanced(rest, at, "<", ">")
        if closed is None:
            return line
        at = closed + 1 + len(rest[closed + 1:]) - len(rest[closed + 1:].lstrip())
    if rest[at:at + 1] != "(":
        return line
    end = _balanced(rest, at, "(", ")")
    return line if end is None else line + rest.count("\n", 0, end)


def _balanced(text: str, start: int, open_: str, close: str) -> int | None:
    """Index of the `close` matching the `open_` at `start`; None at a `;` first (past one expression, or a
    lambda's body: left where clang put it)."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i
        elif ch == ";":
            return None
    return None


def _argument_at_fault(d: dict, lines) -> tuple[int, int] | None:
    """Where a call's candidates all fail on the same argument ("no known conversion ... for 2nd argument"), that
    argument's place: nvcc's ("argument #2 does not match parameter #2", read by the condenser the same way)."""
    found = {int(m[1]) for n in d["children"] if n["text"].startswith("candidate ")
             for m in [_NTH_ARGUMENT.search(n["text"])] if m}
    if len(found) != 1 or not d["file"] or not d["line"]:
        return None
    return argument_position(lines(d["file"]), d["line"], d["col"], found.pop())


def _line(lines, file: str | None, line: int | None) -> str:
    if not file or not line:
        return ""
    text = lines(file)
    return text[line - 1].strip() if 0 < line <= len(text) else ""


def _code(d: dict) -> str:
    """clang's warning option when it has one (`-Wunused-variable` → `Wunused-variable`), else none."""
    return d["option"].lstrip("-") if d.get("option") else ""


def raw_log(diagnostics: list[dict]) -> str:
    """The parse's diagnostics in clang's printed form (`file:line:col: error: text`, notes indented): what a
    run record keeps as the raw log."""
    out: list[str] = []

    def emit(d: dict, depth: int) -> None:
        where = f"{d['file']}:{d['line']}:{d['col']}: " if d.get("file") else ""
        out.append("  " * depth + f"{where}{d['severity']}: {d['text']}")
        for child in d.get("children", []):
            emit(child, depth + 1)

    for d in diagnostics:
        emit(d, 0)
    return "\n".join(out) + ("\n" if out else "")
