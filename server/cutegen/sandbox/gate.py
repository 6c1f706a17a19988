"""The static gate: a candidate (model-written text) is refused before it is built when it adds a host-side
use of a process, file, network, dynamic-loading or environment API, an include of such a header or of a
path outside the project, or inline assembly outside device code. "Adds": compared with the file the
candidate was derived from, so a kernel whose own launcher already reads a file can still be optimized.
The user's own code is never gated; the sandbox still runs what passes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

# (what it lets code do, names). Matched as calls or types, outside device-only functions.
HOST_APIS = {
    "process": ("system", "popen", "fork", "vfork", "execl", "execlp", "execle", "execv", "execvp", "execvpe",
                "execve", "fexecve", "posix_spawn", "posix_spawnp", "clone", "kill", "syscall", "ptrace", "daemon"),
    "file": ("fopen", "freopen", "fdopen", "open", "openat", "creat", "unlink", "unlinkat", "remove", "rename",
             "mkdir", "rmdir", "chmod", "chown", "truncate", "symlink", "link", "opendir", "ifstream", "ofstream",
             "fstream", "filebuf", "filesystem"),
    "network": ("socket", "connect", "bind", "listen", "accept", "getaddrinfo", "gethostbyname", "inet_pton",
                "inet_addr", "curl_easy_init"),
    "dynamic loading": ("dlopen", "dlmopen", "dlsym", "dlvsym", "LoadLibrary", "LoadLibraryA"),
    "environment": ("getenv", "secure_getenv", "setenv", "putenv", "unsetenv", "clearenv", "environ"),
}
HEADERS = {
    "process": ("unistd.h", "spawn.h", "sys/wait.h", "sys/ptrace.h", "sys/syscall.h", "signal.h", "csignal"),
    "file": ("fstream", "filesystem", "fcntl.h", "sys/stat.h", "dirent.h", "sys/mman.h"),
    "network": ("sys/socket.h", "netinet/in.h", "arpa/inet.h", "netdb.h", "curl/curl.h"),
    "dynamic loading": ("dlfcn.h",),
}
# Python candidates (KernelBench ModelNew files) run their module body on the host.
PYTHON_APIS = {
    "process": ("subprocess", "os.system", "os.popen", "os.fork", "os.exec", "os.spawn", "pty", "multiprocessing"),
    "file": ("open(", "pathlib", "shutil", "os.remove", "os.unlink", "os.rename", "os.mkdir", "io.open"),
    "network": ("socket", "urllib", "http.client", "requests", "httpx"),
    "dynamic loading": ("ctypes", "cffi", "importlib", "__import__", "eval(", "exec(", "compile(", "pickle",
                        "marshal"),
    "environment": ("os.environ", "getenv", "os.putenv"),
}
_STD_ALGORITHMS = {"remove", "bind"}  # std::remove and std::bind are an algorithm and a binder, not file/socket calls
_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b")
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"\n]+)[>\"]", re.M)
# A quoted include must name a header: `#include ".env"` would print the file's lines in compiler errors,
# which go back to the model as feedback.
_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".cu", ".inl", ".ipp", ".tcc", ".inc")
_HEAD_DEVICE = re.compile(r"\b(?:__global__|__device__)\b")
_HEAD_HOST = re.compile(r"\b__host__\b")


@dataclass(frozen=True)
class Use:
    category: str  # "process", "file", ..., "include", "inline assembly"
    name: str
    line: int  # 1-based, in the candidate

    def describe(self) -> str:
        if self.category == "include":
            return f"line {self.line}: #include {self.name}"
        if self.category == "inline assembly":
            return f"line {self.line}: inline assembly in host code"
        return f"line {self.line}: {self.category} API `{self.name}`"


@dataclass(frozen=True)
class Refusal:
    uses: tuple[Use, ...]

    @property
    def reason(self) -> str:
        listed = "; ".join(u.describe() for u in self.uses[:5])
        more = f" (and {len(self.uses) - 5} more)" if len(self.uses) > 5 else ""
        return (f"refused before building: the candidate adds host code that model-written code may not run "
                f"({listed}{more}). Candidates may change device code and launch configuration, not open files, "
                "start processes, use the network, load libraries or read the environment.")


def review(candidate: str, original: str = "", *, python: bool = False) -> Refusal | None:
    """None when the candidate adds no gated use; else the refusal, naming each new use and its line."""
    new = _uses(candidate, python)
    old = Counter((u.category, u.name) for u in _uses(original, python))
    added = []
    for use in new:
        key = (use.category, use.name)
        if old[key] > 0:
            old[key] -= 1  # an existing use, kept (perhaps moved)
        else:
            added.append(use)
    return Refusal(tuple(added)) if added else None


def _uses(text: str, python: bool) -> list[Use]:
    if not text:
        return []
    if python:  # the module body, and the C++ sources in its strings (load_inline builds them)
        cpp = re.sub(r"(?m)^\s*#(?!\s*include)[^\n]*", "", text)
        return sorted(_python_uses(text) + _api_uses(cpp, device_spans(cpp)) + _include_uses(text) +
                      _asm_uses(cpp, device_spans(cpp)), key=lambda u: u.line)
    code = strip_comments_and_strings(text)
    device = device_spans(code)
    uses = [u for u in _api_uses(code, device)] + _include_uses(text) + _asm_uses(code, device)
    return sorted(uses, key=lambda u: u.line)


def _api_uses(code: str, device: list[tuple[int, int]]) -> list[Use]:
    out = []
    for category, names in HOST_APIS.items():
        # Unqualified, `::`- or `std::`-qualified; `cute::copy` or `x.open()` are other functions.
        pattern = re.compile(r"(?<![\w.:])(::|std::)?(" + "|".join(map(re.escape, names)) + r")\b"
                             r"(?=\s*[(<{]|\s*::|\s+\w|\s*;|\s*\))")
        for m in pattern.finditer(code):
            if _preceded_by_member_access(code, m.start()) or _inside(device, m.start()):
                continue
            if m.group(1) == "std::" and m.group(2) in _STD_ALGORITHMS:
                continue
            out.append(Use(category, m.group(2), _line(code, m.start())))
    return out


def _include_uses(text: str) -> list[Use]:
    out = []
    gated = {h for hs in HEADERS.values() for h in hs}
    for m in _INCLUDE.finditer(strip_comments_and_strings(text, keep_strings=True)):
        name = m.group(2).strip()
        outside = name.startswith("/") or ".." in name.split("/") or name.startswith("~")
        not_a_header = m.group(1) == '"' and not name.lower().endswith(_HEADER_SUFFIXES)
        if name in gated or outside or not_a_header:
            out.append(Use("include", f"{m.group(1)}{name}{'>' if m.group(1) == '<' else chr(34)}", _line(text, m.start())))
    return out


def _asm_uses(code: str, device: list[tuple[int, int]]) -> list[Use]:
    return [Use("inline assembly", "asm", _line(code, m.start())) for m in _ASM.finditer(code)
            if not _inside(device, m.start())]


def _python_uses(text: str) -> list[Use]:
    code = re.sub(r"#[^\n]*", "", text)
    out = []
    for category, names in PYTHON_APIS.items():
        for name in names:
            pattern = re.escape(name) + (r"" if name.endswith("(") else r"\b")
            for m in re.finditer(r"(?<![\w.])" + pattern, code):
                out.append(Use(category, name.rstrip("("), _line(code, m.start())))
    return sorted(out, key=lambda u: u.line)


def strip_comments_and_strings(text: str, *, keep_strings: bool = False) -> str:
    """Comments (and string/char literals) blanked, newlines kept, so offsets and lines still match."""
    out, i, n = [], 0, len(text)
    while i < n:
        c, nxt = text[i], text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c == "/" and nxt == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'" and not keep_strings:
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def device_spans(code: str) -> list[tuple[int, int]]:
    """Character spans of the bodies of device-only functions (`__global__`/`__device__` without `__host__`),
    lambdas included: code there never runs on the host."""
    spans, stack, head_start = [], [], 0
    for i, c in enumerate(code):
        if c == "{":
            head = code[head_start:i]
            inherited = bool(stack) and stack[-1][1]
            device = inherited or (bool(_HEAD_DEVICE.search(head)) and not _HEAD_HOST.search(head))
            stack.append((i, device))
            head_start = i + 1
        elif c == "}":
            if stack:
                start, device = stack.pop()
                if device and not (stack and stack[-1][1]):
                    spans.append((start, i))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return spans


def _inside(spans: list[tuple[int, int]], pos: int) -> bool:
    return any(a < pos < b for a, b in spans)


def _preceded_by_member_access(code: str, pos: int) -> bool:
    before = code[max(0, pos - 2):pos].rstrip()
    return before.endswith(".") or before.endswith("->")


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1
