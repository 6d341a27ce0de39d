"""Read-only vaults: a 0400 file in a 0500 folder, and a real read-only file system (tmpfs
remounted read-only). Commands that only read work, under a shared lock where one can be taken;
a command that must write says `the vault is read-only` with a hint, never EBADF or EROFS raw,
and leaves the vault as it was."""
from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

import pytest

from kcharness import FAST_KDF, KC, assert_failure

READ_ONLY = "is read-only"
RAW = ("Bad file descriptor", "Read-only file system", "Permission denied")
# As root, permissions do not bind: kc runs without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH,
# so a 0400 file and a 0500 folder refuse it as they refuse an ordinary user.
AS_USER = (("setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps", "-all")
           if os.geteuid() == 0 else ())


def fill(kc: KC, vault: Path) -> None:
    kc.ok(["--vault", vault, "init", *FAST_KDF])
    for service in ("s1", "s2"):
        kc.ok(["--vault", vault, "add", "generic", "-s", service, "-a", "me", "--password-stdin"], input=f"{service}-secret")


def reads_work(kc: KC, vault: Path, wrapper=()) -> None:
    assert kc.ok(["--vault", vault, "find", "-s", "s1", "-w"], wrapper=wrapper).stdout == "s1-secret\n"
    assert "s2" in kc.ok(["--vault", vault, "list"], wrapper=wrapper).stdout
    assert "status: whole" in kc.ok(["--vault", vault, "check"], wrapper=wrapper).stdout
    kc.ok(["--vault", vault, "history", "generic", "-s", "s2"], wrapper=wrapper)
    backup = kc.home / "copy.kc"
    kc.ok(["--vault", vault, "backup", backup], wrapper=wrapper)
    assert backup.read_bytes() == vault.read_bytes()
    backup.unlink()


def writes_refused(kc: KC, vault: Path, why: str, wrapper=()) -> None:
    before = vault.read_bytes()
    writes = [
        (["add", "generic", "-s", "s3", "-a", "me", "--password-stdin"], "s3-secret"),
        (["update", "generic", "-s", "s1", "--set-comment", "new"], None),
        (["delete", "generic", "-s", "s2"], None),   # no terminal: no question
        (["compact"], None),
        (["passwd", "--new-password-file", kc.password_file], None),
    ]
    for args, secret in writes:
        result = kc.run(["--vault", vault, *args], input=secret, wrapper=wrapper)
        assert_failure(result, "errSecIO")
        assert f"the vault {vault} {READ_ONLY} ({why}" in result.stderr, result
        assert "nothing was written" in result.stderr and "commands that only read it still work" in result.hint, result
        assert not any(raw in result.stderr for raw in RAW), result
        assert vault.read_bytes() == before


def test_a_0400_vault_in_a_0500_folder_reads_and_refuses_writes_by_name(kc):
    folder = kc.home / "ro"
    folder.mkdir(mode=0o700)
    vault = folder / "v.kc"
    fill(kc, vault)
    vault.chmod(0o400)
    folder.chmod(0o500)
    try:
        reads_work(kc, vault, AS_USER)
        writes_refused(kc, vault, "you may not write to it", AS_USER)
    finally:
        folder.chmod(0o700)


def test_a_writable_file_in_a_0500_folder_appends_but_a_rewrite_is_refused_by_name(kc):
    folder = kc.home / "ro"
    folder.mkdir(mode=0o700)
    vault = folder / "v.kc"
    fill(kc, vault)
    folder.chmod(0o500)
    try:
        kc.ok(["--vault", vault, "add", "generic", "-s", "s3", "-a", "me", "--password-stdin"], input="x", wrapper=AS_USER)
        before = vault.read_bytes()
        result = kc.run(["--vault", vault, "compact"], wrapper=AS_USER)
        assert_failure(result, "errSecIO")
        assert f"the vault {vault} {READ_ONLY}" in result.stderr, result
        assert vault.read_bytes() == before
        assert not list(folder.glob("*.kc-tmp-*"))
    finally:
        folder.chmod(0o700)


@pytest.fixture
def read_only_mount(kc):
    """A tmpfs holding a filled vault, remounted read-only; unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root): the read-only file system test cannot run here")
    mount = kc.home / "mnt"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(mount)], check=True)
    try:
        vault = mount / "v.kc"
        fill(kc, vault)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        with pytest.raises(OSError):
            (mount / "probe").write_text("x")   # really read-only
        yield vault
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_vault_on_a_read_only_file_system_reads(kc, read_only_mount):
    reads_work(kc, read_only_mount)


def test_a_write_to_a_read_only_file_system_is_refused_by_name(kc, read_only_mount):
    writes_refused(kc, read_only_mount, "its file system is mounted read-only")


def test_a_read_on_a_read_only_file_system_still_takes_the_shared_lock(kc, read_only_mount):
    fd = os.open(read_only_mount, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)   # a writer elsewhere (a read-write mount of the same file system)
        result = kc.run(["--vault", read_only_mount, "--lock-timeout", "0.3", "find", "-s", "s1", "-w"])
        assert_failure(result, "errSecNotAvailable")
        fcntl.flock(fd, fcntl.LOCK_UN)
        assert kc.ok(["--vault", read_only_mount, "find", "-s", "s1", "-w"]).stdout == "s1-secret\n"
    finally:
        os.close(fd)


def test_the_agent_serves_a_read_only_vault_and_relays_the_refusal(kc, read_only_mount):
    vault = read_only_mount
    kc.ok(["--vault", vault, "unlock"])
    try:
        assert kc.ok(["--vault", vault, "find", "-s", "s1", "-w"], unset=("KC_MASTER_PASSWORD_FILE",)).stdout == "s1-secret\n"
        result = kc.run(["--vault", vault, "add", "generic", "-s", "s3", "-a", "me", "--password-stdin"], input="x",
                        unset=("KC_MASTER_PASSWORD_FILE",))
        assert_failure(result, "errSecIO")
        assert f"the vault {vault} {READ_ONLY} (its file system is mounted read-only" in result.stderr, result
    finally:
        kc.run(["--vault", vault, "lock"])
