"""A writer that opened the vault before another process ran `kc passwd` (with or without
--rotate-key) still writes when the password is the same: it unwraps the key of the new header
with the password it was given. When the password itself changed, it fails honestly
(errSecAuthFailed, "changed by another process") and writes nothing.

The writer is held at a known point: `kc add --password-stdin` reads the item's secret from stdin
after it has opened the vault (header read, key unwrapped) and before it takes the write lock. The
test waits until it is blocked in that read with the vault open, runs passwd, then sends the secret.
"""
from __future__ import annotations

import os
import time

import pytest

from kcharness import EXIT_AUTH_FAILED
from vaultkit import Kc, figure


def _blocked_reading_stdin_with_vault_open(pid: int, vault: str, timeout: float = 20) -> None:
    """Waits until process `pid` is in read(0, ...) and holds `vault` open."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            syscall = open(f"/proc/{pid}/syscall").read().split()
            fds = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        except PermissionError:
            pytest.skip("cannot see where kc waits: /proc/PID/syscall of a non-dumpable process needs root")
        except (FileNotFoundError, ProcessLookupError):
            syscall, fds = [], set()
        if syscall[:2] == ["0", "0x0"] and vault in fds:
            return
        time.sleep(0.02)
    raise AssertionError(f"kc add never blocked reading its secret with {vault} open")


def _add_across_passwd(kc: Kc, passwd_args: list[str]):
    """Starts `kc add` (secret from stdin), holds it after it opened the vault, runs
    `kc passwd PASSWD_ARGS`, then lets the add finish. Returns (add returncode, stderr)."""
    writer = kc.popen(["add", "generic", "-s", "during.com", "-a", "acct", "--password-stdin"])
    try:
        _blocked_reading_stdin_with_vault_open(writer.pid, str(kc.vault))
        kc.ok(["passwd", *passwd_args])
        _, err = writer.communicate(b"during-secret", timeout=60)
    finally:
        if writer.poll() is None:
            writer.kill()
    return writer.returncode, err.decode()


@pytest.mark.parametrize("rotate", [True, False], ids=["rotate-key", "rewrap"])
def test_writer_survives_passwd_with_the_same_password(tmp_path, rotate):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("before.com", "before-secret")
    same = kc.password_file_for(kc.master_password, "same")
    rc, err = _add_across_passwd(kc, [*(["--rotate-key"] if rotate else []), "--new-password-file", same])
    assert rc == 0, f"a writer that opened the vault before passwd{' --rotate-key' if rotate else ''} failed: {err}"
    assert kc.items() == {("generic", "before.com", "acct"): "before-secret", ("generic", "during.com", "acct"): "during-secret"}
    assert kc.check().whole
    figure(f"[rotation] a kc add that opened the vault before passwd{' --rotate-key' if rotate else ''} (same password) "
           f"unwrapped the new header's key and wrote its item")


@pytest.mark.parametrize("rotate", [True, False], ids=["rotate-key", "rewrap"])
def test_writer_fails_honestly_when_the_password_changed(tmp_path, rotate):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("before.com", "before-secret")
    new = kc.password_file_for("a brand new password: maple ember", "new")
    rc, err = _add_across_passwd(kc, [*(["--rotate-key"] if rotate else []), "--new-password-file", new])
    assert rc == EXIT_AUTH_FAILED and "changed by another process" in err and "(errSecAuthFailed)" in err, (rc, err)
    kc.set_password("a brand new password: maple ember")
    assert kc.items() == {("generic", "before.com", "acct"): "before-secret"}, "the refused writer wrote something"
    figure(f"[rotation] a kc add that opened the vault before passwd{' --rotate-key' if rotate else ''} changed the "
           f"password failed with errSecAuthFailed and wrote nothing")
