"""`kc init` (and `kc keychain create`) where no vault can be made: a 0500 folder and a real
read-only file system (a tmpfs mounted read-only). Worded as a write to a read-only vault is
(`... is read-only (...); nothing was written` with a hint), never EACCES or EROFS raw, exit 220
(errSecIO), refused before the master password is read, and nothing is left behind."""
from __future__ import annotations

import os
import subprocess

import pytest

from kcharness import FAST_KDF, assert_failure
from test_vault_readonly import AS_USER, RAW


def refused(result, folder, why: str) -> None:
    assert_failure(result, "errSecIO")
    assert f"{folder} is read-only ({why}" in result.stderr and "nothing was written" in result.stderr, result
    assert result.hint and "--vault FILE" in result.hint, result
    assert not any(raw in result.stderr for raw in RAW), result
    assert "strength:" not in result.stderr, "refused before the master password is read"


@pytest.mark.parametrize("below", ["v.kc", "sub/dir/v.kc"])
def test_init_in_a_0500_folder_is_refused_by_name(kc, below):
    folder = kc.home / "ro"
    folder.mkdir(mode=0o500)
    try:
        result = kc.run(["--vault", folder / below, "init", *FAST_KDF], wrapper=AS_USER)
        refused(result, folder, "you may not create files in it")
        assert f"chmod u+w {folder}" in result.hint, result
        assert os.listdir(folder) == []
    finally:
        folder.chmod(0o700)


def test_init_of_the_default_vault_under_a_0500_data_folder(kc):
    data = kc.home / "data"
    data.mkdir(mode=0o500)
    try:
        refused(kc.run(["init", *FAST_KDF], wrapper=AS_USER), data, "you may not create files in it")
        refused(kc.run(["keychain", "create", "work", *FAST_KDF], wrapper=AS_USER), data, "you may not create files in it")
        assert os.listdir(data) == []
    finally:
        data.chmod(0o700)


@pytest.fixture
def read_only_tmpfs(kc):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root): the read-only file system test cannot run here")
    mount = kc.home / "mnt"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700,ro", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize("below", ["v.kc", "sub/v.kc"])
def test_init_on_a_read_only_file_system_is_refused_by_name(kc, read_only_tmpfs, below):
    result = kc.run(["--vault", read_only_tmpfs / below, "init", *FAST_KDF])
    refused(result, read_only_tmpfs, "its file system is mounted read-only")
    assert "remount it read-write" in result.hint, result
    assert os.listdir(read_only_tmpfs) == []


def test_init_in_a_writable_folder_still_works(kc):
    folder = kc.home / "rw"
    folder.mkdir(mode=0o700)
    kc.ok(["--vault", folder / "v.kc", "init", *FAST_KDF], wrapper=AS_USER)
    assert (folder / "v.kc").exists()
