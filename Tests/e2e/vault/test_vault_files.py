"""The files beside the vault and the vault's own permissions: a user's backup is never removed,
a rewritten file is published under the lock, and a vault others can read, write or swap is
reported or refused."""
from __future__ import annotations

import fcntl
import os
import subprocess
import time

import pytest

from kcharness import EXIT_DECODE, EXIT_PARAM
from vaultkit import Kc

NOBODY = 65534


def test_users_own_backup_and_similar_names_survive_writes_and_rewrites(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "x")
    folder = kc.vault.parent
    mine = {name: f"the user's {name}".encode() for name in
            ("login.kc.bak", "login.kc.tmp-1", f"login.kc.tmp-{os.getpid()}", "login.kc.old", "login.kc.kc-tmp-notes")}
    for name, text in mine.items():
        (folder / name).write_bytes(text)
    kc.put("b", "y")
    kc.ok(["update", "generic", "-s", "a", "--password-stdin"], input="x2")
    kc.ok(["delete", "generic", "-s", "b"])
    kc.ok(["compact"])
    kc.ok(["passwd", "--new-password-file", kc.password_file])
    for name, text in mine.items():
        assert (folder / name).read_bytes() == text, f"{name} was changed or removed"
    assert sorted(os.listdir(folder)) == sorted(["login.kc", *mine])


def test_rewritten_file_is_locked_until_its_folder_is_synced(tmp_path):
    """Delays the compaction's second fsync (the folder's, after the rename) with strace, and
    checks that the new file at the path is already locked then."""
    kc = Kc(tmp_path)
    kc.create()
    for i in range(3):
        kc.put(f"s{i}", "x")
    old = os.stat(kc.vault).st_ino
    p = kc.popen(["compact"], stdin=subprocess.DEVNULL,
                 wrapper=["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync", "-e", "inject=fsync:delay_enter=3000000:when=2"])
    deadline = time.monotonic() + 60
    while os.stat(kc.vault).st_ino == old:
        assert p.poll() is None and time.monotonic() < deadline, "the compaction ended before the rename was seen"
        time.sleep(0.005)
    with open(kc.vault, "rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
            locked = False
        except BlockingIOError:
            locked = True
    still_running = p.poll() is None
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert still_running, "the probe came after the compaction ended: it proves nothing"
    assert locked, "the new file was readable and writable before its folder fsync"
    assert set(kc.items()) == {("generic", f"s{i}", "acct") for i in range(3)}


def test_vault_readable_by_others_is_reported(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "x")
    os.chmod(kc.vault, 0o640)
    r = kc.ok(["find", "generic", "-s", "a", "-w"])
    assert r.stdout_bytes == b"x\n"
    assert "kc: warning: the vault can be read by other users (mode 640)" in r.stderr, r
    r = kc.ok(["check"])
    assert "permissions: 640, readable by other users" in r.stdout, r
    assert "can be read by other users" in r.stderr, r
    os.chmod(kc.vault, 0o600)
    assert kc.ok(["find", "generic", "-s", "a"]).stderr == ""


@pytest.mark.parametrize("case", ["vault writable by the group", "folder writable by all",
                                  "folder writable by the group", "folder of another user"])
def test_vault_others_can_write_or_swap_is_refused(tmp_path, case):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "x")
    folder = kc.vault.parent
    before = kc.digest()
    if case == "vault writable by the group":
        os.chmod(kc.vault, 0o620)
    elif case == "folder writable by all":
        os.chmod(folder, 0o777)
    elif case == "folder writable by the group":
        os.chmod(folder, 0o770)
    else:
        os.chmod(folder, 0o755)
        os.chown(folder, NOBODY, NOBODY)
    for args in (("find", "generic", "-s", "a"), ("add", "generic", "-s", "b", "--password-stdin"), ("check",)):
        r = kc.run([*args], input="y")
        assert r.returncode == EXIT_PARAM, f"{case}: {args}: {r}"
        assert "refusing to use" in r.stderr, f"{case}: {r}"
    assert kc.digest() == before
    os.chown(folder, 0, 0)
    os.chmod(folder, 0o700)
    os.chmod(kc.vault, 0o600)
    assert set(kc.items()) == {("generic", "a", "acct")}


def test_vault_in_a_sticky_shared_folder_is_accepted(tmp_path):
    kc = Kc(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    vault = shared / "team.kc"
    kc.ok(["--vault", vault, "init", "--kdf-ops", "1", "--kdf-memory", "8K"])
    kc.ok(["--vault", vault, "add", "generic", "-s", "a", "--password-stdin"], input="x")
    assert kc.ok(["--vault", vault, "find", "generic", "-s", "a", "-w"]).stdout_bytes == b"x\n"


def test_a_large_file_that_is_not_a_vault_is_refused_before_it_is_read(tmp_path):
    """The header is checked before the rest of the file is read: `--vault` naming a large file
    that is not a vault costs one header read, not the whole file (counted with strace)."""
    kc = Kc(tmp_path)
    big = kc.home / "big.kc"
    with open(big, "wb") as f:
        f.write(b"not a vault\n" * 100)
        f.truncate(64 << 20)   # sparse: 64 MiB that cost no disk
    os.chmod(big, 0o600)
    trace = tmp_path / "trace"
    r = kc.run(["--vault", big, "find", "generic", "-s", "x"],
               wrapper=["strace", "-f", "-qq", "-e", "trace=pread64", "-o", trace])
    assert r.returncode == EXIT_DECODE, r
    read = sum(int(line.rsplit("=", 1)[1].split()[0]) for line in trace.read_text().splitlines()
               if "pread64(" in line and "=" in line and not line.rstrip().endswith("?"))
    assert 0 < read <= 4096, f"kc read {read} bytes of a file whose header is not a vault's"
