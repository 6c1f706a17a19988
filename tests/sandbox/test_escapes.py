"""Each escape is blocked by the sandbox, reported as such, and nothing outside changes. The gate test
beside this file shows the same candidates never get built in the first place."""

from __future__ import annotations

import re
import socket
import time
import uuid
from pathlib import Path

from cutegen.harness.worker import Worker
from cutegen.sandbox import cgroup
from cutegen.sandbox.jail import Limits

_SERVER = Path(__file__).resolve().parents[2] / "server"


def test_writes_outside_the_sandbox_fail_and_change_nothing(escape, tmp_path, capfd):
    marker = uuid.uuid4().hex
    # tmp_path lies under /tmp: inside the jail that is the private /tmp, so that write lands there, not here.
    targets = [tmp_path / f"outside-{marker}", tmp_path / "built" / f"beside-the-library-{marker}",
               _SERVER / f"in-the-sources-{marker}", Path.home() / f"in-home-{marker}", Path(f"/usr/in-usr-{marker}")]
    body = "".join(f'{{ FILE* f = fopen("{t}", "w"); fprintf(stderr, "write {t.name}: %s\\n", f ? "WRITTEN" : '
                   f'strerror(errno)); if (f) fclose(f); }}\n' for t in targets)
    body += f'{{ FILE* f = fopen("/tmp/private-{marker}", "w"); fprintf(stderr, "private tmp: %s\\n", f ? "ok" : "no"); }}'
    escape(body)
    printed = capfd.readouterr().err
    for t in targets[1:]:  # read-only where the jail binds the path, absent where it does not (HOME, on the H200)
        assert re.search(rf"write {t.name}: (Read-only file system|No such file or directory)", printed), printed
    assert "private tmp: ok" in printed  # the jail has a writable /tmp of its own...
    assert not Path(f"/tmp/private-{marker}").exists()  # ...that is not the machine's
    assert not any(t.exists() for t in targets)


def test_a_secret_planted_in_home_cannot_be_read(escape, tmp_path, capfd):
    secret = f"ssh-secret-{uuid.uuid4().hex}"
    planted = Path.home() / f".cutegen-escape-test-{uuid.uuid4().hex}"
    planted.write_text(secret)
    try:
        escape(f'''
            char buf[256] = {{0}};
            FILE* f = fopen("{planted}", "r");
            if (f) {{ fread(buf, 1, 255, f); fprintf(stderr, "READ %s\\n", buf); }}
            else fprintf(stderr, "home secret: %s; HOME=%s\\n", strerror(errno), getenv("HOME"));
            f = fopen("/etc/shadow", "r");
            fprintf(stderr, "shadow: %s\\n", f ? "READ" : strerror(errno));
        ''')
    finally:
        planted.unlink()
    printed = capfd.readouterr().err
    assert secret not in printed and "READ" not in printed
    assert "home secret: No such file or directory; HOME=/tmp" in printed


def test_the_api_key_never_reaches_the_environment(escape, monkeypatch, capfd):
    key = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", key)  # an allowed name cannot smuggle it either... unless its value is
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")       # the user's; the allow-list is by name, so keep that name clean
    monkeypatch.setenv("SOME_SERVICE_TOKEN", key)
    escape('''
        fprintf(stderr, "OPENAI_API_KEY=%s\\n", getenv("OPENAI_API_KEY") ? getenv("OPENAI_API_KEY") : "(unset)");
        for (char** e = environ; *e; ++e) fprintf(stderr, "ENV %s\\n", *e);
    ''')
    printed = capfd.readouterr().err
    assert key not in printed and "OPENAI_API_KEY=(unset)" in printed
    assert "ENV HOME=/tmp" in printed


def test_no_connection_reaches_a_local_listener(escape, capfd):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        escape(f'''
            int s = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {{0}};
            a.sin_family = AF_INET; a.sin_port = htons({port}); a.sin_addr.s_addr = htonl(0x7f000001);
            int r = connect(s, (struct sockaddr*)&a, sizeof a);
            fprintf(stderr, "connect: %s\\n", r == 0 ? "CONNECTED" : strerror(errno));
        ''')
        try:
            conn, _ = listener.accept()
            conn.close()
            accepted = True
        except socket.timeout:
            accepted = False
    finally:
        listener.close()
    printed = capfd.readouterr().err
    assert not accepted and "CONNECTED" not in printed
    assert "connect: Connection refused" in printed or "Network is unreachable" in printed


def test_a_fork_bomb_is_stopped_and_leaves_nothing_behind(escape, capfd):
    name = f"cgbomb{uuid.uuid4().hex[:8]}"  # the children's process name, to look for survivors
    reply = escape(f'''
        int n = 0;
        for (; n < 1000; ++n) {{
            pid_t p = fork();
            if (p < 0) break;
            if (p == 0) {{ prctl(PR_SET_NAME, "{name}"); sleep(60); _exit(0); }}
        }}
        fprintf(stderr, "forked %d: %s\\n", n, n < 1000 ? "fork refused" : "not refused");
        if (n == 1000) for (;;) pause();
    ''', limits=Limits(processes=128), timeout=20)
    printed = capfd.readouterr().err
    if cgroup.available():  # RLIMIT_NPROC, or for root (exempt from it) a pids cgroup
        assert "fork refused" in printed and int(printed.split("forked ")[1].split(":")[0]) < 128, (reply, printed)
    else:  # root without a writable pids cgroup: the timeout kills the whole PID namespace
        assert reply["verdict"] == "timeout" or "fork refused" in printed
    deadline = time.monotonic() + 20  # the kernel kills the PID namespace; reaping hundreds takes a moment
    while (survivors := [p for p in Path("/proc").iterdir() if p.name.isdigit() and _comm(p) == name]) and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    assert not survivors, f"{len(survivors)} processes of the bomb outlived the sandbox"


def test_a_huge_file_is_cut_off_at_the_size_limit(escape, capfd):
    escape('''
        static char mb[1 << 20];
        FILE* f = fopen("/tmp/huge", "w");
        int i = 0;
        for (; i < 64; ++i) if (fwrite(mb, 1, sizeof mb, f) != sizeof mb || fflush(f) != 0) break;
        fprintf(stderr, "wrote %d MiB: %s\\n", i, i < 64 ? strerror(errno) : "ALL");
    ''', limits=Limits(file_bytes=8 << 20))
    printed = capfd.readouterr().err
    # Python ignores SIGXFSZ, so the write fails with EFBIG instead of killing the worker.
    assert "wrote 8 MiB: File too large" in printed or "wrote 7 MiB: File too large" in printed, printed


def test_spinning_forever_on_the_host_is_a_timeout(escape, capfd):
    started = time.monotonic()
    reply = escape("for (volatile int i = 0;; ) { i = i; }", timeout=4)
    assert reply["verdict"] == "timeout" and "hangs" in reply["message"]
    assert time.monotonic() - started < 30


def test_a_cpu_time_limit_ends_a_spin_before_the_wall_clock_does(escape):
    reply = escape("for (volatile int i = 0;; ) { i = i; }", limits=Limits(cpu_seconds=2), timeout=60)
    assert reply["verdict"] == "crashed" and "CPU-time limit" in reply["message"], reply


def _comm(proc: Path) -> str:
    try:
        return (proc / "comm").read_text().strip()
    except OSError:
        return ""
