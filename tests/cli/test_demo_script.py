"""scripts/demo.sh --editor as a newcomer meets it: the workbench of the e2e test (VS Code's own AI, its Chat
panel and its quick fixes off) and the packaged extension reused while nothing it is built from changed. The
script's own functions, run by bash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bash(script: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], cwd=ROOT, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=60)


def test_the_demo_editor_turns_off_vscodes_own_ai_as_the_e2e_test_does(tmp_path):
    p = _bash(f'source scripts/demo.sh; PYTHON={sys.executable}; editor_settings "{tmp_path}"')
    assert p.returncode == 0, p.stderr
    shared = json.loads((ROOT / "scripts" / "lib" / "vscode-settings.json").read_text())
    assert shared["chat.disableAIFeatures"] is True and shared["chat.commandCenter.enabled"] is False
    assert shared["workbench.secondarySideBar.defaultVisibility"] == "hidden"  # no Chat panel on the side
    e2e = (ROOT / "vscode-client" / "test" / "e2e" / "workbench.mjs").read_text()
    assert '"scripts", "lib", "vscode-settings.json"' in e2e  # the e2e tests' workbench is the same one
    for scope in ("User", "Machine"):
        written = json.loads((tmp_path / scope / "settings.json").read_text())
        assert written == {**shared, "cutegen.python": sys.executable}


def test_the_demo_reuses_a_packaged_extension_until_its_sources_change(tmp_path):
    client = tmp_path / "vscode-client"
    (client / "src").mkdir(parents=True)
    for name in ("src/extension.ts", "package.json", "package-lock.json", "esbuild.mjs", "tsconfig.json"):
        (client / name).write_text("x")
    check = f'source scripts/lib/vscode-tools.sh; REPO="{tmp_path}"; vsix_current && echo current || echo stale'
    assert _bash(check).stdout.strip() == "stale"  # nothing packaged yet
    vsix = client / "cutegen.vsix"
    vsix.write_text("packaged")
    past = time.time() - 60
    for f in client.rglob("*"):
        if f != vsix:
            os.utime(f, (past, past))
    assert _bash(check).stdout.strip() == "current"
    (client / "src" / "extension.ts").write_text("changed")  # an edit: package again
    assert _bash(check).stdout.strip() == "stale"

