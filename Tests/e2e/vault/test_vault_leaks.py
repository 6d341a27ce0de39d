"""Secrets never leak.

A canary secret given by prompt, standard input and descriptor is never visible in what /proc
shows of kc or any child (argv and environment as exec placed them, process and thread names, open
file names; sampled while kc runs, with positive controls for each place); kc runs with
RLIMIT_CORE 0 and leaves no core file after SIGABRT; files and folders are 0600/0700 under
umask 000; unsafe vault files are refused; no command leaves a file in $TMPDIR; the canary never
appears in the output of a failing command.
"""
from __future__ import annotations

import os
import pty
import re
import secrets
import select
import signal
import stat
import subprocess
import sys
import time

import pexpect
import pytest

from kcharness import EXIT_AUTH_FAILED, EXIT_NOT_FOUND
from kcformat import frames, sha256
from procsampler import Sampler
from vaultkit import figure, Kc, leftovers

# Positive controls for the sampler: a process given a canary on stdin puts it where /proc shows
# it (each must be seen), and one place /proc cannot show (must not be: the figure says so).
SAMPLER_CONTROLS = {
    "argv of a child": "import subprocess, sys; c = sys.stdin.read(); subprocess.run(['sh', '-c', 'sleep 1', c])",
    "environment of a child": "import os, subprocess, sys; c = sys.stdin.read(); "
                              "subprocess.run(['sleep', '1'], env=dict(os.environ, SECRET=c))",
    "name of a thread": "import ctypes, sys, time; c = sys.stdin.read(); "
                        "ctypes.CDLL(None).prctl(15, c[:15].encode()); time.sleep(1)",
    "name of an open file": "import os, sys, tempfile, time; c = sys.stdin.read(); "
                            "f = open(os.path.join(tempfile.gettempdir(), c), 'w'); time.sleep(1); os.unlink(f.name)",
}
INVISIBLE = "import os, sys, time; os.environ['SECRET'] = sys.stdin.read(); time.sleep(1)"


def sampled_control(code: str, needle: str, tmp_path) -> Sampler:
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, env=dict(os.environ, TMPDIR=str(tmp_path)))
    sampler = Sampler(p.pid, [needle.encode()])
    p.communicate(needle.encode(), timeout=30)
    assert p.returncode == 0, code
    return sampler.stop()


def test_sampler_sees_a_canary_wherever_proc_shows_one(tmp_path):
    """The sampler finds a canary in each place it samples; and a canary only `setenv`'d after
    start, which /proc cannot show, is not found (so the figures say exactly what was sampled)."""
    for what, code in SAMPLER_CONTROLS.items():
        c = canary()
        sampler = sampled_control(code, c, tmp_path)
        assert sampler.hits, f"control: the sampler did not see a canary in the {what} ({sampler.samples} samples)"
    c = canary()
    sampler = sampled_control(INVISIBLE, c, tmp_path)
    assert sampler.samples > 50 and sampler.hits == [], sampler.hits
    figure(f"[leaks] /proc sampler controls: a canary in the {', '.join(SAMPLER_CONTROLS)} was seen each time; "
           f"one set with setenv after start was not (/proc shows the environment as exec placed it)")


def canary() -> str:
    return "CANARY-" + secrets.token_hex(12)


def sampled_run(kc: Kc, args, needles, input: bytes | None = None, env=None, pass_fds=(), fds_to_write=()):
    p = kc.popen(args, env=env, pass_fds=pass_fds)
    sampler = Sampler(p.pid, [n.encode() for n in needles])
    time.sleep(0.02)
    for fd, data in fds_to_write:
        os.write(fd, data)
        os.close(fd)
    out, err = p.communicate(input=input or b"", timeout=60)
    sampler.stop()
    return p.returncode, out, err.decode("utf-8", "replace"), sampler


def test_canary_never_in_cmdline_or_environ(tmp_path):
    samples = hits = 0
    children = set()
    channels = []
    # 1. Prompts (a real pseudo-terminal): init, add and passwd with every secret typed.
    kc = Kc(tmp_path / "prompt")
    master, item, new_master = canary(), canary(), canary()
    env = kc.environment({"KC_MASTER_PASSWORD_FILE": None})
    steps = [(["init", "--kdf-ops", "1", "--kdf-memory", "8K"], [master, master]),
             (["add", "generic", "-s", "svc", "-a", "acct"], [master, item, item]),
             (["find", "generic", "-s", "svc", "-w"], [master]),
             (["passwd"], [master, new_master, new_master]),
             (["find", "generic", "-s", "svc", "-w"], [new_master])]
    for args, answers in steps:
        child = pexpect.spawn(kc.binary, args, env=env, cwd=str(kc.home), timeout=20)
        sampler = Sampler(child.pid, [c.encode() for c in (master, item, new_master)])
        screen = b""
        for answer in answers:
            child.expect(rb"[Pp]assword[^:]*: ")
            screen += child.before + child.after
            time.sleep(0.05)   # let the sampler look while kc waits at the prompt
            child.sendline(answer)
        child.expect(pexpect.EOF)
        screen += child.before
        child.close()
        sampler.stop()
        assert child.exitstatus == 0, f"kc {' '.join(args)}: {screen!r}"
        if args[0] == "find":
            assert item.encode() in screen        # asked with -w: the secret is the output
            screen = screen.replace(item.encode(), b"")
        for c in (master, item, new_master):
            assert c.encode() not in screen, f"kc {' '.join(args)} echoed a secret on the terminal"
        samples += sampler.samples
        hits += len(sampler.hits)
        children |= sampler.children
        assert not sampler.hits, f"kc {' '.join(args)}: canary found in {sampler.hits[:5]}"
    channels.append("prompt")

    # 2. Standard input (--password-stdin) and 3. descriptors (--master-password-fd,
    # --new-password-fd), with a KDF slow enough (ops 3, 64 MiB) for the sampler to look.
    kc = Kc(tmp_path / "fd")
    master = canary()
    r_fd, w_fd = os.pipe()
    os.write(w_fd, master.encode() + b"\n"); os.close(w_fd)
    r = kc.run(["--master-password-fd", r_fd, "init", "--kdf-ops", "3", "--kdf-memory", "64M"],
                env={"KC_MASTER_PASSWORD_FILE": None}, pass_fds=(r_fd,))
    os.close(r_fd)
    assert r.returncode == 0, str(r)
    for round_ in range(3):
        item, new_master = canary(), canary()
        needles = [master, item, new_master]
        r_fd, w_fd = os.pipe()
        rc, out, err, sampler = sampled_run(
            kc, ["--master-password-fd", str(r_fd), "add", "generic", "-s", f"svc{round_}", "-a", "acct", "--password-stdin"],
            needles, input=item.encode(), env={"KC_MASTER_PASSWORD_FILE": None}, pass_fds=(r_fd,),
            fds_to_write=[(w_fd, master.encode())])
        os.close(r_fd)
        assert rc == 0, err
        samples += sampler.samples; hits += len(sampler.hits); children |= sampler.children
        assert not sampler.hits, f"stdin/fd: canary found in {sampler.hits[:5]}"
        assert all(n not in err for n in needles)
        r_fd, w_fd = os.pipe()
        r2, w2 = os.pipe()
        rc, out, err, sampler = sampled_run(
            kc, ["--master-password-fd", str(r_fd), "passwd", "--new-password-fd", str(r2)],
            needles, env={"KC_MASTER_PASSWORD_FILE": None}, pass_fds=(r_fd, r2),
            fds_to_write=[(w_fd, master.encode()), (w2, new_master.encode())])
        os.close(r_fd); os.close(r2)
        assert rc == 0, err
        samples += sampler.samples; hits += len(sampler.hits); children |= sampler.children
        assert not sampler.hits, f"passwd by fd: canary found in {sampler.hits[:5]}"
        assert all(n not in err for n in needles)
        master = new_master
    channels += ["stdin", "fd"]
    assert samples > 50, f"only {samples} samples of kc's /proc entries: the sampler saw too little to prove anything"
    figure(f"[leaks] no secret in /proc: canaries given by {', '.join(channels)} (master password, item secret, new master "
           f"password): {samples} samples of the {Sampler.PLACES} of kc and any child ({len(children)} children "
           f"seen), canary found 0 times; never echoed on the terminal")


def test_core_dumps_disabled(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    # Control: a process that allows core dumps does leave one here (so the check below can fail).
    control = subprocess.run([sys.executable, "-c", "import os, resource; "
                              "resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)); os.abort()"],
                             cwd=cwd, capture_output=True)
    assert control.returncode == -signal.SIGABRT, f"the control did not abort with core dumps allowed: {control.stderr!r}"
    pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    control_core = [n for n in os.listdir(cwd) if n.startswith("core")]
    for n in control_core:
        os.unlink(cwd / n)
    env = kc.environment({"KC_MASTER_PASSWORD_FILE": None})
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(kc.binary, [kc.binary, "add", "generic", "-s", "x", "-a", "y"], env)
    screen = b""
    deadline = time.monotonic() + 10
    while b"Master password" not in screen and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                screen += os.read(fd, 1024)
            except OSError:
                break
    assert b"Master password" in screen, screen
    limits = open(f"/proc/{pid}/limits").read()
    core_line = next(l for l in limits.splitlines() if l.startswith("Max core file size"))
    assert core_line.split()[4:6] == ["0", "0"], f"RLIMIT_CORE is not 0 while kc waits at a prompt: {core_line}"
    os.kill(pid, signal.SIGABRT)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    time.sleep(0.3)
    cores = [n for n in os.listdir(cwd) if n.startswith("core")]
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGABRT, f"kc did not die of SIGABRT: {status:#x}"
    assert not os.WCOREDUMP(status), "kc dumped core"
    assert cores == [], f"core files after SIGABRT: {cores}"
    control_note = (f"a control process with core dumps allowed did leave one (core_pattern '{pattern}')" if control_core
                    else f"note: a control process with core dumps allowed left none either here (core_pattern '{pattern}'), "
                         f"so only RLIMIT_CORE 0 and WCOREDUMP are evidence")
    figure(f"[leaks] core dumps: RLIMIT_CORE 0/0 in /proc/PID/limits while kc waits at a prompt; SIGABRT killed kc: "
           f"no core dumped, no core file; {control_note}")


def test_modes_under_umask_000(tmp_path):
    kc = Kc(tmp_path)
    zero = lambda: os.umask(0)   # noqa: E731
    def run(*args, **kw):
        r = kc.run(args, preexec_fn=zero, **kw)
        assert r.returncode == 0, str(r)
    run("init", "--kdf-ops", "1", "--kdf-memory", "8K")
    run("add", "generic", "-s", "a", "-a", "acct", "--password-stdin", input="secret-a")
    run("add", "generic", "-s", "b", "-a", "acct", "--password-stdin", input="secret-b")
    run("update", "generic", "-s", "a", "-a", "acct", "--password-stdin", input="secret-a2")
    run("compact")
    run("passwd", "--new-password-file", kc.password_file)
    run("passwd", "--rotate-key", "--new-password-file", kc.password_file)
    data = bytearray(kc.vault.read_bytes())
    data[frames(bytes(data))[0].body[0] + 30] ^= 1
    kc.vault.write_bytes(bytes(data))
    run("repair", "--salvage", "--yes")
    checked = []
    for base in (kc.data, kc.state):
        for path in [base, *base.rglob("*")]:
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            want = 0o700 if path.is_dir() else 0o600
            assert mode == want, f"{path} is {oct(mode)} under umask 000, expected {oct(want)}"
            checked.append(path)
    names = {p.name for p in checked}
    assert "login.kc" in names and "device-id" in names and any(n.startswith("login.kc.corrupt-") for n in names)
    figure(f"[leaks] modes under umask 000: {sum(p.is_file() for p in checked)} files 0600 and {sum(p.is_dir() for p in checked)} "
           f"folders 0700 after init, add, update, compact, passwd, passwd --rotate-key, repair --salvage "
           f"(vault, salvage copy, device id, rollback anchor)")


def refuse_unsafe(kc, what):
    """Checks that list, add and compact each refuse the vault, leaving its file as it was; returns
    the first error line."""
    real = kc.vault
    digest = sha256(real) if real.exists() and not real.is_symlink() else None
    for args, stdin in ((("list",), None), (("add", "generic", "-s", "b", "-a", "acct", "--password-stdin"), "x"),
                        (("compact",), None)):
        r = kc.run(args, input=stdin)
        assert r.returncode != 0 and "kc: error:" in r.stderr and "refusing" in r.stderr, f"{what}: kc {args[0]} was not refused: {r}"
        if digest:
            assert sha256(real) == digest, f"{what}: kc {args[0]} changed the file"
    return r.stderr.strip().splitlines()[0]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the vault to another user")
def test_vault_of_another_user_refused(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "secret-a")
    os.chown(kc.vault, 65534, 65534)
    refuse_unsafe(kc, "owned by nobody")
    os.chown(kc.vault, os.getuid(), os.getgid())
    assert kc.items() == {("generic", "a", "acct"): "secret-a"}


def test_unsafe_vault_files_refused(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "secret-a")
    real = kc.vault
    refused = []
    def refuse(what):
        refused.append(what)
        return refuse_unsafe(kc, what)
    messages = []
    for mode in (0o620, 0o660, 0o602, 0o666):
        os.chmod(real, mode)
        messages.append(refuse(f"mode {oct(mode)}"))
    os.chmod(real, 0o600)
    target = real.with_name("elsewhere.kc")
    os.rename(real, target)
    os.symlink(target, real)
    messages.append(refuse("a symbolic link"))
    os.unlink(real)
    os.rename(target, real)
    assert kc.items() == {("generic", "a", "acct"): "secret-a"}
    example = re.sub(r"/\S+/", ".../", messages[-1])
    figure(f"[leaks] unsafe files refused: {', '.join(refused)} (by list, add and compact; e.g. \"{example}\")")


def test_no_files_in_tmpdir(tmp_path):
    """Every command succeeds (the last one finds nothing) and leaves no file in $TMPDIR, nor
    anything beside the vault."""
    kc = Kc(tmp_path)
    commands = [
        (("init", "--kdf-ops", "1", "--kdf-memory", "8K"), None),
        (("add", "generic", "-s", "a", "-a", "acct", "--password-stdin"), "secret-a"),
        (("add", "internet", "-s", "ftp.example.com", "-r", "ftp", "-a", "u", "--password-stdin"), "secret-i"),
        (("find", "generic", "-s", "a", "-w"), None),
        (("find", "--all", "--json"), None),
        (("list",), None),
        (("update", "generic", "-s", "a", "-a", "acct", "--password-stdin"), "secret-a2"),
        (("history", "generic", "-s", "a", "-w"), None),
        (("check",), None),
        (("compact",), None),
        (("passwd", "--new-password-file", str(kc.password_file)), None),
        (("passwd", "--rotate-key", "--new-password-file", str(kc.password_file)), None),
        (("repair", "--yes"), None),
        (("netrc",), None),
        (("delete", "internet", "-s", "ftp.example.com", "-a", "u"), None),
        (("help",), None),
        (("--version",), None),
        (("find", "generic", "-s", "missing"), None),
    ]
    for args, stdin in commands:
        r = kc.run(args, input=stdin)
        expected = EXIT_NOT_FOUND if args == commands[-1][0] else 0
        assert r.returncode == expected, r
        if args[0] == "netrc":
            assert r.stdout == "machine ftp.example.com login u password secret-i\n", r
        left = os.listdir(kc.tmpdir)
        assert left == [], f"kc {' '.join(args)} left {left} in $TMPDIR"
        assert leftovers(kc.vault.parent) == [], f"kc {' '.join(args)} left files beside the vault"
    figure(f"[leaks] $TMPDIR: {len(commands)} commands (every item command, check, compact, passwd, repair, history, netrc "
           f"printing its line, help; each with its expected exit status) left 0 files in $TMPDIR and 0 beside the vault")


def test_canary_never_in_output_of_failing_commands(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("svc", "secret-existing")
    c = canary()
    bad_mode = kc.password_file_for(c, "bad-mode")
    os.chmod(bad_mode, 0o644)
    wrong = kc.password_file_for(c, "wrong")
    cases = [
        ("secret on argv", ("add", "generic", "-s", "x", "-a", "acct", "-w", c), None, {}),
        ("duplicate item", ("add", "generic", "-s", "svc", "-a", "acct", "--password-stdin"), c, {}),
        ("update of a missing item", ("update", "generic", "-s", "nope", "-a", "acct", "--password-stdin"), c, {}),
        ("master password file 0644", ("list",), None, {"KC_MASTER_PASSWORD_FILE": str(bad_mode)}),
        ("wrong master password", ("add", "generic", "-s", "y", "-a", "acct", "--password-stdin"), c,
         {"KC_MASTER_PASSWORD_FILE": str(wrong)}),
        ("new password file 0644", ("passwd", "--new-password-file", str(bad_mode)), None, {}),
        ("new password with a wrong master password", ("passwd", "--new-password-file", str(kc.password_file)), None,
         {"KC_MASTER_PASSWORD_FILE": str(wrong)}),
        ("init over an existing vault", ("init",), None, {"KC_MASTER_PASSWORD_FILE": str(wrong)}),
        ("no such vault", ("--vault", str(tmp_path / "missing.kc"), "add", "generic", "-s", "z", "--password-stdin"), c, {}),
        ("lock timeout", None, c, {}),
        ("empty secret then canary in a bad flag", ("add", "generic", "-s", "q", "--password-stdin", "--bogus", c), c, {}),
    ]
    import fcntl
    failing = 0
    for what, args, stdin, env in cases:
        if args is None:
            with open(kc.vault, "rb") as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                r = kc.run(["--lock-timeout", "0.2", "add", "generic", "-s", "w", "-a", "acct", "--password-stdin"], input=c)
        else:
            r = kc.run(args, input=stdin, env=env)
        assert r.returncode != 0, f"{what}: expected a failure: {r}"
        failing += 1
        assert c not in r.stderr, f"{what}: the canary is on stderr: {r.stderr}"
        assert c.encode() not in r.stdout_bytes, f"{what}: the canary is on stdout"
    # A mismatched retype at the prompt.
    child = pexpect.spawn(kc.binary, ["add", "generic", "-s", "m", "-a", "acct"], env=kc.environment(), cwd=str(kc.home), timeout=20)
    child.expect(rb"Password for the item: ")
    child.sendline(c)
    child.expect(rb"Retype the password: ")
    child.sendline(c + "x")
    child.expect(pexpect.EOF)
    screen = child.before
    child.close()
    assert child.exitstatus != 0 and c.encode() not in screen, screen
    failing += 1
    figure(f"[leaks] failing commands: {failing} failures handed a canary secret (argv, stdin, password files, wrong password, "
           f"lock timeout, prompt mismatch): the canary appeared 0 times on stderr or stdout")
