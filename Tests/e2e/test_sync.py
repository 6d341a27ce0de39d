"""`kc sync init`, `kc sync clone` and `kc sync` (Docs/SYNC.md): real git (2.39 on Debian 12), a bare
repository as the remote, and one home, data, state and config folder per simulated machine, each
with its own device id."""
import socket
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kcharness import EXIT_DUPLICATE_KEYCHAIN, EXIT_IO, EXIT_NO_SUCH_KEYCHAIN, KC, assert_failure
from procsampler import Sampler

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1"}


def machine(kc_bin, tmp_path, name) -> KC:
    kc = KC(kc_bin, tmp_path / name)
    kc.env.update(GIT_ENV)
    return kc


def sync_folder(kc: KC) -> Path:
    return kc.home / "data" / "kc" / "sync" / "login"


def driver_line(kc: KC) -> str:
    """The driver's line kc writes: this kc, and the live vault it merges for (whose agent it asks)."""
    return f"'{os.path.realpath(kc.binary)}' --vault '{kc.vault_path}' merge-driver %O %A %B %L %P"


def git(folder: Path, *args) -> str:
    result = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=60,
                            env={**os.environ, **GIT_ENV, "GIT_TERMINAL_PROMPT": "0"})
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


def services(kc: KC) -> dict:
    """Every item's service with its secret."""
    items = json.loads(kc.ok(["find", "--all", "--json", "-w"]).stdout)
    return {item["service"]: item.get("password") or item.get("secret") for item in items}


def secret(kc: KC, service: str) -> str:
    return kc.ok(["find", "generic", "-s", service, "-w"]).stdout.rstrip("\n")


@pytest.fixture
def remote(tmp_path) -> Path:
    path = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return path


@pytest.fixture
def pair(kc_bin, tmp_path, remote):
    """A laptop that made the vault and pushed it, and a desktop that cloned it."""
    laptop, desktop = machine(kc_bin, tmp_path, "laptop"), machine(kc_bin, tmp_path, "desktop")
    laptop.init()
    laptop.add_generic("shared", "me", "pw0")
    laptop.ok(["sync", "init", "--remote", remote])
    desktop.ok(["sync", "clone", remote])
    return laptop, desktop


def test_init_makes_a_sync_copy_configured_for_the_driver_and_pushes(pair, remote):
    laptop, desktop = pair
    folder = sync_folder(laptop)
    # The device-name record (the host name), written once the copy was made, was pushed by init
    # itself: nothing of the vault is left unsent.
    assert (folder / "login.kc").exists()
    assert "records: 0 not yet sent" in laptop.ok(["sync", "status"]).stdout
    assert "\"" + socket.gethostname() + "\"" in laptop.ok(["sync", "status"]).stdout, "the host name names it"
    assert (folder / ".gitattributes").read_text() == "*.kc merge=kc -text -diff\n"
    driver = git(folder, "config", "merge.kc.driver").strip()
    assert driver == driver_line(laptop)
    assert git(folder, "config", "pull.rebase").strip() == "false"
    log = git(remote, "log", "--format=%s|%an|%ae", "main").splitlines()
    # three commits: the vault, its device name (sent by init's own sync round), then the
    # desktop's device name (sent by its clone's)
    assert log == ["kc sync|kc|kc@localhost.invalid"] * 3, "no identity configured: the neutral one, never the host's name"
    assert os.uname().nodename not in git(remote, "log", "--format=%an %ae %cn %ce %B", "main")
    # the desktop's clone: the same vault, now its live vault, read with the master password
    # (plus its own device-name record, the host name, after what it cloned), which its clone pushed
    cloned = subprocess.run(["git", "-C", str(remote), "show", "main~1:login.kc"], capture_output=True, check=True).stdout
    pushed = subprocess.run(["git", "-C", str(remote), "show", "main:login.kc"], capture_output=True, check=True).stdout
    live = desktop.vault_path.read_bytes()
    assert live.startswith(cloned) and live != cloned
    assert pushed.startswith(cloned) and pushed != cloned   # the remote has the name record too
    assert secret(desktop, "shared") == "pw0"
    assert (sync_folder(desktop) / ".git").is_dir()


def test_offline_adds_on_both_machines_reach_both(pair):
    laptop, desktop = pair
    laptop.add_generic("from-laptop", "me", "pw1")
    desktop.add_generic("from-desktop", "me", "pw2")
    first = laptop.ok(["sync"])
    assert "sent: 1 item" in first.stdout
    second = desktop.ok(["sync"])
    assert "received: 1 added, 0 changed, 0 deleted; sent: 1 item" in second.stdout
    third = laptop.ok(["sync"])
    assert "received: 1 added" in third.stdout
    for kc in (laptop, desktop):
        assert secret(kc, "from-laptop") == "pw1" and secret(kc, "from-desktop") == "pw2" and secret(kc, "shared") == "pw0"
    # a sync with nothing new changes nothing
    assert "received: 0 added, 0 changed, 0 deleted; sent: 0 items" in desktop.ok(["sync"]).stdout


def edit_on_both(laptop: KC, desktop: KC):
    """The item "shared" edited on both machines, the laptop's edit the later one; the desktop synced."""
    desktop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="desktop-edit")
    time.sleep(0.01)
    laptop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="laptop-edit")   # later: wins
    desktop.ok(["sync"])


def test_the_same_item_edited_on_both_gives_one_winner_and_the_loser_in_history(pair):
    laptop, desktop = pair
    edit_on_both(laptop, desktop)
    result = laptop.ok(["sync"])
    assert "received: 0 added, 0 changed" in result.stdout, "the laptop's own edit is the later one"
    assert "edited on two machines at once" in result.stderr
    assert "received: 0 added, 1 changed" in desktop.ok(["sync"]).stdout
    for kc in (laptop, desktop):
        assert secret(kc, "shared") == "laptop-edit"
        history = kc.ok(["history", "generic", "-s", "shared", "-w"]).stdout
        assert "desktop-edit" in history and "laptop-edit" in history and "pw0" in history


@pytest.mark.parametrize("delete_first", [True, False])
def test_delete_against_a_later_edit(pair, delete_first):
    laptop, desktop = pair
    if delete_first:
        laptop.ok(["delete", "generic", "-s", "shared"])
        time.sleep(0.01)
        desktop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="edited-later")
    else:
        desktop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="edited-earlier")
        time.sleep(0.01)
        laptop.ok(["delete", "generic", "-s", "shared"])
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    for kc in (laptop, desktop):
        if delete_first:
            assert secret(kc, "shared") == "edited-later"
        else:
            assert kc.run(["find", "generic", "-s", "shared"]).returncode != 0


@pytest.mark.parametrize("moment", ["after the fetch", "during the push"])
def test_a_rejected_push_is_merged_and_pushed_again(pair, kc_bin, tmp_path, remote, moment):
    """The laptop pushes between the desktop's fetch and push (its push is then "[rejected] (fetch
    first)"), or while the desktop's push is under way (the remote's ref lock refuses it: "cannot lock
    ref"): the desktop fetches, merges and pushes again. kc runs no hook of the sync copy, so the
    laptop's `kc sync` is run once in between by a `git` first on the desktop's PATH, right after
    `git fetch`, or by the remote's pre-receive hook."""
    laptop, desktop = pair
    laptop.add_generic("from-laptop", "me", "pw1")
    laptop.ok(["sync"])                                  # the desktop's fetch will bring it
    laptop.add_generic("from-laptop-later", "me", "pw3")  # pushed by the laptop in between
    desktop.add_generic("from-desktop", "me", "pw2")
    marker = tmp_path / "raced"
    env = " ".join(f"{k}='{v}'" for k, v in laptop.environment().items())
    race = (f"race() {{ [ -e '{marker}' ] && return; touch '{marker}'; "
            f"env -i {env} '{kc_bin}' sync >/dev/null 2>&1 || exit 1; }}\n")
    if moment == "after the fetch":
        folder = tmp_path / "bin"
        folder.mkdir()
        (folder / "git").write_text(f"#!/bin/sh\n{race}'{shutil.which('git')}' \"$@\"; status=$?\n"
                                    "case \" $* \" in *' fetch '*) race;; esac\nexit $status\n")
        (folder / "git").chmod(0o700)
        run_env = {"PATH": f"{folder}:{desktop.env['PATH']}"}
    else:
        hook = remote / "hooks" / "pre-receive"
        hook.write_text(f"#!/bin/sh\n{race}race\nexit 0\n")
        hook.chmod(0o700)
        run_env = {}
    result = desktop.ok(["sync"], env=run_env)
    assert marker.exists(), "the laptop pushed in between"
    assert "received: 2 added, 0 changed, 0 deleted; sent: 1 item" in result.stdout
    (remote / "hooks" / "pre-receive").unlink(missing_ok=True)
    laptop.ok(["sync"])
    for kc in (laptop, desktop):
        assert secret(kc, "from-laptop") == "pw1" and secret(kc, "from-desktop") == "pw2"
        assert secret(kc, "from-laptop-later") == "pw3"


def test_an_unreachable_remote_is_errsecio_and_the_vault_untouched(pair, remote, tmp_path):
    laptop, _ = pair
    laptop.add_generic("offline", "me", "pw")
    before = laptop.vault_path.read_bytes()
    remote.rename(tmp_path / "gone.git")
    result = laptop.run(["sync"])
    assert_failure(result, "errSecIO", EXIT_IO)
    assert "git fetch failed" in result.stderr and "gone" not in result.stderr
    assert "remote.git" in result.stderr, "git's own message names the remote"
    assert laptop.vault_path.read_bytes() == before


def test_sync_without_a_sync_copy_and_clone_over_another_vault_are_refused(kc_bin, tmp_path, remote, pair):
    other = machine(kc_bin, tmp_path, "other")
    other.init()
    assert_failure(other.run(["sync"]), "errSecNoSuchKeychain", EXIT_NO_SUCH_KEYCHAIN)
    before = other.vault_path.read_bytes()
    assert_failure(other.run(["sync", "clone", remote]), "errSecDuplicateKeychain", EXIT_DUPLICATE_KEYCHAIN)
    assert other.vault_path.read_bytes() == before


def test_clone_onto_the_same_vault_merges(pair, remote, kc_bin, tmp_path):
    laptop, desktop = pair
    # a third machine that already holds a copy of this vault (copied by hand) with an item of its own
    third = machine(kc_bin, tmp_path, "third")
    third.vault_path.parent.mkdir(parents=True)
    third.vault_path.write_bytes(laptop.vault_path.read_bytes())
    third.vault_path.chmod(0o600)
    third.add_generic("from-third", "me", "pw3")
    third.ok(["sync", "clone", remote])
    laptop.ok(["sync"])
    assert secret(laptop, "from-third") == "pw3"


def test_no_secret_reaches_git_s_arguments_or_environment(pair):
    laptop, desktop = pair
    laptop.add_generic("from-laptop", "me", "item-secret-1")
    desktop.add_generic("from-desktop", "me", "item-secret-2")
    laptop.ok(["sync"])
    process = desktop.popen(["sync"], stdin=subprocess.DEVNULL)
    sampler = Sampler(process.pid, [desktop.master_password.encode(), b"item-secret-1", b"item-secret-2"])
    out, err = process.communicate(timeout=120)
    sampler.stop()
    assert process.returncode == 0, err
    assert any("git" in command for command in sampler.commands), "git ran during the sampling"
    assert not any("merge-driver" in command for command in sampler.commands), "kc merges the vault file itself"
    assert sampler.hits == [], f"secrets seen in {Sampler.PLACES}: {sampler.hits}"
    assert secret(desktop, "from-laptop") == "item-secret-1"


def test_init_to_an_unreachable_remote_fails_cleanly_and_can_be_run_again(kc_bin, tmp_path, remote):
    kc = machine(kc_bin, tmp_path, "solo")
    kc.init()
    kc.add_generic("one", "me", "pw")
    before = kc.vault_path.read_bytes()
    result = kc.run(["sync", "init", "--remote", tmp_path / "nowhere.git"])
    assert_failure(result, "errSecIO", EXIT_IO)
    assert "does not appear to be a git repository" in result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("kc: error: ")]) == 1
    assert not sync_folder(kc).exists() and kc.vault_path.read_bytes() == before
    kc.ok(["sync", "init", "--remote", remote])
    assert_failure(kc.run(["sync", "init", "--remote", remote]), "errSecDuplicateKeychain", EXIT_DUPLICATE_KEYCHAIN)
    # git ran under umask 077: nothing in the sync copy is readable by others
    for path in [sync_folder(kc), *sync_folder(kc).rglob("*")]:
        assert path.is_symlink() or path.stat().st_mode & 0o077 == 0, path


def test_a_stale_driver_in_the_config_does_not_matter(pair):
    laptop, desktop = pair
    git(sync_folder(desktop), "config", "merge.kc.driver", "false %A")   # what a moved kc would leave
    laptop.add_generic("from-laptop", "me", "pw1")
    desktop.add_generic("from-desktop", "me", "pw2")
    laptop.ok(["sync"])
    assert "received: 1 added" in desktop.ok(["sync"]).stdout
    assert secret(desktop, "from-laptop") == "pw1"


def test_continue_finishes_a_merge_git_stopped(pair):
    """A `git pull` by hand in the desktop's sync copy, without any master-password source for the
    driver: git stops with a conflict; `kc sync` refuses until `kc sync --continue` finishes it."""
    laptop, desktop = pair
    folder = sync_folder(desktop)
    laptop.add_generic("from-laptop", "me", "pw1")
    laptop.ok(["sync"])
    # written as a third device (its own state folder: the desktop's anchor must not see this copy)
    desktop.ok(["--vault", folder / "login.kc", "add", "generic", "-s", "in-sync-copy", "--password-stdin"], input="pw2",
               env={"XDG_STATE_HOME": str(desktop.home / "other-state")})
    git(folder, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-am", "kc sync")
    env = {**os.environ, **GIT_ENV, "HOME": str(desktop.home), "GIT_TERMINAL_PROMPT": "0"}
    env.pop("KC_MASTER_PASSWORD_FILE", None)
    pulled = subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                             "pull", "--no-edit", "origin", "main"], capture_output=True, text=True, env=env,
                            start_new_session=True, stdin=subprocess.DEVNULL)
    assert pulled.returncode != 0 and "CONFLICT" in pulled.stdout + pulled.stderr
    before = desktop.vault_path.read_bytes()
    refused = desktop.run(["sync"])
    assert_failure(refused, "errSecParam")
    assert "--continue" in refused.stderr and desktop.vault_path.read_bytes() == before
    desktop.ok(["sync", "--continue"])
    assert not (folder / ".git" / "MERGE_HEAD").exists()
    assert secret(desktop, "from-laptop") == "pw1" and secret(desktop, "in-sync-copy") == "pw2"
    laptop.ok(["sync"])
    assert secret(laptop, "in-sync-copy") == "pw2"


def test_a_remote_reset_to_an_older_commit_is_reported_and_repaired(pair, remote):
    laptop, desktop = pair
    old = git(remote, "rev-parse", "main").strip()
    laptop.add_generic("later", "me", "pw1")
    laptop.ok(["sync"])
    git(remote, "update-ref", "refs/heads/main", old)   # the host (or an attacker) rolls the branch back
    result = laptop.ok(["sync"])
    assert "the remote was missing records of device" in result.stderr
    assert git(remote, "rev-parse", "main").strip() != old
    assert "received: 1 added" in desktop.ok(["sync"]).stdout
    assert secret(desktop, "later") == "pw1"
    assert "missing" not in laptop.ok(["sync"]).stderr, "reported once"


def test_a_rotated_key_is_carried_to_the_remote(pair, tmp_path):
    """`kc passwd --rotate-key` on one machine: the sync copy, sealed under the old key, opens with the
    earlier key the vault keeps; the remote's copy is then sealed under the new key and opens with the
    new password only (test_sync_keys.py follows it to the other machine)."""
    laptop, _ = pair
    new = KC.write_secret_file(tmp_path / "new-password", "a new master password: oyster gravel\n")
    laptop.ok(["passwd", "--rotate-key", "--new-password-file", new])
    laptop.write_secret_file(laptop.password_file, "a new master password: oyster gravel\n")
    laptop.ok(["sync"])
    copy = tmp_path / "remote-copy.kc"
    copy.write_bytes(subprocess.run(["git", "-C", str(sync_folder(laptop)), "show", "origin/main:login.kc"],
                                    capture_output=True, check=True).stdout)
    copy.chmod(0o600)
    assert laptop.ok(["--vault", str(copy), "find", "-s", "shared", "-w"]).stdout == "pw0\n"
    laptop.write_secret_file(laptop.password_file, laptop.master_password + "\n")
    assert_failure(laptop.run(["--vault", str(copy), "find", "-s", "shared"]), "errSecAuthFailed")


def test_init_repair_writes_the_driver_again(pair):
    laptop, _ = pair
    folder = sync_folder(laptop)
    git(folder, "config", "merge.kc.driver", "/old/place/kc merge-driver %O %A %B %L %P")
    git(folder, "config", "pull.rebase", "true")
    laptop.ok(["sync", "init", "--repair"], unset=("KC_MASTER_PASSWORD_FILE",))   # no password needed
    assert git(folder, "config", "merge.kc.driver").strip() == driver_line(laptop)
    assert git(folder, "config", "pull.rebase").strip() == "false"
