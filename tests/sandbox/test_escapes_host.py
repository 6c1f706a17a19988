"""Escapes that held only when the server was not root, or not at all (issue 25): the candidate's static
initializer, inside the project's own jailed worker, reads other processes' environments, writes host-wide
sysctls, traces the jail's bwrap, asks the kernel for namespaces and other privileged calls, and takes more
host memory than the machine can give. Each was written against the old jail first and failed there.

The C bodies only open files for writing, never write them: on a broken jail they must not change the host."""

from __future__ import annotations

import re
import uuid

import pytest

from cutegen.sandbox import cgroup
from cutegen.sandbox.jail import Limits


def test_no_visible_process_shows_the_servers_environment(escape, monkeypatch, capfd):
    key = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("DEPLOY_TOKEN", key[::-1])
    escape(r'''
        DIR* d = opendir("/proc");
        struct dirent* e;
        int seen = 0;
        while ((e = readdir(d))) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
            char path[64], buf[65536];
            for (int k = 0; k < 2; ++k) {
                snprintf(path, sizeof path, "/proc/%s/%s", e->d_name, k ? "cmdline" : "environ");
                FILE* f = fopen(path, "r");
                if (!f) { fprintf(stderr, "%s: %s\n", path, strerror(errno)); continue; }
                size_t n = fread(buf, 1, sizeof buf - 1, f);
                fclose(f);
                for (size_t i = 0; i < n; ++i) if (!buf[i]) buf[i] = ' ';
                buf[n] = 0;
                fprintf(stderr, "%s: %s\n", path, buf);
            }
            ++seen;
        }
        fprintf(stderr, "pids seen: %d\n", seen);
    ''')
    printed = capfd.readouterr().err
    assert "/proc/1/environ" in printed and int(printed.split("pids seen: ")[1].split()[0]) >= 2, printed[-2000:]
    assert key not in printed and key[::-1] not in printed
    assert not re.search(r"/proc/1/environ: \S", printed), "bwrap (PID 1 in the jail) has an environment"


def test_host_wide_kernel_settings_cannot_be_opened_for_writing(escape, capfd):
    targets = ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/overcommit_ratio", "/proc/sys/kernel/modprobe",
               "/proc/sysrq-trigger", "/sys/kernel/mm/transparent_hugepage/enabled"]
    body = "".join(f'{{ int fd = open("{t}", O_WRONLY); fprintf(stderr, "{t}: %s\\n", fd >= 0 ? "OPENED FOR '
                   f'WRITING" : strerror(errno)); if (fd >= 0) close(fd); }}\n' for t in targets)
    escape(body)
    printed = capfd.readouterr().err
    assert "OPENED FOR WRITING" not in printed, printed
    assert "/proc/sys/kernel/core_pattern: Read-only file system" in printed, printed


def test_the_candidate_and_bwrap_run_as_nobody_without_capabilities(escape, capfd):
    """The candidate, and bwrap's PID 1 beside it (whose memory the candidate can open, as its own user's):
    nobody, no capabilities, none to regain (empty bounding set, no-new-privileges), the seccomp filter."""
    escape(r'''
        fprintf(stderr, "ids %d %d %d %d\n", (int)getuid(), (int)geteuid(), (int)getgid(), (int)getegid());
        const char* who[] = {"self", "1"};
        for (int k = 0; k < 2; ++k) {
            char path[32], line[256];
            snprintf(path, sizeof path, "/proc/%s/status", who[k]);
            FILE* f = fopen(path, "r");
            while (fgets(line, sizeof line, f))
                if (!strncmp(line, "Cap", 3) || !strncmp(line, "Seccomp:", 8) || !strncmp(line, "NoNewPrivs", 10))
                    fprintf(stderr, "%s %s", who[k], line);
        }
    ''')
    printed = capfd.readouterr().err
    assert "ids 65534 65534 65534 65534" in printed, printed
    for who in ("self", "1"):
        for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            assert re.search(rf"{who} {cap}:\s+0+\n", printed), printed
        assert re.search(rf"{who} Seccomp:\s+2\n", printed), "no seccomp filter: " + printed
        assert re.search(rf"{who} NoNewPrivs:\s+1\n", printed), printed


def test_no_visible_process_can_be_traced_or_read(escape, capfd):
    escape(r'''
        DIR* d = opendir("/proc");
        struct dirent* e;
        pid_t self = getpid();
        while ((e = readdir(d))) {
            pid_t pid = atoi(e->d_name);
            if (pid <= 0 || pid == self) continue;
            long r = ptrace(PTRACE_ATTACH, pid, 0, 0);
            fprintf(stderr, "attach %d: %s\n", pid, r == 0 ? "ATTACHED" : strerror(errno));
            if (r == 0) { waitpid(pid, 0, 0); ptrace(PTRACE_DETACH, pid, 0, 0); }
            r = ptrace(PTRACE_SEIZE, pid, 0, 0);
            fprintf(stderr, "seize %d: %s\n", pid, r == 0 ? "SEIZED" : strerror(errno));
            if (r == 0) ptrace(PTRACE_DETACH, pid, 0, 0);
            char byte; struct iovec local = {&byte, 1}, remote = {(void*)0x400000, 1};
            ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
            fprintf(stderr, "vm_readv %d: %s\n", pid, n >= 0 ? "READ" : strerror(errno));
        }
    ''')
    printed = capfd.readouterr().err
    assert "attach 1:" in printed, printed
    assert not re.search(r"ATTACHED|SEIZED|: READ", printed), printed


def test_the_kernel_refuses_what_dockers_profile_refuses(escape, capfd):
    escape(r'''
        #define TRY(what, call) do { long r = (call); int err = errno; if (r == 0 && !strcmp(what, "clone(new net)")) _exit(0); \
            fprintf(stderr, "%s: %s\n", what, r < 0 && err == EPERM ? "EPERM" : "NOT REFUSED"); } while (0)
        TRY("unshare(user)", syscall(SYS_unshare, 0x10000000));
        TRY("unshare(mount)", syscall(SYS_unshare, 0x00020000));
        TRY("clone(new net)", syscall(SYS_clone, 0x40000000 | SIGCHLD, 0, 0, 0, 0));
        TRY("setns", syscall(SYS_setns, 0, 0));
        TRY("mount", syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, 0));
        TRY("bpf", syscall(SYS_bpf, 0, 0, 0));
        TRY("perf_event_open", syscall(SYS_perf_event_open, 0, 0, -1, -1, 0));
        TRY("keyctl", syscall(SYS_keyctl, 0, 0, 0, 0, 0));
        TRY("add_key", syscall(SYS_add_key, "user", "k", "v", 1, -2));
        TRY("userfaultfd", syscall(SYS_userfaultfd, 0));
        TRY("personality(no ASLR)", syscall(SYS_personality, 0x0040000));
        TRY("socket(AF_VSOCK)", syscall(SYS_socket, 40, 1, 0));
        TRY("io_uring_setup", syscall(SYS_io_uring_setup, 1, 0));
        TRY("ptrace(TRACEME)", syscall(SYS_ptrace, 0, 0, 0, 0));
        fprintf(stderr, "personality query: %ld\n", (long)syscall(SYS_personality, 0xffffffffUL));
    ''')
    printed = capfd.readouterr().err
    assert "NOT REFUSED" not in printed and printed.count("EPERM") == 14, printed
    assert "personality query: 0" in printed or "personality query: 8" in printed, printed


_MEMORY = pytest.mark.skipif(not getattr(cgroup, "memory_binds", lambda: True)(),
                             reason="no memory cgroup can be made here (not root, no delegation): the cap is "
                                    "RLIMIT_DATA, which shared memory escapes (docs/security.md)")


@_MEMORY
def test_shared_memory_over_the_cap_is_an_out_of_memory_verdict(escape, capfd):
    reply = escape(r'''
        size_t size = 4UL << 30;
        char* p = mmap(0, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { fprintf(stderr, "mmap: %s\n", strerror(errno)); return; }
        for (size_t i = 0; i < size; i += 4096) {
            p[i] = 1;
            if (i % (256UL << 20) == 0) { fprintf(stderr, "touched %zu MiB\n", i >> 20); fflush(stderr); }
        }
        fprintf(stderr, "TOUCHED ALL 4 GiB\n");
    ''', limits=Limits(memory_bytes=1 << 30), timeout=120)
    printed = capfd.readouterr().err
    assert "TOUCHED ALL" not in printed
    assert reply["verdict"] == "out-of-memory" and "memory cap of 1.0 GiB" in reply["message"], (reply, printed[-500:])


@_MEMORY
def test_the_private_tmp_counts_against_the_memory_cap(escape, capfd):
    reply = escape(r'''
        static char mb[1 << 20];
        memset(mb, 7, sizeof mb);
        FILE* f = fopen("/tmp/fill", "w");
        int i = 0;
        for (; i < 600; ++i) if (fwrite(mb, 1, sizeof mb, f) != sizeof mb) break;
        fclose(f);
        fprintf(stderr, "wrote %d MiB to /tmp\n", i);
        fflush(stderr);
        size_t size = 600UL << 20;
        char* p = malloc(size);
        for (size_t k = 0; p && k < size; k += 4096) p[k] = 1;
        fprintf(stderr, "TOUCHED 600 MiB MORE\n");
    ''', limits=Limits(memory_bytes=1 << 30), timeout=120)
    printed = capfd.readouterr().err
    assert "wrote 600 MiB to /tmp" in printed and "TOUCHED 600 MiB MORE" not in printed, printed[-500:]
    assert reply["verdict"] == "out-of-memory", reply
