"""The jail's system-call filter, modeled on Docker's default seccomp profile: what Docker denies a container
without extra capabilities is denied here (EPERM, as Docker answers), everything else is allowed. A deny list,
not a tight allow list, because CUDA needs much of the kernel: the GPU driver's ioctls, mmap of device memory,
large virtual reservations, the threads torch starts, Nsight Compute's injection.

The filter is compiled by libseccomp (through `pyseccomp`, a ctypes binding) into a BPF program that bwrap
installs with `--seccomp FD` just before it starts the jailed program. Where libseccomp cannot be loaded, no
jail can be made: `program()` raises Unavailable, and the sandbox says why.
"""

from __future__ import annotations

import errno
import functools
import tempfile

# Denied outright: (why, names). Docker allows ptrace and process_vm_* since kernel 4.8; the jail does not.
DENIED = (
    ("namespaces and mounts", ("unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen",
                               "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr")),
    ("tracing other processes", ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
                                 "process_madvise")),
    ("kernel programs and profiling", ("bpf", "perf_event_open", "userfaultfd", "fanotify_init", "lookup_dcookie",
                                       "io_uring_setup", "io_uring_enter", "io_uring_register")),
    ("kernel keyrings", ("keyctl", "add_key", "request_key")),
    ("kernel modules and boot", ("init_module", "finit_module", "delete_module", "create_module", "query_module",
                                 "get_kernel_syms", "kexec_load", "kexec_file_load", "reboot")),
    ("system administration", ("swapon", "swapoff", "acct", "syslog", "quotactl", "quotactl_fd", "nfsservctl",
                               "sysfs", "_sysctl", "uselib", "ustat", "vhangup", "sethostname", "setdomainname",
                               "open_by_handle_at")),
    ("the system clock", ("settimeofday", "stime", "clock_settime")),
    ("raw hardware access", ("iopl", "ioperm", "vm86", "vm86old")),
    ("NUMA placement (CAP_SYS_NICE in Docker)", ("mbind", "set_mempolicy", "get_mempolicy", "migrate_pages",
                                                 "move_pages", "set_mempolicy_home_node")),
)
_NS_FLAGS = (0x00020000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x02000000)  # CLONE_NEW*
# Socket families Docker leaves out (AF_VSOCK among them: in a VM it reaches the host).
_DENIED_FAMILIES = (12, 19, 20, 23, 25, 34, 37, 38, 40)
_FIRST_UNKNOWN_FAMILY = 46
# personality(2) values Docker allows: Linux, Linux32, UNAME26 (and both), and the 0xffffffff query.
_PERSONA_FLAGS_OK = (3, 17)  # the bits of PER_LINUX32 (0x8) and UNAME26 (0x20000)


class Unavailable(RuntimeError):
    """The filter cannot be built here; the message says why, for a person."""


def program() -> bytes:
    """The BPF program bwrap loads (`--seccomp FD`)."""
    return _built()[0]


def unknown_names() -> tuple[str, ...]:
    """Denied names this libseccomp does not know (its syscall table predates them): not in the filter."""
    return _built()[1]


@functools.lru_cache(maxsize=1)
def _built() -> tuple[bytes, tuple[str, ...]]:
    try:
        import pyseccomp as sc
    except (ImportError, OSError, RuntimeError) as e:  # the binding is missing, or libseccomp.so.2 is
        raise Unavailable(f"libseccomp cannot be loaded ({e}): install the `pyseccomp` package and the "
                          "system's libseccomp2") from None
    eperm = sc.ERRNO(errno.EPERM)
    f = sc.SyscallFilter(sc.ALLOW)
    try:
        f.set_attr(sc.Attr.CTL_OPTIMIZE, 2)  # a binary tree: allowed calls pass in a few comparisons
    except (OSError, AttributeError):
        pass
    unknown = [name for _, names in DENIED for name in names if not _deny(f, eperm, name)]
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")  # its flags sit in memory a filter cannot read: glibc then uses clone
    for flag in _NS_FLAGS:  # clone(2) that would make a namespace (x86-64 and arm64: flags are argument 0)
        f.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    for family in _DENIED_FAMILIES:
        f.add_rule(eperm, "socket", sc.Arg(0, sc.EQ, family))
    f.add_rule(eperm, "socket", sc.Arg(0, sc.GE, _FIRST_UNKNOWN_FAMILY))
    _personality(f, sc, eperm)
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.seek(0)
        return out.read(), tuple(unknown)


def _deny(f, action: int, name: str) -> bool:
    try:
        f.add_rule(action, name)
        return True
    except (OSError, ValueError, RuntimeError):  # a name this libseccomp (or this arch) does not have
        return False


def _personality(f, sc, action: int) -> None:
    """EPERM for every personality(2) value but Docker's five. One comparison per rule (libseccomp's limit),
    so the complement is covered by masks: any value above 32 bits; a value with bit 31 clear and a flag bit
    outside the allowed two; a value with bit 31 set and some other bit clear (that is, not 0xffffffff)."""
    top = 1 << 31
    f.add_rule(action, "personality", sc.Arg(0, sc.GT, 0xFFFFFFFF))
    for bit in range(31):
        if bit not in _PERSONA_FLAGS_OK:
            f.add_rule(action, "personality", sc.Arg(0, sc.MASKED_EQ, (1 << bit) | top, 1 << bit))
        f.add_rule(action, "personality", sc.Arg(0, sc.MASKED_EQ, (1 << bit) | top, top))
