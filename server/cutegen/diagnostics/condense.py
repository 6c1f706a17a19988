"""The CuTe condenser: one readable diagnostic per user line, at the line to blame, saying the root cause.

A CuTe template error is dozens of errors and hundreds of lines of instantiation chains. The root is
almost always a static_assert in a CuTe header, and the line to blame is the innermost frame of the
chain that lies in the user's own file. Errors that only follow from an earlier one are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from cutegen.diagnostics.arguments import argument_position
from cutegen.diagnostics.cute_types import compact_type, cute_notation, drop_strides, template_bindings
from cutegen.diagnostics.macros import macro_position
from cutegen.diagnostics.names import explain_names
from cutegen.diagnostics.nvcc_log import INCLUDE, Frame, RawMessage
from cutegen.diagnostics.localise import localise
from cutegen.diagnostics.text import ELLIPSIS, fit, top_level_items
from cutegen.model import Diagnostic, Location, Severity

SourceLines = Callable[[str], list[str]]  # file path → its lines (empty list when unreadable)

_CASCADE_MARKERS = ("<error-type>", "<error-constant>", "<unknown-type>", "cannot deduce class template arguments",
                    "cannot deduce the return type")
_ASSERT_WITH_TEXT = re.compile(r'^static assertion failed with "(?P<text>.*)"$')
_MAX_MESSAGE = 240
_PARSING_RESTARTS = "12-D"  # "warning #12-D: parsing restarts here after previous syntax error": noise
# Failures whose words do not say what to do.
_HINTS = {
    "c10/cuda/impl/cuda_cmake_macros.h": "this PyTorch has no CUDA headers (a CPU-only build): check with a CUDA "
                                         "build of torch, or drop the c10/cuda includes",
    "Unsupported gpu architecture": "this nvcc cannot build for it: choose another target arch",
}


@dataclass
class _Anchored:
    msg: RawMessage
    file: str
    line: int
    col: int | None
    via: Frame | None  # the user frame that located it, or None when the message is in user code itself
    macro_line: int | None = None  # the macro invocation the error was reported at, when moved inside it


def condense(messages: list[RawMessage], main_file: str, is_user: Callable[[str], bool],
             lines: SourceLines) -> list[Diagnostic]:
    groups: dict[tuple[str, int], list[_Anchored]] = {}
    for msg in messages:
        if (msg.tool not in ("edg", "host", "nvcc", "clang") or msg.severity == "remark"
                or msg.code == _PARSING_RESTARTS):
            continue
        anchored = _anchor(msg, main_file, is_user, lines)
        groups.setdefault((anchored.file, anchored.line), []).append(anchored)

    out: list[Diagnostic] = []
    seen_real_error = False
    for members in groups.values():
        root = min(members, key=_rank)
        if seen_real_error and (_is_cascade(root.msg) or _unlocated(root)):
            # Follows from an earlier error (EDG stops printing the chain of repeats): fixing that one
            # makes this go away.
            continue
        if root.msg.severity in ("error", "fatal"):
            seen_real_error = True
        diagnostic = _diagnostic(root, members, is_user, lines)
        first = _same_cause(out, diagnostic)
        if first is not None:
            # The same bad object used again: one diagnostic, the other uses as related places.
            first.related.append(Location(diagnostic.file, diagnostic.line, diagnostic.col, "same error here"))
            continue
        out.append(diagnostic)
    return localise(explain_names(out, lines), main_file, lines(main_file))


def _same_cause(earlier: list[Diagnostic], d: Diagnostic) -> Diagnostic | None:
    for e in earlier:
        if e.severity == d.severity and e.root == d.root and e.data.get("api") == d.data.get("api"):
            return e
    return None


def _anchor(msg: RawMessage, main_file: str, is_user: Callable[[str], bool], lines: SourceLines) -> _Anchored:
    if msg.file and is_user(msg.file):
        source = lines(msg.file)
        inside = macro_position(source, msg.line or 0, msg.echo, msg.col)
        line, col = inside or (msg.line or 1, msg.col)
        argument = _mismatched_argument(msg)
        if argument:  # "argument #k does not match": the argument, which may be lines below the call
            line, col = argument_position(source, line, col, argument) or (line, col)
        if msg.text == 'expected a ";"' or msg.text.startswith("expected ';'"):  # EDG's words, clang's
            line, col = _end_of_previous_statement(source, line, col)
        moved = inside is not None and inside[0] != msg.line
        return _Anchored(msg, msg.file, line, col, None, macro_line=msg.line if moved else None)
    for frame in msg.frames:  # innermost first
        if is_user(frame.file):
            return _Anchored(msg, frame.file, frame.line, None, frame)
    return _Anchored(msg, main_file, _named_user_symbol_line(msg.text, lines(main_file)), None, None)


# Nothing but declaration specifiers before the caret: the next declaration starts there.
_SPECIFIERS_ONLY = re.compile(r'^\s*(?:(?:__\w+__|static|inline|constexpr|extern\s+"C"|CUTEGEN_EXPORT|CUTE_\w+)\s*)*$')


def _end_of_previous_statement(source: list[str], line: int, col: int | None) -> tuple[int, int | None]:
    """EDG puts a missing `;` at the next token; when that token starts its line, the `;` belongs at the end of
    the code line before (where a fixer types it)."""
    if not 0 < line <= len(source) or col is None:
        return line, col
    text = source[line - 1]
    if not _SPECIFIERS_ONLY.match(text[: col - 1]):
        return line, col
    for n in range(line - 1, 0, -1):
        code = source[n - 1].split("//")[0].rstrip()
        if code.strip():
            return n, len(code) + 1
    return line, col


def _mismatched_argument(msg: RawMessage) -> int | None:
    for note in msg.note_places:
        found = _ARG_MISMATCH.search(note.what)
        if found:
            return int(found["n"])
    return None


def _named_user_symbol_line(text: str, source: list[str]) -> int:
    """No user frame (EDG printed none): point at the user's symbol the message names, e.g. the functor in
    'calling a __host__ function("Silu::operator ()(float) const")', else at line 1."""
    for quoted in re.findall(r'function\("([^"(]+)', text):
        for name in quoted.split("::"):
            name = name.strip()
            if not re.fullmatch(r"[A-Za-z_]\w*", name) or name in ("cute", "cutlass", "std", "operator"):
                continue
            pattern = re.compile(rf"\b{re.escape(name)}\b")
            for i, line in enumerate(source, 1):
                if pattern.search(line.split("//")[0]):
                    return i
    return 1


def _unlocated(a: _Anchored) -> bool:
    return a.via is None and a.file != a.msg.file and a.line == 1


def _rank(a: _Anchored) -> int:
    m = a.msg
    if m.severity not in ("error", "fatal"):
        return 5
    if _is_cascade(m):
        return 4
    if _ASSERT_WITH_TEXT.match(m.text):
        return 1
    if m.text.startswith("static assertion failed"):
        return 2
    return 3


def _is_cascade(m: RawMessage) -> bool:
    return any(marker in m.text for marker in _CASCADE_MARKERS)


def _diagnostic(a: _Anchored, members: list[_Anchored], is_user, lines: SourceLines) -> Diagnostic:
    m = a.msg
    root, comment = _root_text(m, lines)
    included = a.via is not None and a.via.what == INCLUDE
    api = _api_name(a.via.what) if a.via and not included else ""
    bindings = _bindings(a.via.what) if a.via and not included else {}
    prefix = ""
    if a.file != m.file and (not a.via or included) and m.file:
        prefix = f"{_short_path(m.file)}:{m.line}: "
    if m.tool == "nvcc":  # nvcc's own refusal (unknown arch, unknown input): its words, said to be nvcc's
        prefix = f"nvcc {m.severity}: "
    elif m.tool == "host" and not m.file:  # the host compiler refusing a flag: say it is the host compiler
        prefix = f"host compiler {m.severity}: "
    message = _compose(prefix, root, api, bindings, _decisive_notes(m, bool(m.file) and is_user(m.file)), m.source_line)

    text = lines(a.file)
    src = text[a.line - 1] if 0 < a.line <= len(text) else ""
    col = a.col or (len(src) - len(src.lstrip()) + 1)
    end_col = max(col + 1, len(src.rstrip()) + 1)

    related = []
    if m.file and not is_user(m.file) and m.line:
        cause = "static_assert" if "static assertion" in m.text else "error"
        related.append(Location(m.file, m.line, 1, f"root cause: {cause} here"))
    signature = _signature(m, is_user, lines)
    if signature:  # the parameter the argument does not match, in the user's own code: the other place to fix
        related.append(Location(signature["file"], signature["line"], signature["col"],
                                f"parameter #{signature['parameter']} of {signature['function']}: change it here "
                                "if the call is right"))
    related += [r for r in _note_locations(m, is_user) if (r.file, r.line) != (a.file, a.line)
                and not (signature and _ARG_MISMATCH.search(r.message))]
    if a.macro_line:
        related.append(Location(a.file, a.macro_line, 1,
                                "inside the macro invocation nvcc reports (at its first line)"))
    outer = _outermost_user_frame(m, is_user)
    if outer and (outer.file, outer.line) != (a.file, a.line):
        related.append(Location(outer.file, outer.line, 1, "instantiated from here"))

    severity = Severity.ERROR if m.severity in ("error", "fatal") else Severity.WARNING
    return Diagnostic(
        file=a.file, line=a.line, col=col, end_col=end_col, severity=severity, message=message,
        code=_code(m, is_user), root=root,
        explanation=_explanation(root, comment, a, members, api, bindings),
        related=related,
        data={
            "root": root, "api": api, "bindings": bindings, "header": _header_ref(m, is_user),
            "header_comment": comment, "errors_on_line": len(members),
            **({"signature": signature} if signature else {}),
        },
    )


def _root_text(m: RawMessage, lines: SourceLines) -> tuple[str, str]:
    """The root cause in words, and the header's comment on the asserting line (if any)."""
    found = _ASSERT_WITH_TEXT.match(m.text)
    if found:
        return found["text"], _comment_above(m, lines)
    if m.text.startswith("static assertion failed"):
        expr = _asserted_expression(m.source_line)
        return f"static assertion failed: {expr}" if expr else "static assertion failed", _comment_above(m, lines)
    hints = [h for key, h in _HINTS.items() if key in m.text]
    return cute_notation(m.text) + "".join(f" ({h})" for h in hints), ""


def _asserted_expression(source_line: str) -> str:
    s = source_line.strip().rstrip(";")
    m = re.match(r"^(?:static_assert|CUTE_STATIC_ASSERT_V|CUTE_STATIC_ASSERT)\s*\((.*)\)$", s)
    expr = m.group(1) if m else s
    expr = re.sub(r',\s*"[^"]*"\s*$', "", expr)  # drop an empty message argument
    return cute_notation(expr.strip())


def _comment_above(m: RawMessage, lines: SourceLines) -> str:
    """CuTe documents many messageless asserts with a comment on or just above the asserting line."""
    if not m.file or not m.line:
        return ""
    text = lines(m.file)
    if not 0 < m.line <= len(text):
        return ""
    same = text[m.line - 1].partition("//")[2].strip()
    if same:
        return same
    comment: list[str] = []
    for j in range(m.line - 2, max(-1, m.line - 6), -1):
        s = text[j].strip()
        if not s.startswith("//"):
            break
        comment.insert(0, s.lstrip("/ ").strip())
    return " ".join(comment)


def _api_name(what: str) -> str:
    """'void cute::copy<...>(const ...) [with ...]' → 'cute::copy'."""
    head = re.sub(r"\s*\[with .*\]$", "", what)
    head = head.split("(", 1)[0]
    depth, cleaned = 0, []
    for c in head:  # drop template arguments
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif depth == 0:
            cleaned.append(c)
    words = "".join(cleaned).split()
    return words[-1] if words else ""


def _bindings(what: str) -> dict[str, str]:
    """Template arguments of the user's call in CuTe notation, whole: the decisive one may be a layout, a bare
    copy op where a Copy_Atom was needed, or a raw array (`Iterator = float [4]`). Empty packs are left out."""
    out = {}
    for k, v in template_bindings(what).items():
        if v not in ("<>", "") and not k.startswith("<"):
            out[k] = compact_type(cute_notation(v))
    return out


def _compose(prefix: str, root: str, api: str, bindings: dict[str, str], notes: list[str], asserted: str = "") -> str:
    """One line of at most _MAX_MESSAGE characters. Long parts shrink in order of how little they say (strides,
    then whole bindings); a cut never falls inside a type, and every cut is marked with an ellipsis."""
    head, _, args = root.partition("; argument types are: ")
    message = prefix + head + "".join(f" ({n})" for n in notes)
    if api and api not in head:
        message += f" — in {api}"
    if args and any(n.startswith("argument #") for n in notes):
        return fit(message, _MAX_MESSAGE)  # the note names the argument and its type: the full list adds nothing
    if args:  # an overload that does not match: the argument types are the bindings that decide
        items = [compact_type(x) for x in top_level_items(args)]
        decisive = _strides_decide(dict(enumerate(items)), head)
        shapes = [x if i in decisive else drop_strides(x) for i, x in enumerate(items)]
        forms = (items, shapes, [_ENGINE.sub("Tensor<", x) for x in shapes])
        for n in range(len(items), 0, -1):  # all arguments in a shorter form before fewer arguments
            for form in forms:
                full = message + "; argument types are: (" + ", ".join(form[:n]) + (", …)" if n < len(items) else ")")
                if len(full) <= _MAX_MESSAGE:
                    return full
        return fit(message, _MAX_MESSAGE)
    if bindings:
        named = set(re.findall(r"\w+", asserted))  # the parameters the failing line itself names decide
        decisive = _strides_decide(bindings, root)  # (a messageless assert's root is its expression)
        ranked = dict(sorted(bindings.items(), key=lambda kv: -2 if kv[0] in decisive else
                             -1 if kv[0] in named else _binding_rank(*kv)))
        # Shorter forms in order of how little they lose: strides nobody needs, then every stride.
        binding_forms = [ranked, {k: v if k in decisive else drop_strides(v) for k, v in ranked.items()},
                         {k: drop_strides(v) for k, v in ranked.items()}]
        partial = []
        for bound in binding_forms:
            shown = [f"{k} = {v}" for k, v in bound.items()]
            while shown and len(message) + len(", ".join(shown)) + 6 > _MAX_MESSAGE:
                shown.pop()
            if len(shown) == len(bound):
                return message + " [" + ", ".join(shown) + "]"
            partial.append(shown)
        # Fewer bindings before a decisive stride is lost (a stride-free form that shows more is the fallback).
        shown = partial[1] if len(partial[1]) >= len(decisive) else partial[2]
        if shown:
            return message + " [" + ", ".join(shown) + ", " + ELLIPSIS + "]"
    return fit(message, _MAX_MESSAGE)


# Messages about the strides themselves: every layout's stride is part of the answer.
_ABOUT_STRIDES = re.compile(r"\bstrides?\b|vectori[sz]|contiguous|congruen|canonical|\bmajor\b|\bis_static\b"
                            r"|layout is incompatible", re.I)


def _strides_decide(values: dict, about: str) -> set:
    """The keys whose strides must stay: two layouts equal in shape but not in stride (the stride is what
    differs), or every layout when the message is about strides (`(_4,_4)` would hide the `(int,_8)` that cannot
    be vectorized)."""
    layouts = {k: v for k, v in values.items() if drop_strides(v) != v}
    if _ABOUT_STRIDES.search(about):
        return set(layouts)
    by_shape: dict[str, set] = {}
    for v in layouts.values():
        by_shape.setdefault(drop_strides(v), set()).add(v)
    return {k for k, v in layouts.items() if len(by_shape[drop_strides(v)]) > 1}


_ENGINE = re.compile(r"Tensor<(?:rmem|smem|gmem) [^,<>]*, ")
_LAYOUTISH = re.compile(r"^\(|^Tensor<|:|^_\d")


def _binding_rank(name: str, value: str) -> int:
    """Layouts, tensors and tuples first (what CuTe asserts compare), then other types; engines last."""
    if name.endswith("Engine") or value.startswith(("ArrayEngine", "ViewEngine")) or name in ("TV", "Tiler"):
        return 2
    return 0 if _LAYOUTISH.search(value) else 1


_ARG_MISMATCH = re.compile(r'"(?P<name>[^"]+)" does not match because argument #(?P<n>\d+) does not match parameter')


def _decisive_notes(m: RawMessage, users_call: bool) -> list[str]:
    """EDG notes that say why a candidate was rejected (which argument, which parameter), not only that it was;
    the argument's type and the parameter's declaration spelled out."""
    out = []
    for note in m.note_places:
        found = _ARG_MISMATCH.search(note.what)
        if found:
            k = int(found["n"])
            args = top_level_items(m.text.partition("; argument types are: ")[2])
            params = _parameters(note.echo, found["name"])
            arg = f" ({args[k - 1]})" if 0 < k <= len(args) else ""
            param = f" `{params[k - 1]}`" if 0 < k <= len(params) else ""
            out.append(f"argument #{k}{arg} does not match parameter #{k}{param} of {found['name']}")
        elif "because" in note.what:
            out.append(note.what)
    deduction = [n.what for n in m.note_places if "failed deduction" in n.what]
    if not out and len(deduction) == 1 and len(m.note_places) == 1:  # the one candidate: why is in the arguments
        out.append(deduction[0])
    # Parameter counts only for the user's own call: inside a library, EDG lists just some of the candidates.
    return out[:2] or (_parameter_counts(m) if users_call else [])


_PARAM_COUNT = re.compile(r'number of parameters of function template "(?P<decl>[^"]+)" does not match the call')


def _signature(m: RawMessage, is_user, lines: SourceLines) -> dict | None:
    """Where the parameter that rejects argument #k is declared, when that declaration is the user's: file,
    line, col and end_col of the parameter, the function's name and k (the editor offers it as a fix target)."""
    for note in m.note_places:
        found = _ARG_MISMATCH.search(note.what)
        if not found or not is_user(note.file):
            continue
        name, k = found["name"].split("::")[-1], int(found["n"])
        source = lines(note.file)
        for line in range(note.line, min(note.line + 3, len(source)) + 1):  # the name may follow a template line
            at = re.search(rf"\b{re.escape(name)}\s*\(", source[line - 1].split("//")[0])
            place = at and argument_position(source, line, at.start() + 1, k)
            if place:
                params = _parameters(note.echo, found["name"])
                text = params[k - 1] if 0 < k <= len(params) else ""
                p_line, p_col = place
                length = len(text) if source[p_line - 1][p_col - 1:].startswith(text) and text else 1
                return {"file": note.file, "line": p_line, "col": p_col, "end_col": p_col + length,
                        "function": found["name"], "parameter": k}
    return None


def _parameter_counts(m: RawMessage) -> list[str]:
    """'no instance matches' when the call has the wrong number of arguments: the closest candidate's signature."""
    given = len(top_level_items(m.text.partition("; argument types are: ")[2]))
    candidates = []
    for note in m.note_places:
        found = _PARAM_COUNT.search(note.what)
        if found:
            name, _, params = found["decl"].partition("(")
            candidates.append((name, top_level_items("(" + params)))
    if not given or not candidates:
        return []
    name, params = min(candidates, key=lambda c: abs(len(c[1]) - given))
    if len(params) == given:
        return []
    signature = f"{compact_type(name)}({', '.join(compact_type(p) for p in params)})"
    return [f"{given} arguments given; the closest candidate takes {len(params)}: {signature}"]


def _parameters(declaration: str, name: str) -> list[str]:
    """'void gemm_device(const float* A, const float* B)' → ['const float* A', 'const float* B']."""
    at = declaration.find(name + "(")
    if at < 0:
        return []
    rest = declaration[at + len(name):]
    depth = 0
    for i, c in enumerate(rest):
        depth += c in "(<["
        depth -= c in ")>]"
        if depth == 0:
            return top_level_items(rest[: i + 1])
    return top_level_items(rest.rstrip(",") + ")")[:-1] if "," in rest else []  # a declaration that goes on


def _note_locations(m: RawMessage, is_user) -> list[Location]:
    """Notes in the user's own code (the template whose parameter does not match, the brace to match)."""
    return [Location(n.file, n.line, 1, "note: " + n.what) for n in m.note_places if is_user(n.file)][:3]


def _outermost_user_frame(m: RawMessage, is_user) -> Frame | None:
    user = [f for f in m.frames if is_user(f.file)]
    return user[-1] if user else None


def _code(m: RawMessage, is_user) -> str:
    if m.text.startswith("static assertion failed"):
        return "cute-static-assert" if m.file and "cute" in Path(m.file).parts else "static-assert"
    if m.code:
        return f"{m.tool}-{m.code}"
    return f"{m.tool}-{m.severity}"


def _header_ref(m: RawMessage, is_user) -> str:
    if m.file and not is_user(m.file):
        return f"{_short_path(m.file)}:{m.line}"
    return ""


def _short_path(path: str) -> str:
    """'/…/include/cute/algorithm/copy.hpp' → 'cute/algorithm/copy.hpp'."""
    parts = Path(path).parts
    for anchor in ("cute", "cutlass", "cutegen", "c10", "ATen", "pybind11", "torch"):
        if anchor in parts:
            last = len(parts) - 1 - parts[::-1].index(anchor)  # torch/include/torch/...: the inner one
            return "/".join(parts[last:])
    return Path(path).name


def _explanation(root, comment, a: _Anchored, members, api, bindings) -> str:
    md = [f"**{root}**"]
    if comment:
        md.append(f"Header comment: _{comment}_")
    if api:
        md.append(f"Raised inside `{api}`, called on this line.")
    for k, v in bindings.items():
        md.append(f"- `{k}` = `{v}`")
    if a.msg.file and (a.msg.file, a.msg.line) != (a.file, a.line):
        verb = "Asserted" if "static assertion" in a.msg.text else "Reported"
        md.append(f"{verb} at `{_short_path(a.msg.file)}:{a.msg.line}`.")
    others = [x.msg for x in members if x is not a]
    if others:
        shown = others[:5]
        md.append(f"{len(others)} more error(s) on this line follow from the same cause"
                  + (":" if len(shown) == len(others) else f" (the first {len(shown)}; all of them in the raw log):"))
        md += [f"- {fit(cute_notation(o.text), 200)}" for o in shown]
    return "\n\n".join(md)
