"""A second, real LSP client: headless Neovim starts the server with settings (as init_options, or as
`settings` pushed in on_init the way nvim-lspconfig does), opens a broken kernel, and gets the same
diagnostics (and hover) as the pytest-lsp client, plus proof that its settings reached nvcc.
Skipped where `nvim` is not installed (Debian: apt-get install neovim, 0.7.2)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_helpers import SERVER_ENV, needs_nvcc
from lsp_kernels import BROKEN_LINE, ROOT, broken

SCRIPT = Path(__file__).with_name("neovim_client.lua")


# Each settings channel defines its own macro through `extraFlags`; the kernel turns the one that
# reached nvcc into a warning, so the diagnostics show which settings the server used.
SETTINGS_PROBE = """
#ifdef CUTEGEN_NVIM_{channel}
#warning "extraFlags from {channel} reached nvcc"
#endif
"""


def _kernel(channel: str) -> str:
    return broken(f"neovim-{channel}") + "".join(SETTINGS_PROBE.format(channel=c) for c in CHANNELS)


CHANNELS = ("INIT_OPTIONS", "SETTINGS")


@needs_nvcc
@pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim (`nvim`) is not installed: apt-get install neovim")
@pytest.mark.parametrize("channel", CHANNELS)
def test_neovim_gets_diagnostics_and_hover_with_its_settings(tmp_path: Path, channel: str):
    root = tmp_path / "ws"
    root.mkdir()
    kernel = root / "row_sum.cu"
    kernel.write_text(_kernel(channel))
    out = tmp_path / "neovim.json"
    section = json.dumps({"cutegen": {"extraFlags": [f"-DCUTEGEN_NVIM_{channel}"]}})
    env = {**SERVER_ENV, "CUTEGEN_NVIM_FILE": str(kernel), "CUTEGEN_NVIM_ROOT": str(root),
           "CUTEGEN_NVIM_OUT": str(out), "CUTEGEN_NVIM_PYTHON": sys.executable,
           "CUTEGEN_NVIM_PYTHONPATH": SERVER_ENV["PYTHONPATH"], "HOME": str(tmp_path),
           f"CUTEGEN_NVIM_{'INIT' if channel == 'INIT_OPTIONS' else 'SETTINGS'}": section}
    proc = subprocess.run(["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {SCRIPT}"],
                          env=env, cwd=root, capture_output=True, text=True, timeout=180)
    assert out.is_file(), f"Neovim wrote no result (exit {proc.returncode}): {proc.stdout}{proc.stderr}"
    result = json.loads(out.read_text())

    assert result["started"] and result["got_diagnostics"], result
    publish = result["publishes"][0]
    assert publish["version"] is not None  # tagged with the buffer's version
    (error,) = [d for d in publish["diagnostics"] if d["severity"] == 1]
    assert error["range"]["start"]["line"] == BROKEN_LINE and ROOT in error["message"]
    # The setting took effect: exactly this channel's flag reached nvcc.
    (warning,) = [d for d in publish["diagnostics"] if d["severity"] == 2]
    assert f"extraFlags from {channel} reached nvcc" in warning["message"]
    probe_line = _kernel(channel).splitlines().index(f'#warning "extraFlags from {channel} reached nvcc"')
    assert warning["range"]["start"]["line"] == probe_line
    replies = result["hover"]  # keyed by client id: Lua's {[1] = ...} encodes as a list
    hover = next(iter(replies.values() if isinstance(replies, dict) else replies))["result"]
    assert ROOT in hover["contents"]["value"]
    assert result["messages"] == []  # nothing went wrong that the user would be told about
