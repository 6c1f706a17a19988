"""A second, real LSP client: headless Neovim starts the server with settings (as init_options, or as
`settings` pushed in on_init the way nvim-lspconfig does), opens a broken kernel, and gets the same
diagnostics (and hover) as the pytest-lsp client, plus proof that its settings reached nvcc; on a kernel that
compiles cleanly, the hover shows a CuTe tensor's layout once the layout probe has run.
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
SMALL_KERNEL = Path(__file__).resolve().parents[1] / "layouts" / "small_kernel.cu"


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


def _run_neovim(env: dict, root: Path, out: Path, timeout: int = 180) -> dict:
    proc = subprocess.run(["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {SCRIPT}"],
                          env=env, cwd=root, capture_output=True, text=True, timeout=timeout)
    assert out.is_file(), f"Neovim wrote no result (exit {proc.returncode}): {proc.stdout}{proc.stderr}"
    return json.loads(out.read_text())


needs_nvim = pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim (`nvim`) is not installed: apt-get install neovim")


@needs_nvcc
@needs_nvim
@pytest.mark.parametrize("channel", CHANNELS)
def test_neovim_gets_diagnostics_and_hover_with_its_settings(kept_path: Path, channel: str):
    root = kept_path / "ws"  # its build cache outlives the run (tests/conftest.py)
    root.mkdir(exist_ok=True)
    kernel = root / "row_sum.cu"
    kernel.write_text(_kernel(channel))
    out = kept_path / "neovim.json"
    section = json.dumps({"cutegen": {"extraFlags": [f"-DCUTEGEN_NVIM_{channel}"]}})
    env = {**SERVER_ENV, "CUTEGEN_NVIM_FILE": str(kernel), "CUTEGEN_NVIM_ROOT": str(root),
           "CUTEGEN_NVIM_OUT": str(out), "CUTEGEN_NVIM_PYTHON": sys.executable,
           "CUTEGEN_NVIM_PYTHONPATH": SERVER_ENV["PYTHONPATH"], "HOME": str(kept_path),
           f"CUTEGEN_NVIM_{'INIT' if channel == 'INIT_OPTIONS' else 'SETTINGS'}": section}
    result = _run_neovim(env, root, out)

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


@needs_nvcc
@needs_nvim
@pytest.mark.slow
def test_neovim_hover_shows_a_tensors_layout(kept_path: Path):
    root = kept_path / "ws"  # its build cache outlives the run (tests/conftest.py)
    root.mkdir(exist_ok=True)
    kernel = root / "small_kernel.cu"
    kernel.write_text(SMALL_KERNEL.read_text())
    lines = kernel.read_text().splitlines()
    line = next(i for i, text in enumerate(lines) if text.lstrip().startswith("Tensor s = "))
    out = kept_path / "neovim.json"
    env = {**SERVER_ENV, "CUTEGEN_NVIM_FILE": str(kernel), "CUTEGEN_NVIM_ROOT": str(root),
           "CUTEGEN_NVIM_OUT": str(out), "CUTEGEN_NVIM_PYTHON": sys.executable,
           "CUTEGEN_NVIM_PYTHONPATH": SERVER_ENV["PYTHONPATH"], "HOME": str(kept_path),
           "CUTEGEN_NVIM_HOVER_AT": f"{line}:{lines[line].index('s = ')}"}
    result = _run_neovim(env, root, out, timeout=300)

    assert result["started"] and result["got_diagnostics"], result
    assert not [d for d in result["publishes"][0]["diagnostics"] if d["severity"] == 1], result["publishes"]
    seen = result["layout_hovers"]
    hover = seen[-1]
    assert isinstance(hover, str), f"no hover once the layouts were computed: {seen}"
    # the swizzled shared-memory tile: memory, element type, swizzle, shape:stride
    assert f"CuTe Tensor (line {line + 1})" in hover, seen
    assert "smem float Sw<3,2,3> o _0 o (_8,_32):(_32,_1)" in hover, seen
    assert result["messages"] == []
