"""Warm header sets: a file's header set with the header templates it instantiates already instantiated.

After a slow clean parse (its header templates are what took the time: clang_uses.py), the type tier builds,
in the background and once per (header set, uses), a PCH of the header set plus those instantiations, and
parses the file's later versions against it. Measured on the Level-1 fp32 GEMM (2 idle cores): a parse 16-18 s
with the plain PCH, 1.6-1.9 s with the warm one, whose build takes 13-25 s once (bench/type_tier.py), and a first
pass 0.07 s (checker.py).

The warm PCH is trusted only when its parse is clean: errors are always those of a parse with the plain header
set (a use instantiated before the file's own declarations could in principle differ, e.g. an explicit
specialization the file declares), and a warm set whose parse erred where the plain one did not is dropped.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from cutegen.compile.cache import cache_key

# A clean parse slower than this lists its uses. The GEMMs' plain parses take 10-18 s and their warm ones 1.6-1.9 s;
# softsign's takes 1.0-1.6 s and a warm set made it slower (1.23 s against 0.96 s, 5 interleaved pairs, its set
# chained): what a file's own code instantiates must outweigh what reading the set costs.
WARM_AFTER_S = 4.0
KEEP_WARM = 8  # warm PCH files kept per state dir: ~100 MB for a CuTe GEMM, fewer would evict open files' sets
IDLE_POLL_S = 0.2
# How long no parse and no compile must have run before a build starts: between two edits' parses there is a
# moment of idleness (measured: a build started there, beside the next file's 1 GB plain parse, took the opening
# of five files to 2.1 GB instead of 1.3). A user who types on within a build's 13 s still runs a parse beside it.
QUIET_FOR_S = 3.0
# A warm set must pay for itself: a file whose warm parse takes more than this share of its plain parse keeps only
# the plain header set. CUTLASS's tutorials spend their parse in host code (thrust's vectors in main(): 4.5 of
# 5 s on tiled_copy.cu), whose class members a use cannot spell: their warm parse took as long as the plain one,
# and each edit then ran a first pass and a full parse (8 s of a core) after a 13 s build beside the edits.
PAYS_BELOW = 0.6
JUDGED_FROM_S = 1.0  # a warm parse faster than this is kept whatever the ratio: a second is not worth a rebuild


def chained(pch: dict) -> list[str]:
    """A warm set's clang arguments: built on the plain PCH (a chained PCH, holding only what the uses add), not
    from the headers again. Measured on the Level-1 GEMM's set: the build 1.03 GB and 12.8 s instead of 1.25 GB and
    16.3 s, 98 MB on disk instead of 146; a full parse against it ~8 % slower (1.5 s against 1.37-1.41 s)."""
    return [*pch["args"], "-include-pch", pch["path"]]


@dataclass
class Warm:
    base: str  # the plain PCH's path: the header set it extends
    path: str
    uses: list[str]
    text: str  # the warm header's text (a stale PCH is rebuilt from it)
    plain_s: float = 0.0  # the slow plain parse that asked for it


class WarmSets:
    """Which warm PCH serves which file; builds them in the background, one at a time and only once no parse and
    no save-tier compile has run for QUIET_FOR_S (a GEMM's build holds 1.0 GB and a core for 13 s; a parse beside it
    another 0.4-1 GB, an nvcc check of a GEMM about as much), never blocking either: `busy` says whether one runs.
    A parse or compile that starts while a build runs is not waited for (the build is not killed: it would start
    over)."""

    def __init__(self, folder: Path, build: Callable[[dict], dict], prune: Callable[[Path, int], None],
                 busy: Callable[[], bool] = lambda: False):
        self.folder, self._build, self._prune, self._busy = folder, build, prune, busy
        self._ready: dict[str, Warm] = {}  # file → its warm set, built
        self._wanted: dict[str, Warm] = {}  # file → the set its last slow parse asked for
        self._unpaid: set[str] = set()  # warm PCH paths whose parse was no faster: never built or used again
        self._lock = threading.Lock()
        self._building = threading.Lock()
        self.threads: list[threading.Thread] = []

    def for_parse(self, file: str, pch: dict | None) -> dict | None:
        """The PCH request for `file`'s warm set, if one is built for this header set."""
        with self._lock:
            warm = self._ready.get(file)
        if pch is None or warm is None or warm.base != pch["path"] or not Path(warm.path).is_file():
            return None
        return {"path": warm.path, "header": warm.text, "args": chained(pch)}

    def offer(self, file: str, pch: dict, uses: list[str], plain_s: float = 0.0) -> None:
        """A slow clean parse of `file` (`plain_s` seconds) named these uses: build their warm set unless it is
        built or building, or did not pay before."""
        from cutegen.typecheck.clang_uses import warm_header

        key = cache_key(tier="type-warm", fingerprint="", command_flags=chained(pch), text="\n".join(uses), headers=[])
        warm = Warm(pch["path"], str(self.folder / f"{key}.warm.pch"), uses, "", plain_s)
        with self._lock:
            if warm.path in self._unpaid:
                return
            current = self._ready.get(file) or self._wanted.get(file)
            if current is not None and current.path == warm.path:
                return
            self._wanted[file] = warm
        if Path(warm.path).is_file():  # built before (another session, another file with the same uses)
            warm.text = warm_header(pch["header"], uses)
            self._set_ready(file, warm)
            return
        thread = threading.Thread(target=self._build_in_background, args=(file, pch, warm), daemon=True,
                                  name="cutegen-warm-pch")
        self.threads.append(thread)
        thread.start()

    def judge(self, file: str, warm_s: float) -> bool:
        """A parse of `file` against its warm set took `warm_s`: False (and the set dropped for good) when that is
        not clearly faster than the plain parse that asked for it."""
        with self._lock:
            warm = self._ready.get(file)
            if warm is None or warm_s < max(JUDGED_FROM_S, PAYS_BELOW * warm.plain_s):
                return True
            self._unpaid.add(warm.path)
            del self._ready[file]
        return False

    def drop(self, file: str) -> None:
        """Its warm parse erred where the plain parse did not: never use that set for this file again."""
        with self._lock:
            self._ready.pop(file, None)

    def _build_in_background(self, file: str, pch: dict, warm: Warm) -> None:
        from cutegen.typecheck.clang_uses import warm_header

        with self._building:
            self._wait_quiet()  # e.g. the five first parses of an opened workspace, one after another
            with self._lock:
                if self._wanted.get(file) is not warm:
                    return  # a newer slow parse asked for another set meanwhile
            self._prune(self.folder, KEEP_WARM - 1)
            answer = self._build({"pch_only": True, "uses": warm.uses,
                                  "pch": {"path": warm.path, "header": pch["header"], "args": chained(pch)}})
        if answer.get("pch") == "built":
            warm.uses = answer["uses"]
            warm.text = warm_header(pch["header"], warm.uses)
            self._set_ready(file, warm)

    def _wait_quiet(self) -> None:
        quiet_since = None
        while quiet_since is None or time.monotonic() - quiet_since < QUIET_FOR_S:
            busy = self._busy()
            quiet_since = None if busy else (quiet_since or time.monotonic())
            time.sleep(IDLE_POLL_S)

    def _set_ready(self, file: str, warm: Warm) -> None:
        with self._lock:
            if self._wanted.get(file) is warm:
                self._ready[file] = warm
