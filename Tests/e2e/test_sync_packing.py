"""The sync copy's delta search settings (Docs/SYNC.md, `kc sync`): `pack.window` and `pack.depth`, read
with real git, written by `sync init` and `sync clone`, and by `kc sync` in a copy made without them."""
import subprocess

from test_sync import git, pair, remote, sync_folder  # noqa: F401  (pytest fixtures)


def setting(folder, key: str) -> int:
    return int(git(folder, "config", "--get", key).strip())


def test_init_and_clone_set_a_wide_delta_window(pair):
    for kc in pair:
        folder = sync_folder(kc)
        assert setting(folder, "pack.window") >= 20
        assert setting(folder, "pack.depth") >= 50


def test_sync_sets_them_in_a_copy_made_without_them_and_keeps_a_larger_value(pair):
    laptop, desktop = pair
    folder = sync_folder(laptop)
    git(folder, "config", "--unset", "pack.window")
    git(folder, "config", "pack.depth", "7")
    missing = subprocess.run(["git", "-C", str(folder), "config", "--get", "pack.window"], capture_output=True)
    assert missing.stdout == b"", "git config holds no pack.window"
    laptop.ok(["sync"])
    assert setting(folder, "pack.window") >= 20
    assert setting(folder, "pack.depth") >= 50
    git(folder, "config", "pack.window", "300")
    laptop.ok(["sync"])
    assert setting(folder, "pack.window") == 300, "a user's larger window is kept"
