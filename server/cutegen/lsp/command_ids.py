"""Every server command id in one place: registration (commands.py), CodeLens, code actions and tests import
these; the extension's list (vscode-client/src/core/commands.ts) is tied to it by tests/lsp/test_contracts.py."""

from __future__ import annotations

from enum import Enum


class Command(str, Enum):
    CHECK = "cutegen.server.check"
    TEST = "cutegen.server.test"
    PROFILE = "cutegen.server.profile"
    DIAGNOSE = "cutegen.server.diagnose"
    FIX = "cutegen.server.fix"
    OPTIMIZE = "cutegen.server.optimize"
    APPLY_PATCH = "cutegen.server.applyPatch"
    TUNE = "cutegen.server.tune"
    RESTORE_BEST = "cutegen.server.restoreBest"
    GENERATE = "cutegen.server.generate"
    LAYOUT_PICTURE = "cutegen.server.layoutPicture"
    PROFILE_LINES = "cutegen.server.profileLines"  # [{uri[, show]}]: per-line profile (show: the latest, no run) → {svg, lines}
    SANITIZE = "cutegen.server.sanitize"
    VERSIONS = "cutegen.server.versions"  # [{uri}] → {tree}: the kernel's versions (lsp/versions.py)
    SHOW_VERSION = "cutegen.server.showVersion"  # [{uri, id}] → {version: {text, diff, ...}}
    RESTORE_VERSION = "cutegen.server.restoreVersion"  # [{uri, id[, version]}] → {patch}: re-verified
    # [{uri}] (a file or folder of the workspace the program runs in) → {ok, message, lines, record} (lsp/program.py)
    PROFILE_PROGRAM = "cutegen.server.profileProgram"
    SANITIZE_PROGRAM = "cutegen.server.sanitizeProgram"  # [{uri}] → {ok, message, findings}

    def __str__(self) -> str:
        return self.value
