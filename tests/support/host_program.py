"""Host programs that print CuTe objects (`cute::print`), the layout tests' ground truth: built by nvcc once per
source text, nvcc and CUTLASS, and kept in the shared test build cache, so a warm run compiles nothing."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path


class HostProgram:
    """Starts nvcc on a cache miss (the caller works meanwhile); `wait()` gives the executable."""

    def __init__(self, toolchain, source: Path, cache: Path):
        key = hashlib.sha256(source.read_bytes() + f"\0{toolchain.nvcc}\0{toolchain.cutlass_include}".encode())
        self.exe = cache / "host-programs" / f"{source.stem}-{key.hexdigest()[:16]}"
        self._build: subprocess.Popen | None = None
        if not self.exe.is_file():
            self.exe.parent.mkdir(parents=True, exist_ok=True)
            self._tmp = self.exe.with_name(f"{self.exe.name}.{os.getpid()}.tmp")
            self._build = subprocess.Popen([toolchain.nvcc, "-std=c++17", f"-I{toolchain.cutlass_include}",
                                            str(source), "-o", str(self._tmp)],
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def wait(self) -> Path:
        if self._build is not None:
            log, _ = self._build.communicate(timeout=600)
            assert self._build.returncode == 0, log
            os.replace(self._tmp, self.exe)  # atomic: another run never executes half a binary
            self._build = None
        return self.exe

    def printed(self) -> dict[tuple[str | None, str], str]:
        """What the program printed: `== INSTANTIATION` lines open a section, `NAME: VALUE` lines fill it."""
        out = subprocess.run([str(self.wait())], capture_output=True, text=True, check=True).stdout
        printed, instantiation = {}, None
        for line in out.splitlines():
            if line.startswith("== "):
                instantiation = line[3:]
            else:
                name, value = line.split(": ", 1)
                printed[(instantiation, name)] = value
        return printed
