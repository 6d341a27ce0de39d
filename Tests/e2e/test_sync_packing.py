"""The sync copy's delta search settings (Docs/SYNC.md, `kc sync`): `pack.window` and `pack.depth`, read
with real git, written by `sync init` and `sync clone`, and by `kc sync` in a copy made without them."""
import json
import subprocess

from test_sync import git, machine, pair, remote, sync_folder  # noqa: F401  (pytest fixtures)


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


def objects_size(folder) -> int:
    return sum(p.stat().st_size for p in (folder / ".git" / "objects").rglob("*") if p.is_file())


def test_the_settings_shrink_a_repository_of_compactions(kc_bin, tmp_path, remote):
    """120 syncs of one edit each in a 100-item vault, compacted before every 10th: packed with the copy's
    settings, the repository is far smaller than with git's default window (about 5x here; after
    `git gc --aggressive` it is about the same as with the settings)."""
    kc = machine(kc_bin, tmp_path, "laptop")
    kc.init()
    source = kc.home / "items.json"
    source.write_text(json.dumps([{"class": "generic", "service": f"s{i}", "account": "me", "password": f"p{i}"}
                                  for i in range(100)]))
    kc.ok(["import", "json", str(source)])
    kc.ok(["sync", "init", "--remote", remote])
    for n in range(120):
        if n % 10 == 9:
            kc.ok(["compact"])
        kc.ok(["update", "generic", "-s", f"s{n % 100}", "--password-stdin"], input=f"new{n}")
        kc.ok(["sync"])
    folder = sync_folder(kc)
    git(folder, "-c", "pack.window=10", "-c", "pack.depth=50", "repack", "-adfq")   # git's defaults
    default = objects_size(folder)
    git(folder, "repack", "-adfq")   # the copy's own settings
    configured = objects_size(folder)
    assert configured * 2 < default, (configured, default)
