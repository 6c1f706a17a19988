"""Which settings a workspace may choose: the server's own rule, whatever scope the client enforces.

A cloned repository's `.vscode/settings.json` must not pick the programs CuTeGen runs, the LLM endpoint it sends
kernels and keys to, or the sandbox. VS Code keeps workspaces from setting `machine`-scoped settings, but other
clients (and editors that read `.vscode/settings.json` for a server, like neoconf) do not, so the server checks
every value it receives against the workspace's own settings file and refuses a protected one that matches.

Why compare with the file rather than ask workspace/configuration once per scope: VS Code's answer without a
scopeUri already merges the single-folder workspace's `.vscode/settings.json`, so the two answers are equal and
tell nothing. A user value equal to the workspace's is dropped too (the server cannot tell them apart); a
protected setting the file sets is named in a message even when the client already dropped it, so that the user
learns the repository tried.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from cutegen.settings import editor_key

# Settings that name a program, an LLM endpoint or where the key is read from, or turn the sandbox off: user only.
PROTECTED = ("nvcc", "ncu", "llm_base_url", "llm_model", "llm_api_key_env", "sandbox", "background_agent",
             "program_command")
# nvcc options that make it start another program, and host-compiler options that do (passed with -Xcompiler).
_PROGRAM_OPTIONS = ("-ccbin", "--compiler-bindir", "--run", "-run", "--run-args", "-run-args")
_HOST_PROGRAM_PREFIXES = ("-wrapper", "-fplugin", "-B", "-specs", "--specs", "-fuse-ld", "-plugin", "--plugin")
_HOST_PASSING = ("-Xcompiler", "--compiler-options", "-Xlinker", "--linker-options")
_RESPONSE_OPTIONS = ("--options-file", "-optf")
_OUTPUT_OPTIONS = ("--dependency-output", "-MF", "-o", "--output-file", "-odir", "--output-directory",
                   "--keep-dir", "-keep-dir")
_RESPONSE_DEPTH = 4  # response files may name response files; deeper nesting is refused


@dataclass(frozen=True)
class Refusal:
    setting: str  # the editor's name, cutegen.X
    reason: str

    def message(self) -> str:
        return f"CuTeGen ignored {self.setting} from this workspace's .vscode/settings.json: {self.reason}"


def workspace_values(roots: list[Path]) -> dict[str, object]:
    """The `cutegen.*` values the workspace folders' `.vscode/settings.json` set (JSON with comments), by key
    without the prefix; an unreadable or malformed file sets nothing (VS Code ignores it too)."""
    values: dict[str, object] = {}
    for root in roots:
        try:
            raw = json.loads(_strip_jsonc((root / ".vscode" / "settings.json").read_text(errors="replace")))
        except (OSError, ValueError):
            continue
        if not isinstance(raw, dict):
            continue
        nested = raw.get("cutegen")
        for key, value in (nested.items() if isinstance(nested, dict) else ()):
            values.setdefault(str(key), value)
        for key, value in raw.items():
            if isinstance(key, str) and key.startswith("cutegen."):
                values.setdefault(key[len("cutegen."):], value)
    return values


def screen(raw: dict, roots: list[Path]) -> tuple[dict, list[Refusal]]:
    """`raw` (the merged `cutegen` section a client sent) without what the workspace may not choose, and one
    refusal per protected setting the workspace's file sets: said also when the client already dropped it (VS Code
    with `machine` scope), so that the user learns the repository tried."""
    from_workspace = workspace_values(roots)
    kept, refusals = dict(raw), []
    for name_key, theirs in from_workspace.items():
        name = _snake(name_key)
        sent = [key for key, value in raw.items() if _snake(key) == name and value == theirs]
        if name in PROTECTED:
            for key in sent:  # the workspace's own value reached us: a scope-blind client
                del kept[key]
            refusals.append(Refusal(editor_key(name), _why(name)))
        elif name == "extra_flags" and isinstance(theirs, list):
            base = roots[0] if roots else Path.cwd()  # where nvcc runs relative response files from
            for key in sent:
                flags, bad = safe_flags([v for v in theirs if isinstance(v, str)], base)
                kept[key] = flags
                refusals += [Refusal(editor_key(name), f"{flag} {why}") for flag, why in bad]
    return kept, refusals


def safe_flags(flags: list[str], base: Path, depth: int = 0) -> tuple[list[str], list[tuple[str, str]]]:
    """The flags without those that make nvcc start a program (or read a response file that does, or write
    outside its build folder), and (flag, why) for each one dropped. A flag's argument is dropped with it."""
    kept: list[str] = []
    bad: list[tuple[str, str]] = []
    i = 0
    while i < len(flags):
        flag, why, used = flags[i], None, 1
        name, _, inline = flag.partition("=")
        argument = inline if inline else (flags[i + 1] if i + 1 < len(flags) else "")
        takes = not inline and name in (*_PROGRAM_OPTIONS[:2], *_PROGRAM_OPTIONS[4:], *_HOST_PASSING,
                                        *_RESPONSE_OPTIONS, *_OUTPUT_OPTIONS)  # --run and -run take none
        if name in _PROGRAM_OPTIONS:
            why = "makes nvcc start another program"
        elif name in _HOST_PASSING and _starts_program(argument):
            why = f"passes {_starts_program(argument)} to the host compiler, which starts that program"
        elif _starts_program(flag):
            why = "makes the host compiler start another program"
        elif name in _OUTPUT_OPTIONS and (Path(argument).is_absolute() or ".." in Path(argument).parts):
            why = f"writes to {argument}, outside the build folder"
        elif flag.startswith("@") or name in _RESPONSE_OPTIONS:
            why = _response_file(flag[1:] if flag.startswith("@") else argument, base, depth)
            takes = takes and not flag.startswith("@")
        if takes:
            used = 2
        if why:
            bad.append((" ".join(flags[i:i + used]), why))
        else:
            kept += flags[i:i + used]
        i += used
    return kept, bad


def _starts_program(options: str) -> str | None:
    """The host-compiler option in `options` (a comma- or space-separated list) that starts a program, if any."""
    for option in re.split(r"[,\s]+", options.strip()):
        if option.startswith(_HOST_PROGRAM_PREFIXES):
            return option
    return None


def _response_file(name: str, base: Path, depth: int) -> str | None:
    if depth >= _RESPONSE_DEPTH:
        return "nests response files too deeply"
    try:
        text = (base / name).read_text(errors="replace")
        inner = shlex.split(text, comments=True)
    except (OSError, ValueError, RuntimeError) as e:  # RuntimeError: Path's symlink loop
        return f"is a response file CuTeGen cannot read ({e})"
    _, bad = safe_flags(inner, base, depth + 1)
    return f"is a response file that holds {bad[0][0]} ({bad[0][1]})" if bad else None


def _why(name: str) -> str:
    if name in ("nvcc", "ncu"):
        return "a workspace cannot choose the programs CuTeGen runs. Set it in your user settings."
    if name == "sandbox":
        return "a workspace cannot turn the sandbox off. Set it in your user settings."
    if name == "background_agent":
        return "a workspace cannot start LLM requests on its own. Set it in your user settings."
    return "a workspace cannot choose where kernels and your API key are sent. Set it in your user settings."


def _snake(key: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def _strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (VS Code's settings format) as plain JSON."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))
