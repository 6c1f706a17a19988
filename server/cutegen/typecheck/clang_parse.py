"""The type tier's parser process: clang (libclang, from the `libclang-ng` wheel) on unsaved text.

Runs as `python .../typecheck/clang_parse.py` with one JSON request on stdin and answers one JSON object on
stdout, so that the server can kill a parse it no longer needs (libclang has no way to stop a parse in the
middle, and a Hopper GEMM takes half a minute). The only module that imports `clang.cindex`.

Request: {"file", "text", "args", "pch": {"path", "header", "args"} | null}. With "pch", the header set is
parsed once into a precompiled header at "path" (written atomically: a killed build leaves nothing) and the
file is parsed with `-include-pch`; a PCH that clang refuses (a header changed since) is rebuilt once.
{"pch_only": true, "pch": ...} builds the header set alone; with "uses" (clang_uses.py), the warm PCH: the
header set and those instantiations (a use that does not compile is dropped once and the rest built again).
With "collect_after": seconds, a clean parse that took longer lists the header templates the file
instantiates (answer "uses"): a fast parse has nothing worth keeping warm. With "first_pass": true, the file is
parsed as a translation-unit prefix (FIRST_PASS): its templates instantiated, the end-of-file checks skipped.
Answer: {"diagnostics": [...], "pch": "built" | "used" | "none" | "failed", "seconds": float, "uses"?: [...]};
a warm build answers {"pch": "built" | "failed", "uses": the uses it kept}.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

_SEVERITY = {0: "ignored", 1: "note", 2: "warning", 3: "error", 4: "fatal"}
_OPTIONS_FOR_PCH = 0x2 | 0x10  # CXTranslationUnit_Incomplete | ForSerialization: what `c-index-test -write-pch` uses
# The first pass (checker.py): the file parsed as a prefix, as a PCH would be, with its pending instantiations
# performed. Clang then skips the end-of-TU work, whose cost against a warm PCH is reading every function listed
# for CUDA's deferred diagnostics: 1.2-1.4 s on a Level-1 GEMM's (all of its parse but 0.02 s), for errors that
# only CUDA's deferred checks raise (a throw, a VLA, a wrong-side call in an inline __host__ __device__ function;
# the last only a warning for nvcc, so not reported here). Every other error is the same: bench/type_first_pass.py.
_FIRST_PASS = (0x2, ["-Xclang", "-fpch-instantiate-templates"])
_STALE_PCH = ("has been modified since the", "malformed or corrupted", "was compiled for", "AST file",
              "precompiled header", "PCH file")


def _cindex():
    from clang import cindex

    # The wheel adds its own libc++ headers unless told otherwise; nvcc builds against the host's libstdc++,
    # and so must this parse (else <cmath> disagrees with glibc's <math.h>).
    cindex.Config.libcxx_dir = None
    return cindex


def diagnostic_json(ci, d) -> dict:
    file, line, col = _file_location(ci, d.location)
    return {
        "severity": _SEVERITY.get(d.severity, "error"),
        "text": d.spelling,
        "file": file,
        "line": line or None,
        "col": col or None,
        "option": d.option or "",
        "category": d.category_name or "",
        "fixits": _fixits(ci, d),
        "children": [diagnostic_json(ci, c) for c in d.children],
    }


def _fixits(ci, d) -> list[dict]:
    """Insertions clang proposes (`;` after a struct): where the code must change, often above the error."""
    out = []
    for i in range(len(d.fixits)):
        try:
            fix = d.fixits[i]
        except IndexError:  # a removal: no text to insert
            continue
        file, line, col = _file_location(ci, fix.range.start)
        out.append({"file": file, "line": line, "col": col, "text": fix.value})
    return out


def _file_location(ci, location) -> tuple[str | None, int, int]:
    """Where the text is written: inside a macro argument, the argument's own line (an error in the lambda
    given to AT_DISPATCH_FLOATING_TYPES is on its line, not the macro's first). The bindings expose only the
    expansion location, hence the direct call."""
    import ctypes

    lib = ci.conf.lib
    get = lib.clang_getFileLocation
    uint = ctypes.POINTER(ctypes.c_uint)
    get.argtypes = [ci.SourceLocation, ctypes.POINTER(ci.c_object_p), uint, uint, uint]
    get.restype = None
    handle, line, col, offset = ci.c_object_p(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    get(location, ctypes.byref(handle), ctypes.byref(line), ctypes.byref(col), ctypes.byref(offset))
    name = ci.File(handle).name if handle else None
    return (str(name) if name else None), line.value, col.value


def _errors(tu) -> list:
    return [d for d in tu.diagnostics if d.severity >= 3]


def build_pch(ci, index, pch: dict) -> bool:
    """Parse the header set into `pch["path"]`; False if it has errors (then no PCH: they are the file's)."""
    return _save_pch(index, pch, pch["header"]) is None


def _save_pch(index, pch: dict, text: str):
    """None when `text` parsed cleanly and was saved to pch["path"]; else the translation unit with errors."""
    target = Path(pch["path"])
    target.parent.mkdir(parents=True, exist_ok=True)
    header = target.with_suffix(".cuh")
    header.write_text(text)
    tu = index.parse(str(header), pch["args"], options=_OPTIONS_FOR_PCH)
    if _errors(tu):
        return tu
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    tu.save(str(tmp))
    tmp.replace(target)  # atomic: a parse in another process never reads half a PCH
    return None


def build_warm(ci, index, pch: dict, uses: list[str]) -> list[str] | None:
    """The warm PCH (clang_uses.py): the uses it kept, or None when none could be built."""
    uses_module = _uses_module()
    for _ in range(2):
        text = uses_module.warm_header(pch["header"], uses)
        failed = _save_pch(index, pch, text)
        if failed is None:
            return uses
        bad = _failing_lines(ci, failed, str(Path(pch["path"]).with_suffix(".cuh")))
        kept = [u for u in uses if _line_of(text, u) not in bad]
        if not bad or not kept or len(kept) == len(uses):
            return None  # an error that no use explains: the header set itself, or nothing left to keep
        uses = kept
    return None


def _failing_lines(ci, tu, header: str) -> set[int]:
    """The warm header's lines an error (or the instantiation chain under it) points at."""
    lines: set[int] = set()

    def visit(d) -> None:
        file, line, _ = _file_location(ci, d.location)
        if file == header:
            lines.add(line)
        for c in d.children:
            visit(c)

    for d in _errors(tu):
        visit(d)
    return lines


def _line_of(text: str, use: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.strip() == use)


def _uses_module():
    try:
        from cutegen.typecheck import clang_uses
    except ImportError:  # run by path (checker.py): the module beside this one
        import clang_uses  # type: ignore[import-not-found]
    return clang_uses


def parse(request: dict) -> dict:
    ci = _cindex()
    index = ci.Index.create(excludeDecls=True)  # a TU's children are then the file's own decls (clang_uses)
    started = time.perf_counter()
    pch, state = request.get("pch"), "none"
    if request.get("pch_only") and "uses" in request and pch is not None:
        kept = build_warm(ci, index, pch, request["uses"])
        return {"pch": "built" if kept else "failed", "uses": kept or [], "seconds": time.perf_counter() - started}
    if request.get("pch_only"):  # the header set alone (checker.py builds it apart from any parse)
        built = build_pch(ci, index, request["pch"])  # such a request always names its header set
        return {"pch": "built" if built else "failed", "seconds": time.perf_counter() - started}
    if pch:
        state = "used" if Path(pch["path"]).is_file() else ("built" if build_pch(ci, index, pch) else "failed")
    options, extra = _FIRST_PASS if request.get("first_pass") else (0, [])
    for attempt in range(2):
        with_pch = ["-include-pch", pch["path"]] if pch and state in ("used", "built") else []
        args = list(request["args"]) + extra + with_pch
        try:
            tu = index.parse(request["file"], args, unsaved_files=[(request["file"], request["text"])],
                             options=options)
        except ci.TranslationUnitLoadError:
            if state != "used" or attempt:
                raise
            tu = None  # libclang refuses a PCH whose inputs changed without a word: rebuild it once
        if pch and state == "used" and attempt == 0 and (tu is None or _stale(tu)):
            state = "built" if build_pch(ci, index, pch) else "failed"
            continue
        break
    answer = {"diagnostics": [diagnostic_json(ci, d) for d in tu.diagnostics], "pch": state,
              "seconds": time.perf_counter() - started}
    collect_after = request.get("collect_after")
    if collect_after is not None and answer["seconds"] > collect_after and not _errors(tu):
        answer["uses"] = _uses_module().uses(ci, tu, request["file"])
    return answer


def _stale(tu) -> bool:
    """clang refuses a PCH whose inputs changed (a fatal error naming it): rebuild it, never report it."""
    return any(d.severity == 4 and any(s in d.spelling for s in _STALE_PCH) for d in tu.diagnostics)


def _exit_with_parent() -> None:
    """A parse can run for half a minute: when the server dies (a crash, a kill), its parser goes with it."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def main() -> None:
    _exit_with_parent()
    # libclang loaded before the request is read: the checker starts its next parser ahead of the edit that
    # needs it (checker.py's spare), so an edit does not wait for Python and the library to start (0.2 s here).
    try:
        _cindex().Index.create(excludeDecls=True)
    except Exception:  # reported with the request's answer below
        pass
    raw = sys.stdin.read()
    if not raw:  # a spare whose server closed it (settings changed, shutdown): nothing asked
        return
    request = json.loads(raw)
    try:
        answer = parse(request)
    except Exception as e:  # libclang missing or refusing the arguments: the server reports it in words
        answer = {"failure": f"{type(e).__name__}: {e}"}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
