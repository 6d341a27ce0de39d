"""Never write after a failed read.

A wrong password, a corrupt header, a corrupt record and an unreadable vault (a directory or a
FIFO where the file should be: chmod 000 does not stop root), 100 runs each spread over every
command: the vault's bytes are unchanged and no temporary or backup file is left beside it.
"""
from __future__ import annotations

import os
import stat

import pytest

from kcharness import EXIT_AUTH_FAILED, EXIT_DECODE
from kcformat import frames, sha256
from vaultkit import figure, Kc

COMMANDS = [
    (("add", "generic", "-s", "new", "-a", "acct", "--password-stdin"), "new-secret"),
    (("add", "generic", "-s", "alpha", "-a", "acct", "-U", "--password-stdin"), "changed"),
    (("update", "generic", "-s", "alpha", "-a", "acct", "--password-stdin"), "changed"),
    (("update", "generic", "-s", "alpha", "-a", "acct", "--set-label", "L"), None),
    (("delete", "generic", "-s", "alpha", "-a", "acct"), None),
    (("compact",), None),
    (("passwd", "--new-password-file", "NEWPW"), None),
    (("passwd", "--rotate-key", "--new-password-file", "NEWPW"), None),
    (("repair", "--yes"), None),
    (("repair", "--salvage", "--yes"), None),
    (("find", "--all", "-w"), None),
    (("list",), None),
    (("check",), None),
    (("history", "generic", "-s", "alpha", "-w"), None),
]


def vault_with_items(kc: Kc) -> None:
    kc.create()
    kc.put("alpha", "secret-alpha")
    kc.put("bravo", "secret-bravo")
    kc.ok(["update", "generic", "-s", "bravo", "-a", "acct", "--password-stdin"], input="secret-bravo-2")


def run_all(kc: Kc, expect, what: str, env=None, skip=()) -> int:
    """Runs each command once (they are deterministic) and checks that none wrote anything: the
    vault, every file of the data and state folders (bytes compared) and no file beside the vault."""
    newpw = str(kc.password_file_for("another password: ember tundra velvet", "newpw"))
    state_before = kc.snapshot()
    runs = 0
    for args, stdin in COMMANDS:
        if args[0] in skip or " ".join(args) in skip:
            continue
        args = tuple(newpw if a == "NEWPW" else a for a in args)
        before = digest_of(kc.vault)
        r = kc.run(args, input=stdin, env=env)
        runs += 1
        assert expect(r), f"{what}: kc {' '.join(args)}: {r}"
        assert "kc: error:" in r.stderr, f"{what}: no error line: {r}"
        assert digest_of(kc.vault) == before, f"{what}: kc {args[0]} changed the vault"
        assert sorted(os.listdir(kc.vault.parent)) == ["login.kc"], \
            f"{what}: kc {args[0]} left {sorted(os.listdir(kc.vault.parent))}"
        after = kc.snapshot()
        changed = sorted(str(p) for p in set(after) | set(state_before) if after.get(p) != state_before.get(p))
        assert not changed, f"{what}: kc {' '.join(args)} changed, added or removed {changed}"
    return runs


def digest_of(path):
    if path.is_dir():
        return ("dir", tuple(sorted(os.listdir(path))))
    if stat.S_ISFIFO(os.stat(path).st_mode):
        return ("fifo",)
    return sha256(path)


def test_never_write_after_a_failed_read(tmp_path):
    kc = Kc(tmp_path)
    vault_with_items(kc)
    good = kc.vault.read_bytes()
    totals = {}

    # Wrong master password.
    wrong = {"KC_MASTER_PASSWORD_FILE": str(kc.password_file_for("not the password", "wrong"))}
    totals["wrong password"] = run_all(kc, lambda r: r.returncode == EXIT_AUTH_FAILED and "errSecAuthFailed" in r.stderr,
                                       "wrong password", env=wrong)

    # Corrupt header (a flipped byte in the salt: the header checksum fails).
    bad = bytearray(good); bad[50] ^= 0x04
    kc.vault.write_bytes(bytes(bad))
    totals["corrupt header"] = run_all(kc, lambda r: r.returncode == EXIT_DECODE and "errSecDecode" in r.stderr, "corrupt header")

    # Corrupt record (a flipped byte in the second record's body). Only repair --salvage may write
    # (that is its job, tested elsewhere); every other command must leave the bytes alone.
    bad = bytearray(good); bad[frames(good)[1].body[0] + 40] ^= 0x04
    kc.vault.write_bytes(bytes(bad))
    totals["corrupt record"] = run_all(kc, lambda r: r.returncode == EXIT_DECODE and "errSecDecode" in r.stderr, "corrupt record",
                                       skip=("repair --salvage --yes",))

    # Unreadable: a directory, then a FIFO, where the vault file should be.
    kc.vault.unlink()
    kc.vault.mkdir(mode=0o700)
    totals["a directory in place of the vault"] = run_all(kc, lambda r: r.returncode != 0, "directory in place of the vault")
    kc.vault.rmdir()
    os.mkfifo(kc.vault, 0o600)
    totals["a FIFO in place of the vault"] = run_all(kc, lambda r: r.returncode != 0, "FIFO in place of the vault")
    kc.vault.unlink()
    kc.vault.write_bytes(good)
    kc.vault.chmod(0o600)
    assert kc.items() == {("generic", "alpha", "acct"): "secret-alpha", ("generic", "bravo", "acct"): "secret-bravo-2"}
    figure(f"[failed reads] never write after a failed read: {sum(totals.values())} runs, each of the {len(COMMANDS)} commands once "
           f"under each of {len(totals)} conditions ({', '.join(f'{what}: {n}' for what, n in totals.items())}): "
           "every run failed with an error line, and left the vault and every file of the data and state folders "
           "byte-identical, with nothing added or removed")
