"""Parses what nvcc and the tools it drives print: EDG (cudafe++/cicc), the host compiler, ptxas, nvlink.

The result keeps the structure the condenser needs: each message with its echoed source line and its
"detected during" instantiation chain (innermost frame first, as EDG prints it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Frame:
    """One 'instantiation of WHAT at line N of FILE': WHAT was instantiated from FILE:N."""

    what: str
    file: str
    line: int
    echo: str = ""  # for a note: the source line EDG echoes under it (e.g. the template's declaration)


@dataclass
class RawMessage:
    tool: str  # "edg", "host", "ptxas", "nvlink", "nvcc"
    severity: str  # "error", "warning", "remark", "fatal"
    text: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    code: str = ""  # EDG's number ("20011-D") or ptxas's ("C7510")
    source_line: str = ""  # the echoed code line under an EDG message
    frames: list[Frame] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # EDG's "note #3322-D: ..." lines under this message
    note_places: list[Frame] = field(default_factory=list)  # the same notes with their locations (what = text)
    echo: str = ""  # the echoed line as printed (indentation kept): `col` counts in it; a macro's expansion


# /path/file.hpp(370): error: static assertion failed with "..."   (also "error #20011-D:")
_EDG = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<sev>error|warning|remark|note|catastrophic error)"
                  r"(?: #(?P<code>[\w-]+))?: (?P<text>.*)$")
# file.cu:12:5: error: ...   (host compiler on the cudafe-generated code, with #line mapping)
# At end of source: error: expected a "}"      (its location is the note after it: 'to match this "{"')
_END_OF_SOURCE = re.compile(r"^At end of source: (?P<sev>error|warning|catastrophic error)"
                            r"(?: #(?P<code>[\w-]+))?: (?P<text>.*)$")
_GCC = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? "
                  r"(?P<sev>error|warning|fatal error): (?P<text>.*)$")
# gcc: error: unrecognized command-line option '-fbogus'   (a tool's own refusal, no file)
_TOOL = re.compile(r"^(?:gcc|g\+\+|cc1plus|clang\+\+|clang|cudafe\+\+|cicc|fatbinary): "
                   r"(?P<sev>error|fatal error|warning): (?P<text>.*)$")
_PTXAS = re.compile(r"^ptxas (?P<sev>error|warning|fatal)\s*: (?:\((?P<code>C\d+)\) )?(?P<text>.*)$")
_NVLINK = re.compile(r"^nvlink (?P<sev>error|warning|fatal)\s*: (?P<text>.*)$")
_NVCC_FATAL = re.compile(r"^nvcc (?:fatal|error)\s*: (?P<text>.*)$")
_FRAME = re.compile(r'instantiation of (?:class |function |template )?(?P<what>".*") '
                    r'at line (?P<line>\d+)(?: of (?P<file>.+?))?\s*$')
_DETAIL_PREFIXES = ("argument types are", "object type is", "function ", "operand types are")
INCLUDE = "#include"  # Frame.what of an include-chain frame
# The host compiler's include chain above a message in a header: "In file included from a.h:4," / "    from x.cu:3:"
_INCLUDED = re.compile(r"^(?:In file included|\s+) from (?P<file>.+?):(?P<line>\d+)[:,]$")
_COUNT = re.compile(r"^\d+ errors? detected in the compilation of")


def parse_log(log: str) -> list[RawMessage]:
    messages: list[RawMessage] = []
    current: RawMessage | None = None
    in_note = False  # a note's echoed source must not overwrite its error's; its chain is the error's
    included: list[Frame] = []  # innermost first, as gcc prints them
    for raw in log.splitlines():
        line = raw.rstrip()
        inc = _INCLUDED.match(line)
        if inc:
            included.append(Frame(INCLUDE, inc["file"], int(inc["line"])))
            current = None
            continue
        m = _EDG.match(line)
        if m and m["sev"] == "note" and current is not None:
            current.notes.append(m["text"])
            current.note_places.append(Frame(m["text"], m["file"], int(m["line"])))
            if current.file is None:  # 'At end of source': the note says which brace is unmatched
                current.file, current.line = m["file"], int(m["line"])
                current.text += f" at end of source (to match the one at line {m['line']})"
            in_note = True
            continue
        end = _END_OF_SOURCE.match(line)
        if end:
            in_note = False
            sev = "fatal" if end["sev"] == "catastrophic error" else end["sev"]
            current = RawMessage("edg", sev, end["text"], None, None, None, end["code"] or "")
            messages.append(current)
            continue
        if m:
            in_note = False
            sev = "fatal" if m["sev"] == "catastrophic error" else m["sev"]
            current = RawMessage("edg", sev, m["text"], m["file"], int(m["line"]), None, m["code"] or "")
            messages.append(current)
            continue
        if current is not None and current.tool == "edg" and line.startswith(" "):
            if not in_note or _FRAME.search(line):
                _continue_edg(current, line)
            elif current.note_places and not current.note_places[-1].echo and line.strip() != "^":
                current.note_places[-1].echo = line.strip()
            continue
        current = None
        for tool, pattern in (("host", _GCC), ("host", _TOOL), ("ptxas", _PTXAS), ("nvlink", _NVLINK),
                              ("nvcc", _NVCC_FATAL)):
            m = pattern.match(line)
            if m:
                d = m.groupdict()
                sev = d.get("sev") or "fatal"  # nvcc's own refusals name no severity
                sev = "fatal" if sev == "fatal error" else sev
                messages.append(
                    RawMessage(
                        tool, sev, d["text"], d.get("file"), int(d["line"]) if d.get("line") else None,
                        int(d["col"]) if d.get("col") else None, d.get("code") or "", frames=included,
                    )
                )
                break
        included = []
    return messages


def _continue_edg(msg: RawMessage, line: str) -> None:
    """Lines under an EDG header: the echoed source, the caret, 'detected during' frames."""
    stripped = line.strip()
    frame = _FRAME.search(stripped)
    if frame:
        what = frame["what"][1:-1]
        msg.frames.append(Frame(what, frame["file"] or msg.file or "", int(frame["line"])))
    elif stripped == "^":
        msg.col = len(line) - len(line.lstrip()) + 1 - 2  # EDG indents the echo by two spaces
    elif stripped.startswith("detected during") or _COUNT.match(stripped):
        pass
    elif stripped.startswith(_DETAIL_PREFIXES):
        msg.text += "; " + stripped
    elif not msg.source_line and not msg.frames:
        msg.source_line = stripped
        msg.echo = line[2:]
    elif not msg.frames and not stripped.startswith("("):
        # EDG wraps long messages onto indented continuation lines before the echo.
        msg.text += " " + stripped
