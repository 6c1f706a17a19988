"""The bubblewrap command that runs model-written code: the system, the toolchain, CUTLASS, the Python
environment and the candidate's own folders read-only; a private size-capped /tmp; no home directory;
no network; its own PID, IPC, UTS and user namespaces, the candidate as uid/gid 65534 even when the server
is root, no further user namespaces; no capabilities; /proc/sys, /sys and the other host-wide /proc files
read-only or masked (Docker's lists); a seccomp filter (`seccomp`); only the NVIDIA device nodes that exist;
an environment built from an allow-list for the jailed program and an empty one for bwrap itself (`enter`),
so the LLM API key never reaches a process the jail can see; a memory and process cap as a cgroup
(`cgroup`) and the other limits of `Limits`, applied inside by `cutegen.sandbox.limits` or the worker.

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
from dataclasses import dataclass, field, replace
from pathlib import Path

import cutegen
from cutegen.sandbox import cgroup, seccomp

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
ENTER = str(Path(__file__).with_name("enter.py"))
AUTO = object()  # Jail.command's default group: a fresh one, reaped once empty
NOBODY = "65534"
# Host-wide /proc files a jail must not write (Docker's read-only list) or read (its masked list). The jail's
# uid is the server's outside it, so when the server is root, root-owned files there would accept writes.
_PROC_READONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/bus", "/proc/fs", "/proc/irq")
_MASKED_FILES = ("/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
                 "/proc/latency_stats")
_MASKED_DIRS = ("/proc/acpi", "/proc/scsi", "/proc/asound", "/sys/firmware", "/sys/devices/virtual/powercap")


def _memory_total() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 16 << 30


DEFAULT_MEMORY = max(2 << 30, _memory_total() // 2)  # half the machine: the editor and the server keep the rest


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 3600  # the jail's lifetime CPU time; a warm worker also gets a per-request budget
    # The memory cap: a cgroup (host memory actually used, the RAM-backed /tmp included; CUDA's huge virtual
    # reservations do not count) where one can be made, else RLIMIT_DATA (not RLIMIT_AS, for that reason).
    memory_bytes: int = DEFAULT_MEMORY
    file_bytes: int = 1 << 30  # the largest file a run may write
    processes: int = 512  # threads count too (torch starts one per core)

    def args(self, *, rlimit_memory: bool = True) -> list[str]:
        """The inner limits; `rlimit_memory` False when a memory cgroup binds (then an allocation over the cap
        is killed and named as such, rather than failing as an anonymous allocation error)."""
        return ["--cpu", str(self.cpu_seconds), "--memory", str(self.memory_bytes if rlimit_memory else 0),
                "--file-size", str(self.file_bytes), "--processes", str(self.processes)]

    @property
    def tmp_bytes(self) -> int:
        return min(TMP_BYTES, self.memory_bytes)


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
    # Folders of the user's a compile names with -I that the jail does NOT bind whole: only the files of them
    # listed in `readonly` are visible (a candidate's compile sees the kernel's own headers, not a `.env`).
    hidden: tuple[str, ...] = ()

    def with_paths(self, readonly=(), writable=(), hidden=()) -> "Jail":
        return replace(self, readonly=(*self.readonly, *map(str, readonly)),
                       writable=(*self.writable, *map(str, writable)),
                       hidden=(*self.hidden, *(os.path.realpath(h) for h in hidden)))

    def command(self, program: list[str], *, limited: bool = True, group=AUTO) -> list[str]:
        """The argv that runs `program` jailed; with `limited`, through the limits shim (for programs that are
        not our own Python: nvcc, ncu). `group`: the cgroup it runs in (made here, and reaped once empty, when
        not given; None: no cgroup). Starts with the launcher (`enter.py`), which joins the group, hands bwrap
        the seccomp program and execs it with an empty environment."""
        if group is AUTO:
            group = cgroup.make(self.limits.memory_bytes, self.limits.processes, reap=True)
        inner = program if not limited else [sys.executable, "-m", "cutegen.sandbox.limits",
                                             *self.limits.args(rlimit_memory=group is None), "--", *program]
        joins = [a for procs in (group.procs_files() if group else []) for a in ("--join", procs)]
        return [sys.executable, "-I", "-S", ENTER, *joins, "--seccomp", seccomp.program().hex(), "--", self.bwrap,
                *self._namespaces(), *self._filesystem(), *self._environment(), "--", *inner]

    def compile_command(self, argv: list[str]) -> list[str]:
        """A compiler call (nvcc, ptxas) jailed: its toolkit, include folders and input read-only, only the folder
        of its `-o` output writable."""
        readonly = [str(Path(os.path.realpath(argv[0])).parent.parent)]
        writable = []
        for i, arg in enumerate(argv[1:], 1):
            if arg.startswith("-I") and len(arg) > 2 and os.path.realpath(arg[2:]) not in self.hidden:
                readonly.append(os.path.realpath(arg[2:]))
            elif arg == "-isystem" and i + 1 < len(argv) and os.path.realpath(argv[i + 1]) not in self.hidden:
                readonly.append(os.path.realpath(argv[i + 1]))  # a project's system folders (compile_commands.json)
            elif arg == "-o" and i + 1 < len(argv):
                writable.append(os.path.dirname(os.path.abspath(argv[i + 1])))
            elif not arg.startswith("-") and os.path.isfile(arg):
                readonly.append(os.path.abspath(arg))
        return self.with_paths(readonly=readonly, writable=writable).command(argv)

    def environment(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in ALLOWED_ENV if k in os.environ}
        env = {k: v for k, v in env.items() if k not in self.forbidden_env and not _SECRET_NAME.search(k)}
        env.update(HOME="/tmp", TMPDIR="/tmp", XDG_CACHE_HOME="/tmp/.cache",
                   TORCH_EXTENSIONS_DIR="/tmp/torch_extensions",
                   PYTHONPATH=str(SERVER_ROOT), PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1")
        return env

    def _namespaces(self) -> list[str]:
        # A user namespace always (a root server's jail is otherwise host root), the candidate as nobody in it,
        # and none nested (--disable-userns; the seccomp filter refuses unshare and setns too).
        return ["--unshare-user", "--uid", NOBODY, "--gid", NOBODY, "--disable-userns", "--unshare-pid",
                "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname",
                "cutegen-sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]

    def _filesystem(self) -> list[str]:
        args: list[str] = []
        for path in _SYSTEM:
            args += _bind_system(path)
        for name in _ETC:
            if os.path.lexists(f"/etc/{name}"):
                args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        args += ["--proc", "/proc", *_host_wide_files(), "--dev", "/dev"]
        for node in gpu_nodes():
            args += ["--dev-bind-try", node, node]
        args += ["--size", str(self.limits.tmp_bytes), "--tmpfs", "/tmp"]
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


def _host_wide_files() -> list[str]:
    """Docker's read-only and masked paths, those this kernel has (bwrap cannot create files in /proc)."""
    args: list[str] = []
    for path in _PROC_READONLY:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    for path in _MASKED_FILES:
        if os.path.isfile(path):
            args += ["--ro-bind", "/dev/null", path]
    for path in _MASKED_DIRS:
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
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
    """Whether a jail can be made here, and why not: bwrap missing, no seccomp filter, or namespaces refused."""
    bwrap = find_bwrap()
    if bwrap is None:
        return Availability(False, "bubblewrap (bwrap) is not installed: `apt-get install bubblewrap`, or set "
                                   "CUTEGEN_BWRAP to its path")
    try:
        seccomp.program()
    except seccomp.Unavailable as e:
        return Availability(False, f"no seccomp filter can be built: {e}", bwrap)
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
        if "Unknown option" in why:
            return Availability(False, f"{bwrap} is too old ({why}): the sandbox needs bubblewrap 0.8 or newer", bwrap)
        if why.startswith("cutegen sandbox:"):  # the launcher's own message (a cgroup it could not join, ...)
            return Availability(False, why, bwrap)
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
