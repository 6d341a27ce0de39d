"""Password changes and key rotations across machines (Docs/SYNC.md, "Password changes and key
rotations"): real git, a local bare repository as the remote, one home per machine, each with its
own agent folder."""
import os
import shutil
import subprocess
from pathlib import Path

import pexpect
import pytest

import kcformat
from agentsupport import NO_SOURCE, agent_pids, alive, status, stop_agents, unlock, wait_until, with_runtime_folder
from kcharness import EXIT_AUTH_FAILED, EXIT_INTERACTION, KC, MASTER_PASSWORD, assert_failure
from test_sync import git, machine, remote, services, sync_folder  # noqa: F401 (remote is a fixture)

OLD, NEW = MASTER_PASSWORD, "a new master password: oyster gravel"


@pytest.fixture
def pair(kc_bin, tmp_path, remote):  # noqa: F811
    """A laptop that made the vault and pushed it, and a desktop that cloned it; each with a
    private agent folder, their agents ended after the test."""
    laptop, desktop = machine(kc_bin, tmp_path, "laptop"), machine(kc_bin, tmp_path, "desktop")
    for kc in (laptop, desktop):
        with_runtime_folder(kc)
    laptop.init()
    laptop.add_generic("shared", "me", "pw0")
    laptop.ok(["sync", "init", "--remote", remote])
    desktop.ok(["sync", "clone", remote])
    yield laptop, desktop
    for kc in (laptop, desktop):
        stop_agents(kc)


def use_password(kc: KC, password: str) -> None:
    """Makes `password` the one the home's commands read from its master password file."""
    kc.write_secret_file(kc.password_file, password + "\n")


def new_password_file(kc: KC, password: str = NEW):
    return kc.write_secret_file(kc.home / "new-password", password + "\n")


def served(kc: KC, args) -> str:
    """Runs kc without a master password source or terminal: only an unlocked agent answers."""
    result = kc.run(args, unset=NO_SOURCE)
    assert result.returncode == 0, result
    return result.stdout


def header(kc: KC) -> bytes:
    return kc.vault_path.read_bytes()[:140]


def rotate(kc: KC) -> None:
    """`kc passwd --rotate-key` with the new password NEW, used from then on."""
    kc.ok(["passwd", "--rotate-key", "--new-password-file", new_password_file(kc)])
    use_password(kc, NEW)


def rotate_and_push(kc: KC, service: str, secret: str) -> None:
    """A key rotation (`rotate`), an item added, then a sync."""
    rotate(kc)
    kc.add_generic(service, "me", secret)
    kc.ok(["sync"])


def test_a_password_change_reaches_the_other_machine_and_its_agent_keeps_serving(pair):
    laptop, desktop = pair
    assert desktop.master_password == OLD
    unlock(desktop)
    agent = status(desktop)[1]["pid"]
    laptop.ok(["passwd", "--new-password-file", new_password_file(laptop)])
    use_password(laptop, NEW)
    laptop.ok(["sync"])
    # The desktop still opens its vault with the old password; the sync brings the new header.
    result = desktop.ok(["sync"])
    assert "the master password was changed on another machine" in result.stderr
    assert header(desktop) == header(laptop)
    other = KC(desktop.binary, desktop.home)   # no agent reachable: opens the vault itself
    other.env = dict(desktop.env, XDG_RUNTIME_DIR=str(desktop.home / "elsewhere"))
    (desktop.home / "elsewhere").mkdir(mode=0o700)
    assert_failure(other.run(["find", "-s", "shared", "-w"]), "errSecAuthFailed", EXIT_AUTH_FAILED)
    use_password(other, NEW)
    assert other.ok(["find", "-s", "shared", "-w"]).stdout == "pw0\n"
    # The agent holds the same vault key: it follows the new file and goes on serving.
    assert served(desktop, ["find", "-s", "shared", "-w"]) == "pw0\n"
    other.add_generic("after", "me", "pw1")
    assert served(desktop, ["find", "-s", "after", "-w"]) == "pw1\n"
    assert alive(agent) and status(desktop)[1]["pid"] == agent


def test_a_rotated_key_keeps_every_item_of_both_machines(pair):
    laptop, desktop = pair
    laptop.add_generic("laptop-only", "me", "pw-laptop")
    desktop.add_generic("desktop-only", "me", "pw-desktop")
    unlock(laptop)
    unlock(desktop)
    laptop_agent, desktop_agent = status(laptop)[1]["pid"], status(desktop)[1]["pid"]
    old_key = kcformat.vault_key(laptop.vault_path.read_bytes(), OLD.encode())
    rotate(laptop)
    # The rotated file is of version 3: its header is followed by a rotation proof made with the key it
    # replaced (Docs/FORMAT.md, "Rotation proofs"), which the desktop checks before asking anything.
    rotated = laptop.vault_path.read_bytes()
    assert kcformat.header_version(rotated) == 3 and kcformat.proves_rotation(rotated, [old_key])
    # The laptop's agent held the old key: the rotation locks it (its next request finds the vault
    # under another key).
    assert laptop.run(["find", "-s", "shared", "-w"], unset=NO_SOURCE).returncode == EXIT_INTERACTION
    assert wait_until(lambda: not alive(laptop_agent))
    laptop.ok(["sync"])
    # Without the password set on the laptop, the desktop cannot open the remote's copy: refused
    # cleanly, nothing written.
    before = desktop.vault_path.read_bytes()
    assert_failure(desktop.run(["sync"]), "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert desktop.vault_path.read_bytes() == before
    assert served(desktop, ["find", "-s", "desktop-only", "-w"]) == "pw-desktop\n"
    # With it (the desktop's own password still opens its vault), everything merges.
    result = desktop.ok(["sync", "--new-password-file", new_password_file(desktop)])
    assert "the vault key was replaced on another machine" in result.stderr
    laptop.ok(["sync"])
    use_password(desktop, NEW)
    expected = {"shared": "pw0", "laptop-only": "pw-laptop", "desktop-only": "pw-desktop"}
    assert services(laptop) == expected
    assert services(desktop) == expected
    assert header(desktop) == header(laptop)
    assert wait_until(lambda: not alive(desktop_agent)), "the desktop's agent outlived the key it held"
    # The old password opens neither vault any more.
    use_password(desktop, OLD)
    assert_failure(desktop.run(["find", "-s", "shared"]), "errSecAuthFailed", EXIT_AUTH_FAILED)


def test_a_wrong_password_for_the_rotated_key_changes_nothing(pair):
    laptop, desktop = pair
    rotate(laptop)
    laptop.ok(["sync"])
    desktop.add_generic("desktop-only", "me", "pw-desktop")
    before = desktop.vault_path.read_bytes()
    result = desktop.run(["sync", "--new-password-file", new_password_file(desktop, "not the password")])
    assert_failure(result, "errSecAuthFailed", EXIT_AUTH_FAILED)
    assert desktop.vault_path.read_bytes() == before
    assert not (sync_folder(desktop) / ".git" / "MERGE_HEAD").exists()


def test_concurrent_password_changes_end_with_the_newest_on_both(pair):
    laptop, desktop = pair
    laptop.ok(["passwd", "--new-password-file", new_password_file(laptop, "the laptop's password: quartz ember")])
    use_password(laptop, "the laptop's password: quartz ember")
    desktop.ok(["passwd", "--new-password-file", new_password_file(desktop, "the desktop's password: velvet orbit")])
    use_password(desktop, "the desktop's password: velvet orbit")
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    result = laptop.ok(["sync"])
    assert "the master password was changed on another machine" in result.stderr
    # The desktop's change is the newer one: both vaults now have its header.
    assert header(laptop) == header(desktop)
    assert_failure(laptop.run(["find", "-s", "shared"]), "errSecAuthFailed", EXIT_AUTH_FAILED)
    use_password(laptop, "the desktop's password: velvet orbit")
    assert services(laptop) == services(desktop) == {"shared": "pw0"}


def test_concurrent_key_rotations_keep_every_item(pair):
    laptop, desktop = pair
    laptop.add_generic("laptop-only", "me", "pw-laptop")
    desktop.add_generic("desktop-only", "me", "pw-desktop")
    laptop.ok(["passwd", "--rotate-key", "--new-password-file", new_password_file(laptop, "the laptop's password: quartz ember")])
    use_password(laptop, "the laptop's password: quartz ember")
    desktop.ok(["passwd", "--rotate-key", "--new-password-file", new_password_file(desktop, "the desktop's password: velvet orbit")])
    use_password(desktop, "the desktop's password: velvet orbit")
    laptop.ok(["sync"])
    # The desktop needs the laptop's password: quartz ember for the laptop's key; its own change is newer.
    desktop.ok(["sync", "--new-password-file", new_password_file(desktop, "the laptop's password: quartz ember")])
    laptop.ok(["sync", "--new-password-file", new_password_file(laptop, "the desktop's password: velvet orbit")])
    use_password(laptop, "the desktop's password: velvet orbit")
    expected = {"shared": "pw0", "laptop-only": "pw-laptop", "desktop-only": "pw-desktop"}
    assert services(laptop) == services(desktop) == expected
    assert header(laptop) == header(desktop)


def test_old_commits_stay_readable_with_the_old_password(pair, tmp_path):
    """kc never rewrites git's history: the commit before a password change still opens with the
    password of its time (Docs/SECURITY.md)."""
    laptop, _ = pair
    before = git_show(tmp_path / "remote.git", "main:login.kc")   # the desktop's clone pushed its name last
    rotate(laptop)
    laptop.ok(["sync"])
    assert git_show(tmp_path / "remote.git", "main:login.kc") != before
    old = tmp_path / "old.kc"
    old.write_bytes(before)
    old.chmod(0o600)
    reader = machine(laptop.binary, tmp_path, "reader")
    assert reader.ok(["--vault", str(old), "find", "-s", "shared", "-w"]).stdout == "pw0\n"
    use_password(reader, NEW)
    assert_failure(reader.run(["--vault", str(old), "find", "-s", "shared"]), "errSecAuthFailed", EXIT_AUTH_FAILED)


def git_show(folder, what: str) -> bytes:
    return subprocess.run(["git", "-C", str(folder), "show", what], capture_output=True, check=True).stdout


def purge_recipe() -> str:
    """The shell lines Docs/SECURITY.md gives for removing the old versions of the vault from git."""
    text = (Path(__file__).resolve().parents[2] / "Docs" / "SECURITY.md").read_text()
    section = text[text.index("### Password changes and old copies"):]
    return section.split("```\n", 2)[1]


def test_the_documented_purge_removes_every_old_version_from_git(pair, remote, tmp_path):  # noqa: F811
    """The `git filter-repo` lines of Docs/SECURITY.md, run as written (in this test's sync copy)."""
    assert shutil.which("git-filter-repo"), "git-filter-repo is missing: run make test-deps"
    laptop, desktop = pair
    laptop.add_generic("laptop-only", "me", "pw-laptop")
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    folder = sync_folder(laptop)
    before_rotation = git(folder, "rev-parse", "HEAD").strip()
    rotate(laptop)
    laptop.ok(["sync"])
    desktop.ok(["sync", "--new-password-file", new_password_file(desktop)])
    use_password(desktop, NEW)
    old = git_show(folder, f"{before_rotation}:login.kc")
    assert old[:140] != header(laptop)
    script = purge_recipe().replace("cd ~/.local/share/kc/sync/login", f"cd '{folder}'")
    assert script != purge_recipe(), "the recipe starts in the sync copy"
    result = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
    assert result.returncode == 0, result.stderr
    subprocess.run(["git", "-C", str(remote), "gc", "-q", "--prune=now"], check=True)
    current = git(folder, "rev-parse", "HEAD:login.kc").strip()
    for repository in (folder, remote):
        objects = git(repository, "rev-list", "--objects", "--all").splitlines()
        vaults = {line.split()[0] for line in objects if line.endswith(" login.kc")}
        assert vaults == {current}, f"{repository} keeps an old version of the vault"
    # The laptop goes on syncing; the desktop starts a new sync copy, as the document says.
    laptop.add_generic("after-purge", "me", "pw-after")
    laptop.ok(["sync"])
    shutil.rmtree(sync_folder(desktop))
    desktop.ok(["sync", "clone", remote])
    expected = {"shared": "pw0", "laptop-only": "pw-laptop", "after-purge": "pw-after"}
    assert services(desktop) == expected
    laptop.ok(["sync"])
    assert services(laptop) == expected


def test_a_sync_right_after_a_rotation_here_does_without_the_locked_agent(pair):
    laptop, _ = pair
    unlock(laptop)
    agent = status(laptop)[1]["pid"]
    rotate(laptop)
    # The agent still holds the old key: the sync finds it locked and opens the vault itself.
    laptop.ok(["sync"])
    assert wait_until(lambda: not alive(agent))
    assert services(laptop) == {"shared": "pw0"}


def test_the_password_set_on_another_machine_is_asked_on_the_terminal(pair):
    laptop, desktop = pair
    rotate(laptop)
    laptop.ok(["sync"])
    desktop.add_generic("desktop-only", "me", "pw-desktop")
    child = desktop.spawn(["sync"])   # the desktop's own password from its file, the other one asked
    child.expect_exact("Master password set on another machine: ")
    child.sendline(NEW)
    child.expect_exact("the vault key was replaced on another machine")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    use_password(desktop, NEW)
    assert services(desktop) == {"shared": "pw0", "desktop-only": "pw-desktop"}


def test_a_git_pull_by_hand_after_a_rotation_elsewhere_is_finished_by_sync_continue(pair):
    laptop, desktop = pair
    rotate_and_push(laptop, "laptop-only", "pw-laptop")
    desktop.add_generic("desktop-only", "me", "pw-desktop")
    folder = sync_folder(desktop)
    desktop.ok(["--vault", str(folder / "login.kc"), "--accept-rollback", "add", "generic", "-s", "copy-only", "-a", "me",
                "--password-stdin"], input="pw-copy")
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    git(folder, *identity, "commit", "-qam", "kc sync")
    # The driver, given the desktop's password: velvet orbit, cannot open the laptop's copy: git stops the merge.
    result = subprocess.run(["git", "-C", str(folder), *identity, "pull", "-q", "--no-rebase", "--no-edit"],
                            capture_output=True, text=True, timeout=60,
                            env={**desktop.environment(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"})
    assert result.returncode != 0
    assert "sealed under a vault key this machine does not have" in result.stderr + result.stdout
    assert (folder / ".git" / "MERGE_HEAD").exists()
    desktop.ok(["--accept-rollback", "sync", "--continue", "--new-password-file", new_password_file(desktop)])
    use_password(desktop, NEW)
    laptop.ok(["sync"])
    expected = {"shared": "pw0", "laptop-only": "pw-laptop", "desktop-only": "pw-desktop", "copy-only": "pw-copy"}
    assert services(desktop) == expected
    assert services(laptop) == expected


def test_sync_status_after_a_rotation_elsewhere_says_what_to_do(pair):
    laptop, desktop = pair
    rotate(laptop)
    laptop.ok(["sync"])
    git(sync_folder(desktop), "fetch", "-q", "origin")
    before = desktop.vault_path.read_bytes()
    result = desktop.run(["sync", "status"])
    assert_failure(result, "errSecDecode")
    assert "sealed under a vault key this machine does not have" in result.stderr
    assert "--new-password-file" in result.hint
    assert desktop.vault_path.read_bytes() == before


def test_a_plain_passwd_under_the_retired_key_does_not_undo_a_rotation(pair):
    laptop, desktop = pair
    rotate_and_push(laptop, "after-rotation", "pw-after")
    # Later, the desktop (not synced: still under the rotated-out key) changes its password plainly.
    desktop.ok(["passwd", "--new-password-file", new_password_file(desktop, "the desktop's password: velvet orbit")])
    use_password(desktop, "the desktop's password: velvet orbit")
    result = desktop.ok(["sync", "--new-password-file", new_password_file(desktop)])
    assert "superseded by a key rotation on another machine" in result.stderr
    laptop.ok(["sync"])
    use_password(desktop, NEW)
    assert header(desktop) == header(laptop)
    expected = {"shared": "pw0", "after-rotation": "pw-after"}
    assert services(laptop) == expected
    assert services(desktop) == expected
    # Both files: sealed under the rotated key, their header's change names it; the desktop's change
    # (kept, as every record) names the key the rotation retired.
    data = desktop.vault_path.read_bytes()
    key = kcformat.vault_key(data, NEW.encode())
    changes = [kcformat.parse_payload(plain) for _, plain in kcformat.records(data, NEW.encode())]
    changes = [p for p in changes if p.kind == kcformat.PASSWORD_CHANGE]
    newest_ok = [p for p in changes if p.fields[kcformat.TAG_HEADER] == header(desktop)]
    assert len(changes) == 2 and len(newest_ok) == 1
    assert newest_ok[0].fields[kcformat.TAG_KEY_ID] == kcformat.key_id(key)
    retired = [p for p in changes if p is not newest_ok[0]][0]
    assert retired.fields[kcformat.TAG_KEY_ID] != kcformat.key_id(key)
