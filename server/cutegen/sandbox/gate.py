"""The static gate: a candidate (model-written text) is refused before it is built when it adds host code that
reaches out (a process, file, network, dynamic-loading or environment API; inline assembly; a static
initializer or a symbol alias), an include of a header of such an API, of a path outside the project, of a
header the user's own version does not include, or one a macro names. "Adds": compared with the file the
candidate was derived from, so a kernel whose own launcher already reads a file can still be optimized.

It judges what the code does, not how it is spelled: given the candidate as the real preprocessor wrote it
(the host preprocessing step of the build, `sandbox/preprocess.py`), it scans the tokens that come from the candidate
itself, after macro expansion, token pasting, line splices and `#if`; without it, the raw text's tokens.
After the build, `sandbox.library` checks the same in the binary. The user's own code is never gated; the
jail still runs what passes: the gate is a tripwire with line numbers, the jail is the boundary.
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from dataclasses import dataclass

from cutegen.sandbox import cpp
from cutegen.sandbox.cpp import Token

# (what it lets code do, names). A use is a reference to the name (a call, its address, a type), outside
# device-only functions.
HOST_APIS = {
    "process": ("system", "__libc_system", "popen", "wordexp", "fork", "vfork", "execl", "execlp", "execle", "execv",
                "execvp", "execvpe", "execve", "execveat", "fexecve", "posix_spawn", "posix_spawnp", "clone", "clone3",
                "kill", "tgkill", "pidfd_open", "pidfd_send_signal", "syscall", "ptrace", "daemon", "prctl", "unshare",
                "setns", "mount", "umount", "umount2", "chroot", "pivot_root", "personality"),
    "file": ("fopen", "fopen64", "freopen", "fdopen", "open", "open64", "openat", "openat2", "creat", "unlink",
             "unlinkat", "remove", "rename", "renameat", "mkdir", "rmdir", "chmod", "chown", "truncate", "symlink",
             "link", "readlink", "access", "opendir", "scandir", "nftw", "mkfifo", "mknod", "tmpfile", "mkstemp",
             "mkdtemp", "ifstream", "ofstream", "fstream", "filebuf", "filesystem"),
    "network": ("socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto", "recvfrom",
                "getaddrinfo", "gethostbyname", "inet_pton", "inet_addr", "curl_easy_init"),
    "dynamic loading": ("dlopen", "dlmopen", "dlsym", "dlvsym", "dlinfo", "__libc_dlopen_mode", "LoadLibrary",
                        "LoadLibraryA"),
    "environment": ("getenv", "secure_getenv", "setenv", "putenv", "unsetenv", "clearenv", "environ", "__environ",
                    "_environ"),
}
HEADERS = {
    "process": ("unistd.h", "spawn.h", "sys/wait.h", "sys/ptrace.h", "sys/syscall.h", "sys/prctl.h", "sys/mount.h",
                "signal.h", "csignal", "wordexp.h"),
    "file": ("fstream", "filesystem", "fcntl.h", "sys/stat.h", "dirent.h", "sys/mman.h", "ftw.h"),
    "network": ("sys/socket.h", "netinet/in.h", "arpa/inet.h", "netdb.h", "sys/un.h", "curl/curl.h"),
    "dynamic loading": ("dlfcn.h",),
}
# Attributes that run code at load time or bind a name to another symbol: `weakref("system")` calls system
# under another name, a `section(".init_array")` pointer runs before any harness check.
ATTRIBUTES = {"static initializer": ("constructor", "destructor", "init_priority", "section"),
              "symbol alias": ("weakref", "alias", "ifunc", "symver")}
PRAGMAS = ("weak", "redefine_extname")  # `#pragma redefine_extname f system` renames a call
_INCLUDES = ("include", "include_next", "import", "embed")
# Python candidates (KernelBench ModelNew files) run their module body on the host.
PYTHON_APIS = {
    "process": ("subprocess", "os.system", "os.popen", "os.fork", "os.exec", "os.spawn", "pty", "multiprocessing"),
    "file": ("open(", "pathlib", "shutil", "os.remove", "os.unlink", "os.rename", "os.mkdir", "io.open"),
    "network": ("socket", "urllib", "http.client", "requests", "httpx"),
    "dynamic loading": ("ctypes", "cffi", "importlib", "__import__", "eval(", "exec(", "compile(", "pickle",
                        "marshal"),
    "environment": ("os.environ", "getenv", "os.putenv"),
    # a name looked up at run time reaches any of the above without spelling it
    "reflection": ("getattr", "__builtins__", "globals(", "vars(", "__globals__", "__subclasses__", "sys.modules"),
}
# Families matched by prefix: os.execv, os.execlpe, os.spawnvp, os.posix_spawnp, os.forkpty, ...
PYTHON_PREFIXES = {"process": ("os.spawn", "os.exec", "os.posix_spawn", "os.fork")}
_NAMES = {name: category for category, names in HOST_APIS.items() for name in names}
_ORDER = {c: i for i, c in enumerate([*HOST_APIS, "inline assembly", *ATTRIBUTES, "include", "directive"])}
_STD_ALGORITHMS = {"remove", "bind"}  # std::remove and std::bind are an algorithm and a binder, not file/socket calls
_ASM = {"asm", "__asm__", "__asm"}
_DECLARING = {"int", "long", "short", "unsigned", "signed", "char", "bool", "float", "double", "auto", "void",
              "size_t", "int64_t", "int32_t", "uint32_t", "uint64_t"}  # `int link = 0;` names a variable
_AGGREGATE = {"struct", "class", "union", "namespace", "enum"}
_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".cu", ".inl", ".ipp", ".tcc", ".inc")


@dataclass(frozen=True)
class Use:
    category: str  # "process", "file", ..., "include", "inline assembly", "static initializer", ...
    name: str
    line: int  # 1-based, in the candidate; 0 when the code does not show it

    def describe(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        if self.category == "include":
            return f"{where}#include {self.name}"
        if self.category == "inline assembly":
            return f"{where}inline assembly in host code"
        if self.category in ("static initializer", "symbol alias", "directive", "imported symbol",
                             "system call instruction"):
            return f"{where}{self.category} `{self.name}`"
        return f"{where}{self.category} API `{self.name}`"


@dataclass(frozen=True)
class Refusal:
    uses: tuple[Use, ...]
    when: str = "before building"

    @property
    def reason(self) -> str:
        listed = "; ".join(u.describe() for u in self.uses[:5])
        more = f" (and {len(self.uses) - 5} more)" if len(self.uses) > 5 else ""
        what = "the candidate adds host code" if self.when == "before building" else "the built library has host code"
        return (f"refused {self.when}: {what} that model-written code may not run ({listed}{more}). Candidates "
                "may change device code and launch configuration, not open files, start processes, use the "
                "network, load libraries, read the environment or run code when the library is loaded; they may "
                "include library headers and the headers your version includes, nothing else.")


@dataclass(frozen=True)
class Source:
    """A candidate (or its original) as the gate reads it: the raw text and, where it could be made, what the
    real preprocessor made of it."""

    text: str
    preprocessed: cpp.Preprocessed | None = None


def review(candidate: str | Source, original: str | Source = "", *, python: bool = False,
           system_roots: tuple[str, ...] = (), allowed_headers: tuple[str, ...] = ()) -> Refusal | None:
    """None when the candidate adds no gated use; else the refusal, naming each new use and its line.
    `system_roots` and `allowed_headers`: where the files the preprocessor opened for the candidate may lie."""
    new = uses(_source(candidate), python, system_roots, allowed_headers)
    old = Counter((u.category, u.name) for u in uses(_source(original), python, system_roots, allowed_headers))
    added = []
    for use in new:
        key = (use.category, use.name)
        if old[key] > 0:
            old[key] -= 1  # an existing use, kept (perhaps moved)
        else:
            added.append(use)
    return Refusal(tuple(added)) if added else None


def uses(source: Source, python: bool = False, system_roots: tuple[str, ...] = (),
         allowed_headers: tuple[str, ...] = ()) -> list[Use]:
    if not source.text:
        return []
    if python:  # the module body, and the C++ sources in its strings (load_inline builds them)
        return sorted(_python_uses(source.text) + _python_string_uses(source.text), key=_sort_key)
    pre = source.preprocessed
    toks = pre.tokens if pre is not None else cpp.tokens(cpp.phase3(source.text))
    found = _token_uses(toks) + _directive_uses(source.text)
    if pre is not None:
        found += _pragma_uses(pre.pragmas) + _opened_uses(pre.includes, system_roots, allowed_headers)
    return sorted(found, key=_sort_key)


def _source(s: str | Source) -> Source:
    return s if isinstance(s, Source) else Source(s)


def _sort_key(u: Use) -> tuple:
    return (u.line, _ORDER.get(u.category, len(_ORDER)))


# -- tokens --------------------------------------------------------------------------------------------

def _token_uses(toks: list[Token]) -> list[Use]:
    device = device_ranges(toks)
    out = []
    for i, t in enumerate(toks):
        if _inside(device, i):
            continue
        if t.kind == "id" and t.text in _NAMES and _refers_to_api(toks, i):
            out.append(Use(_NAMES[t.text], t.text, t.line))
        elif t.kind == "id" and t.text in _ASM:
            out.append(Use("inline assembly", "asm", t.line))
        elif t.text in ("__attribute__", "[["):
            out += _attribute_uses(toks, i)
    return out


def _refers_to_api(toks: list[Token], i: int) -> bool:
    """`system`, `::system`, `std::system`; not `x.open`, `p->connect`, `cute::copy`, `std::remove(...)`, nor
    a variable or function of that name being declared (`int link = 0;`)."""
    before = toks[i - 1].text if i else ""
    if before in (".", "->"):
        return False
    if before == "::":
        qualifier = toks[i - 2] if i >= 2 else None
        if qualifier is not None and qualifier.kind == "id":
            return qualifier.text == "std" and toks[i].text not in _STD_ALGORITHMS
        return True  # ::system
    after = toks[i + 1].text if i + 1 < len(toks) else ""
    return not (before in _DECLARING and after in ("=", ";", ",", "[", "{", "(", ")"))


def _attribute_uses(toks: list[Token], i: int) -> list[Use]:
    """`__attribute__((constructor))`, `[[gnu::weakref("system")]]`: the attribute names, each checked."""
    names, depth, j = [], 0, i + 1
    if toks[i].text == "[[":
        while j < len(toks) and toks[j].text != "]]":
            if toks[j].kind == "id" and (j + 1 >= len(toks) or toks[j + 1].text != "::") and depth == 0:
                names.append(toks[j])
            depth += toks[j].text == "("
            depth -= toks[j].text == ")"
            j += 1
    else:
        while j < len(toks):
            depth += toks[j].text == "("
            depth -= toks[j].text == ")"
            if toks[j].kind == "id" and depth == 2:
                names.append(toks[j])
            j += 1
            if depth == 0:
                break
    out = []
    for t in names:
        name = t.text.strip("_")
        for category, refused in ATTRIBUTES.items():
            if name in refused:
                out.append(Use(category, name, t.line))
    return out


def device_ranges(toks: list[Token]) -> list[tuple[int, int]]:
    """Token index spans of the bodies of device-only functions (`__global__`/`__device__` without `__host__`,
    as written or as the preprocessor expands them: `__attribute__((device))`), lambdas included: code there
    never runs on the host. Only attributes at the top level of a function's head count (not one inside a
    default argument), and never for a struct, class or namespace."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[int, bool]] = []  # (where each open brace is, whether its body is device-only)
    head_start = 0
    for i, t in enumerate(toks):
        if t.text == "{":
            inherited = bool(stack) and stack[-1][1]
            stack.append((i, inherited or _device_head(toks[head_start:i])))
            head_start = i + 1
        elif t.text == "}":
            if stack:
                start, device = stack.pop()
                if device and not (stack and stack[-1][1]):
                    spans.append((start, i))
            head_start = i + 1
        elif t.text == ";":
            head_start = i + 1
    return spans


def _device_head(head: list[Token]) -> bool:
    depth, where = 0, set()
    for k, t in enumerate(head):
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif depth == 0 and t.kind == "id":
            if t.text in _AGGREGATE:
                return False
            if t.text in ("__global__", "__device__", "__host__"):
                where.add(t.text.strip("_"))
            elif t.text == "__attribute__":
                where.update(a.text for a in head[k + 1:k + 6] if a.text in ("global", "device", "host"))
    return bool(where & {"global", "device"}) and "host" not in where


def _inside(spans: list[tuple[int, int]], pos: int) -> bool:
    return any(a < pos < b for a, b in spans)


# -- directives, pragmas, opened files -----------------------------------------------------------------

def _directive_uses(text: str) -> list[Use]:
    out = []
    gated = {h for hs in HEADERS.values() for h in hs}
    for d in cpp.directives(text):
        if d.name == "line":
            out.append(Use("directive", "#line", d.line))  # it would hide where code comes from
        elif d.name == "pragma" and d.rest.split()[:1] and d.rest.split()[0] in PRAGMAS:
            out.append(Use("symbol alias", f"#pragma {d.rest.split()[0]}", d.line))
        elif d.name in _INCLUDES:
            out += _include_use(d, gated)
    return out


def _include_use(d: cpp.Directive, gated: set[str]) -> list[Use]:
    m = re.match(r'([<"])([^>"\n]+)[>"]', d.rest)
    if m is None:  # a computed include: a macro names the file, the text cannot show which
        return [Use("include", f"{d.rest or '(nothing)'} (computed: a macro names the file)", d.line)]
    quote, name = m.group(1), m.group(2).strip()
    shown = f"{quote}{name}{'>' if quote == '<' else chr(34)}"
    outside = name.startswith(("/", "~")) or ".." in name.split("/")
    not_a_header = quote == '"' and not name.lower().endswith(_HEADER_SUFFIXES)
    if name in gated or outside or not_a_header or d.name != "include" or quote == '"':
        # quoted: allowed only when the original includes it too (the review compares), so a new one is refused
        return [Use("include", shown if d.name == "include" else f"{shown} (#{d.name})", d.line)]
    return []


def _pragma_uses(pragmas: list[tuple[str, int]]) -> list[Use]:
    return [Use("symbol alias", f"#pragma {text.split()[0]}", line) for text, line in pragmas
            if text.split()[:1] and text.split()[0] in PRAGMAS]


def _opened_uses(opened: list[tuple[str, int]], roots: tuple[str, ...], allowed: tuple[str, ...]) -> list[Use]:
    """Files the preprocessor opened for the candidate's own #include lines: each must be a library header
    (under `roots`) or one of the user's headers its own version includes."""
    out = []
    ok_files = {os.path.realpath(a) for a in allowed}
    ok_roots = tuple(os.path.realpath(r).rstrip("/") + "/" for r in roots)
    for path, line in opened:
        real = os.path.realpath(path)
        if real in ok_files or real.startswith(ok_roots):
            continue
        out.append(Use("include", f"of {path} (neither a library header nor one of your version's headers)", line))
    return out


# -- Python ---------------------------------------------------------------------------------------------

def _python_uses(text: str) -> list[Use]:
    code = re.sub(r"#[^\n]*", "", text)
    out = []
    for category, names in PYTHON_APIS.items():
        for name in names:
            pattern = re.escape(name) + (r"" if name.endswith("(") else r"\b")
            for m in re.finditer(r"(?<![\w.])" + pattern, code):
                out.append(Use(category, name.rstrip("("), code.count("\n", 0, m.start()) + 1))
    for category, prefixes in PYTHON_PREFIXES.items():
        for prefix in prefixes:
            for m in re.finditer(r"(?<![\w.])" + re.escape(prefix) + r"\w*", code):
                if m.group(0) not in PYTHON_APIS[category]:  # os.fork alone is listed by name already
                    out.append(Use(category, m.group(0), code.count("\n", 0, m.start()) + 1))
    return out


def _python_string_uses(text: str) -> list[Use]:
    """The C++ in every string of a Python candidate, as Python makes it (escapes decoded, adjacent and `+`-joined
    constants folded), scanned as a `.cu` candidate's raw text is, directives included; `##` is refused besides,
    since without a preprocessor here a pasted name could not be seen. A text Python cannot parse is scanned
    whole, as C++."""
    strings = _python_strings(text)
    if strings is None:
        return _cpp_uses(text, 1)
    found = {u for value, line in strings for u in _cpp_uses(value, line)}
    return list(found)


def _cpp_uses(code: str, first_line: int) -> list[Use]:
    plain = cpp.phase3(code)
    out = _token_uses(cpp.tokens(plain, first_line))
    out += [Use(u.category, u.name, u.line + first_line - 1) for u in _directive_uses(code)]
    out += [Use("directive", "## (token pasting)", first_line + plain.count("\n", 0, m.start()))
            for m in re.finditer(r"##", plain)]
    return out


def _python_strings(text: str) -> list[tuple[str, int]] | None:
    """Every string value the module's constants make, with the line it starts on; None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out = []
    for node in ast.walk(tree):
        value = _folded(node)
        if value and isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr)):
            out.append((value, getattr(node, "lineno", 1)))
    return out


def _folded(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _folded(node.left), _folded(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):  # an f-string: its constant parts, and constants placed in it
        parts = [_folded(v.value) if isinstance(v, ast.FormattedValue) else _folded(v) for v in node.values]
        return "".join(p or "" for p in parts)
    return None
