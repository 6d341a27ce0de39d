"""The state folder (device id, rollback anchors, vault ids by path): where it is without HOME,
whose it must be, and what happens when its files are damaged or cannot be written."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kcformat import vault_id
from kcharness import EXIT_PARAM, EXIT_VERIFY_FAILED
from vaultkit import Kc

NOBODY = 65534


def run_bare(kc: Kc, cwd: Path, *args, input: str = "", wrapper=(), **extra):
    """kc as cron or `env -i` start it: no HOME, no XDG variables, no PATH; only the vault and the
    password file named (and `extra`)."""
    keep = {"KC_VAULT": str(kc.vault), "KC_MASTER_PASSWORD_FILE": str(kc.password_file), **extra}
    return kc.run(list(args), input=input, cwd=str(cwd), env=keep, wrapper=wrapper,
                  unset=tuple(name for name in kc.environment() if name not in keep))


def private_passwd_home(tmp_path: Path) -> tuple[tuple, Path]:
    """A wrapper that runs kc in its own user and mount namespaces, where the passwd entry of its
    uid (root there) names a home inside `tmp_path`: what kc writes without HOME stays in the test,
    never in the real home's state folder. Returns the wrapper and that home."""
    home = tmp_path / "passwd-home"
    home.mkdir(mode=0o700)
    passwd = tmp_path / "passwd"
    passwd.write_text(f"root:x:0:0:root:{home}:/bin/sh\n")
    wrapper = ("/usr/bin/unshare", "--user", "--map-root-user", "--mount", "--",
               "/bin/sh", "-c", 'mount --bind "$0" /etc/passwd && exec "$@"', str(passwd))
    probe = subprocess.run([*wrapper, "/bin/sh", "-c", "getent passwd 0 | cut -d: -f6"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"no unprivileged mount namespace here: {probe.stderr.strip()}")
    assert probe.stdout.strip() == str(home), probe  # control: the namespace really sees that home
    return wrapper, home


def test_without_home_the_state_folder_is_the_users_and_rollback_is_detected(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "x")
    here, there = tmp_path / "cron-1", tmp_path / "cron-2"
    here.mkdir()
    there.mkdir()
    wrapper, home = private_passwd_home(tmp_path)
    older = kc.vault.read_bytes()
    r = run_bare(kc, here, "add", "generic", "-s", "b", "-a", "acct", "--password-stdin", input="y", wrapper=wrapper)
    assert r.returncode == 0, r
    anchor = home / ".local" / "state" / "kc" / "anchors" / vault_id(older)
    assert anchor.exists(), f"no anchor in the passwd entry's home: {sorted(home.rglob('*'))}"
    # An older copy put back; the next command runs from another folder (another cron job).
    kc.vault.write_bytes(older)
    r = run_bare(kc, there, "add", "generic", "-s", "c", "-a", "acct", "--password-stdin", input="z", wrapper=wrapper)
    assert r.returncode == EXIT_VERIFY_FAILED, r
    assert "older than a copy this machine has seen" in r.stderr, r
    # A relative XDG_STATE_HOME is ignored (XDG base directory specification).
    r = run_bare(kc, there, "find", "generic", "-s", "a", XDG_STATE_HOME="relative-state", wrapper=wrapper)
    assert r.returncode == 0 and "older than a copy" in r.stderr, r
    for folder in (here, there):
        assert os.listdir(folder) == [], f"kc wrote into the current folder {folder}: {os.listdir(folder)}"


def test_state_folder_of_another_user_or_writable_by_others_is_refused(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "x")
    state = kc.state / "kc"
    anchor = kc.anchor_files()[0]
    cases = [
        ("folder of another user", lambda: os.chown(state, NOBODY, NOBODY), lambda: os.chown(state, 0, 0)),
        ("folder writable by the group", lambda: os.chmod(state, 0o770), lambda: os.chmod(state, 0o700)),
        ("anchor of another user", lambda: os.chown(anchor, NOBODY, NOBODY), lambda: os.chown(anchor, 0, 0)),
        ("device id writable by others", lambda: os.chmod(state / "device-id", 0o666), lambda: os.chmod(state / "device-id", 0o600)),
        ("anchors folder of another user", lambda: os.chown(anchor.parent, NOBODY, NOBODY), lambda: os.chown(anchor.parent, 0, 0)),
        ("anchors folder writable by others", lambda: os.chmod(anchor.parent, 0o777), lambda: os.chmod(anchor.parent, 0o700)),
    ]
    for name, spoil, mend in cases:
        before = anchor.read_bytes()
        spoil()
        r = kc.run(["add", "generic", "-s", name, "-a", "acct", "--password-stdin"], input="s")
        mend()
        assert r.returncode == EXIT_PARAM, f"{name}: {r}"
        assert "state folder" in r.stderr, f"{name}: {r}"
        assert anchor.read_bytes() == before, name
    assert set(kc.items()) == {("generic", "a", "acct")}


def test_damaged_anchor_is_reported_and_not_overwritten(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "x")
    anchor = kc.anchor_files()[0]
    anchor.write_bytes(b"not an anchor\n")
    r = kc.ok(["find", "generic", "-s", "a", "-w"])
    assert "rollback anchor" in r.stderr and "damaged" in r.stderr, r
    r = kc.run(["add", "generic", "-s", "b", "-a", "acct", "--password-stdin"], input="y")
    assert r.returncode == EXIT_VERIFY_FAILED and "damaged" in r.stderr, r
    assert anchor.read_bytes() == b"not an anchor\n", "a write replaced the damaged anchor"
    kc.ok(["--accept-rollback", "add", "generic", "-s", "b", "-a", "acct", "--password-stdin"], input="y")
    assert anchor.read_bytes() != b"not an anchor\n"
    assert kc.ok(["-q", "add", "generic", "-s", "c", "-a", "acct", "--password-stdin"], input="z").stderr == ""   # no warning


def test_failed_anchor_write_is_reported(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "x")
    anchor = kc.anchor_files()[0]
    before = anchor.read_bytes()
    # The add's second write is the anchor's slot (the first is its record): make it fail.
    r = kc.run(["add", "generic", "-s", "b", "-a", "acct", "--password-stdin"], input="y", fault="write:2:EIO")
    assert r.returncode == 0, r
    assert "rollback anchor could not be stored" in r.stderr, r
    assert anchor.read_bytes() == before
    assert set(kc.items()) == {("generic", "a", "acct"), ("generic", "b", "acct")}


def test_another_vault_swapped_in_at_the_same_path_is_reported(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "x")
    other = kc.vault.parent / "work.kc"
    kc.ok(["--vault", other, "init", "--kdf-ops", "1", "--kdf-memory", "8K"])
    kc.ok(["--vault", other, "add", "generic", "-s", "w", "-a", "acct", "--password-stdin"], input="w")
    assert kc.ok(["find", "generic", "-s", "a"]).stderr == ""
    os.rename(other, kc.vault)
    r = kc.ok(["find", "generic", "-s", "w"])
    assert "not the vault this machine last saw at this path" in r.stderr, r


def test_missing_anchors_folder_is_made_private_again(tmp_path):
    """A write finds the folders it stages in with one look each: a missing one is still made,
    0700 whatever the umask, and the anchor written into it."""
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "x")
    anchors = kc.anchor_files()[0].parent
    for child in anchors.iterdir():
        child.unlink()
    anchors.rmdir()
    r = kc.run(["add", "generic", "-s", "b", "-a", "acct", "--password-stdin"], input="y",
               wrapper=("/bin/sh", "-c", 'umask 000 && exec "$@"', "sh"))
    assert r.returncode == 0, r
    assert anchors.is_dir() and (anchors.stat().st_mode & 0o777) == 0o700, oct(anchors.stat().st_mode)
    assert len(kc.anchor_files()) == 1
