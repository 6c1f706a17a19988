"""The bubblewrap command that runs model-written code: the system, the toolchain, CUTLASS, the Python
environment and the candidate's own folders read-only; a private size-capped /tmp; no home directory;
no network; its own PID, IPC, UTS and user namespaces; no capabilities; only the NVIDIA device nodes
that exist; an environment built from an allow-list (so the LLM API key never reaches it); and the
resource limits of `Limits`, applied inside by `cutegen.sandbox.limits` or the worker itself.

Nothing is bound from the user's home or the project except the paths a run names. Paths are bound
at the same place inside, so records, diagnostics and `.so` paths mean the same in and out.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import cutegen

SERVER_ROOT = Path(cutegen.__file__).resolve().parent.parent  # the directory that holds the cutegen package

# System folders a compiler, Python and the CUDA driver need. /etc only in part: /etc/shadow and the
# like stay outside (real root inside the jail would still own them).
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/sys")
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "passwd", "group", "nsswitch.conf",
        "localtime", "os-release", "OpenCL", "vulkan", "nvidia")
_GPU_NODES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/nvidia-caps")
# Variables a run may see. Everything else (the LLM key, tokens, the user's PATH oddities) stays out.
ALLOWED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
               "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
               "CUTLASS_PATH", "TORCH_CUDA_ARCH_LIST", "OMP_NUM_THREADS")
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.I)
TMP_BYTES = 2 << 30


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 3600  # the jail's lifetime CPU time; a warm worker also gets a per-request budget
    memory_bytes: int = 64 << 30  # RLIMIT_DATA (not RLIMIT_AS: CUDA reserves far more address space than it uses)
    file_bytes: int = 1 << 30  # the largest file a run may write
    processes: int = 512  # threads count too (torch starts one per core)

    def args(self) -> list[str]:
        return ["--cpu", str(self.cpu_seconds), "--memory", str(self.memory_bytes), "--file-size",
                str(self.file_bytes), "--processes", str(self.processes)]


@dataclass(frozen=True)
class Availability:
    ok: bool
    reason: str  # why not, for a person; "" when ok
    bwrap: str | None = None


@dataclass(frozen=True)
class Jail:
    """One jail configuration. `readonly` and `writable` are extra paths bound at the same place."""

    bwrap: str
    readonly: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    forbidden_env: tuple[str, ...] = ("OPENAI_API_KEY",)  # the configured LLM key variable, whatever its name

    def with_paths(self, readonly=(), writable=()) -> "Jail":
        return Jail(self.bwrap, (*self.readonly, *map(str, readonly)), (*self.writable, *map(str, writable)),
                    self.limits, self.forbidden_env)

    def command(self, program: list[str], *, limited: bool = True) -> list[str]:
        """The argv that runs `program` jailed; with `limited`, through the limits shim (for programs that are
        not our own Python: nvcc, ncu)."""
        inner = [sys.executable, "-m", "cutegen.sandbox.limits", *self.limits.args(), "--", *program] if limited else program
        return [self.bwrap, *self._namespaces(), *self._filesystem(), *self._environment(), "--", *inner]

    def compile_command(self, argv: list[str]) -> list[str]:
        """A compiler call (nvcc, ptxas) jailed: its toolkit, include folders and input read-only, only the folder
        of its `-o` output writable."""
        readonly = [str(Path(os.path.realpath(argv[0])).parent.parent)]
        writable = []
        for i, arg in enumerate(argv[1:], 1):
            if arg.startswith("-I") and len(arg) > 2:
                readonly.append(os.path.realpath(arg[2:]))
            elif arg == "-o" and i + 1 < len(argv):
                writable.append(os.path.dirname(os.path.abspath(argv[i + 1])))
            elif not arg.startswith("-") and os.path.isfile(arg):
                readonly.append(os.path.abspath(arg))
        return self.with_paths(readonly=readonly, writable=writable).command(argv)

    def environment(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in ALLOWED_ENV if k in os.environ}
        env = {k: v for k, v in env.items() if k not in self.forbidden_env and not _SECRET_NAME.search(k)}
        env.update(HOME="/tmp", TMPDIR="/tmp", XDG_CACHE_HOME="/tmp/.cache", TORCH_EXTENSIONS_DIR="/tmp/torch_extensions",
                   PYTHONPATH=str(SERVER_ROOT), PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1")
        return env

    def _namespaces(self) -> list[str]:
        # A user namespace where one can be made (always for a non-root user; root in a container may be refused
        # one, and then still runs with every capability dropped).
        return ["--unshare-user-try", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--unshare-cgroup-try", "--hostname", "cutegen-sandbox", "--die-with-parent", "--new-session",
                "--cap-drop", "ALL"]

    def _filesystem(self) -> list[str]:
        args: list[str] = []
        for path in _SYSTEM:
            args += _bind_system(path)
        for name in _ETC:
            if os.path.lexists(f"/etc/{name}"):
                args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        args += ["--proc", "/proc", "--dev", "/dev"]
        for node in gpu_nodes():
            args += ["--dev-bind-try", node, node]
        args += ["--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
        for path in _unique([*python_paths(), str(SERVER_ROOT), *self.readonly]):
            args += ["--ro-bind-try", path, path]
        for path in _unique(self.writable):
            args += ["--bind", path, path]
        return args + ["--remount-ro", "/", "--chdir", "/tmp"]  # the jail's own root too: only /tmp is writable

    def _environment(self) -> list[str]:
        args = ["--clearenv"]
        for k, v in self.environment().items():
            args += ["--setenv", k, v]
        return args


def gpu_nodes() -> list[str]:
    """The NVIDIA device nodes of this machine that exist: /dev/nvidia0.. and the control nodes."""
    return sorted(glob.glob("/dev/nvidia[0-9]*")) + [n for n in _GPU_NODES if os.path.exists(n)]


@functools.lru_cache(maxsize=1)
def python_paths() -> tuple[str, ...]:
    """The running Python's install and environment: the jailed worker runs the same interpreter."""
    exe = Path(sys.executable)
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(exe.resolve().parent.parent)}
    for p in sys.path:  # site-packages of a venv or of --user installs that live outside the prefixes
        if p and Path(p).is_dir() and ("site-packages" in p or "dist-packages" in p):
            paths.add(p)
    real = {os.path.realpath(p) for p in paths}
    return tuple(sorted(_unique([*paths, *real]), key=len))


def find_bwrap() -> str | None:
    """bwrap on PATH, or CUTEGEN_BWRAP (the GPU machine unpacks the .deb into a private prefix)."""
    named = os.environ.get("CUTEGEN_BWRAP")
    if named:
        return named if os.access(named, os.X_OK) else None
    return shutil.which("bwrap")


def availability() -> Availability:
    """Whether a jail can be made here, and why not: bwrap missing, or namespaces refused."""
    bwrap = find_bwrap()
    if bwrap is None:
        return Availability(False, "bubblewrap (bwrap) is not installed: `apt-get install bubblewrap`, or set "
                                   "CUTEGEN_BWRAP to its path")
    return _probe(bwrap)


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> Availability:
    jail = Jail(bwrap)
    try:
        proc = subprocess.run(jail.command([sys.executable, "-c", "print('jailed')"]), capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Availability(False, f"bwrap could not start: {e}", bwrap)
    if proc.returncode != 0 or "jailed" not in proc.stdout:
        why = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return Availability(False, f"bwrap cannot make a sandbox here ({why}); user namespaces may be disabled",
                            bwrap)
    return Availability(True, "", bwrap)


def _bind_system(path: str) -> list[str]:
    if not os.path.lexists(path):
        return []
    if os.path.islink(path):  # merged /usr: /lib -> usr/lib
        return ["--symlink", os.readlink(path), path]
    return ["--ro-bind", path, path]


def _unique(paths) -> list[str]:
    seen, out = set(), []
    for p in paths:
        if p and p not in seen:
            seen.add(p)
            out.append(p)
    return out
