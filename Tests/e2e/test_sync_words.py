"""What sync and conflicts say: device names instead of hex ids, 'no conflicts', git's lines as
lines with a hint to create a missing repository, and the device name in sync init's first push."""
import subprocess

from kcharness import EXIT_IO, assert_failure
from test_sync import machine, pair, remote, sync_folder  # noqa: F401  (pytest fixtures)
from test_sync_status import edit_on_both


def named_pair(kc_bin, tmp_path, remote):
    laptop, desktop = machine(kc_bin, tmp_path, "laptop"), machine(kc_bin, tmp_path, "desktop")
    laptop.init()
    laptop.add_generic("shared", "me", "pw0")
    laptop.ok(["sync", "init", "--remote", remote, "--device-name", "laptop"])
    desktop.ok(["sync", "clone", remote, "--device-name", "desktop"])
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    return laptop, desktop


def test_no_conflicts_says_so_on_stderr(pair):
    laptop, _ = pair
    result = laptop.ok(["conflicts"])
    assert result.stdout == "" and result.stderr == "kc: no conflicts\n"


def test_conflicts_name_the_devices_by_their_names(kc_bin, tmp_path, remote):
    laptop, desktop = named_pair(kc_bin, tmp_path, remote)
    edit_on_both(laptop, desktop)
    listed = laptop.ok(["conflicts"]).stdout
    versions = [line for line in listed.splitlines() if line.startswith(("current:", "other:"))]
    assert len(versions) == 2, listed
    assert any(line.startswith("current: written ") and ' by "laptop" (device ' in line for line in versions), listed
    assert any(line.startswith("other: written ") and ' by "desktop" (device ' in line for line in versions), listed


def test_init_to_a_missing_repository_shows_git_lines_and_hints_git_init_bare(kc_bin, tmp_path):
    kc = machine(kc_bin, tmp_path, "solo")
    kc.init()
    before = kc.vault_path.read_bytes()
    missing = tmp_path / "nowhere.git"
    result = kc.run(["sync", "init", "--remote", missing])
    assert_failure(result, "errSecIO", EXIT_IO)
    lines = result.stderr.splitlines()
    git_lines = [line for line in lines if line.startswith("git: ")]
    assert any("does not appear to be a git repository" in line for line in git_lines), result
    assert any("Could not read from remote repository" in line for line in git_lines), result
    assert not any(";" in line for line in git_lines)
    error = [line for line in lines if line.startswith("kc: error: ")][0]
    assert error == "kc: error: git push failed; the vault was left untouched (errSecIO)"
    assert result.hint == f"create the repository first: git init --bare {missing}"
    assert kc.vault_path.read_bytes() == before and not sync_folder(kc).exists()
    subprocess.run(["git", "init", "-q", "--bare", str(missing)], check=True)
    kc.ok(["sync", "init", "--remote", missing])


def test_sync_status_right_after_init_has_nothing_unsent(kc_bin, tmp_path, remote):
    laptop = machine(kc_bin, tmp_path, "laptop")
    laptop.init()
    laptop.add_generic("shared", "me", "pw0")
    laptop.ok(["sync", "init", "--remote", remote, "--device-name", "laptop"])
    status = laptop.ok(["sync", "status"]).stdout
    assert "records: 0 not yet sent, 0 not yet received" in status, status
    assert "last sync: never" not in status, status
    assert '"laptop"' in status
    desktop = machine(kc_bin, tmp_path, "desktop")
    desktop.ok(["sync", "clone", remote])
    assert '"laptop"' in desktop.ok(["sync", "status"]).stdout, "the first push carried the name"
