"""`kc sync` and `kc merge-driver` served by the unlocked agent (Docs/SYNC.md, Docs/AGENT.md): no
master password source, no terminal, real git and a local bare repository; the key never leaves the
agent, and no password or key shows in any process's arguments or environment. Without an unlocked
agent the driver exits 1 (git shows a conflict, %A untouched), and `kc sync --continue` finishes
once the agent is unlocked. Copies beyond the 256 MiB cap are refused with a clear error."""
import os
import re
import shutil
import subprocess
import time

import pytest

from agentsupport import NO_SOURCE, agent_pids, stop_agents, unlock, with_runtime_folder
from kcharness import EXIT_DECODE, EXIT_NOT_MERGED, KC, assert_failure
from kcformat import aead_open, derive_key, header_kdf
from procsampler import Sampler
from test_sync import GIT_ENV, edit_on_both, machine, secret, sync_folder

CAP = 256 << 20


def vault_key(kc: KC) -> bytes:
    """The vault key, unwrapped here from the vault's header (for looking for it in /proc)."""
    data = kc.vault_path.read_bytes()
    ops, memory = header_kdf(data)
    key = aead_open(data[88:136], derive_key(kc.master_password.encode(), data[48:64], ops, memory), data[64:88], data[:88])
    assert key is not None
    return key


def git_by_hand(kc: KC, folder, *args) -> subprocess.CompletedProcess:
    """git run by the user in the sync copy: no master password source, no terminal."""
    env = {**os.environ, **GIT_ENV, "HOME": str(kc.home), "GIT_TERMINAL_PROMPT": "0",
           "XDG_RUNTIME_DIR": kc.env["XDG_RUNTIME_DIR"], "XDG_DATA_HOME": kc.env.get("XDG_DATA_HOME", ""),
           "XDG_STATE_HOME": kc.env.get("XDG_STATE_HOME", ""), "XDG_CONFIG_HOME": kc.env.get("XDG_CONFIG_HOME", "")}
    env = {name: value for name, value in env.items() if value}
    env.pop("KC_MASTER_PASSWORD_FILE", None)
    return subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                          capture_output=True, text=True, env=env, start_new_session=True, stdin=subprocess.DEVNULL, timeout=120)


@pytest.fixture
def pair(kc_bin, tmp_path):
    """A laptop that made the vault and pushed it, a desktop that cloned it, each with an agent
    folder of its own; their agents are ended after the test."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    laptop, desktop = machine(kc_bin, tmp_path, "laptop"), machine(kc_bin, tmp_path, "desktop")
    laptop.init()
    laptop.add_generic("shared", "me", "pw0")
    laptop.ok(["sync", "init", "--remote", remote])
    desktop.ok(["sync", "clone", remote])
    with_runtime_folder(laptop)
    with_runtime_folder(desktop)
    yield laptop, desktop
    stop_agents(laptop)
    stop_agents(desktop)


def test_sync_served_by_the_agent_without_a_password_source(pair):
    laptop, desktop = pair
    unlock(laptop)
    unlock(desktop)
    laptop.add_generic("from-laptop", "me", "item-secret-1")
    desktop.add_generic("from-desktop", "me", "item-secret-2")
    assert "sent: 1 item" in laptop.ok(["sync"], unset=NO_SOURCE).stdout
    key = vault_key(desktop)
    needles = [desktop.master_password.encode(), key, key.hex().encode(), b"item-secret-1", b"item-secret-2"]
    [agent] = agent_pids(desktop)
    process = desktop.popen(["sync"], unset=NO_SOURCE, stdin=subprocess.DEVNULL)
    # kc sync with git and the driver git runs (its descendants), and the agent
    samplers = [Sampler(process.pid, needles), Sampler(agent, needles)]
    out, err = process.communicate(timeout=120)
    for sampler in samplers:
        sampler.stop()
    assert process.returncode == 0, err
    assert "received: 1 added, 0 changed, 0 deleted; sent: 1 item" in out.decode()
    assert any("git" in command for command in samplers[0].commands), "git ran during the sampling"
    assert not any("merge-driver" in command for command in samplers[0].commands), "kc merges the vault file itself"
    for sampler in samplers:
        assert sampler.hits == [], f"secrets seen in {Sampler.PLACES}: {sampler.hits}"
    assert "received: 1 added" in laptop.ok(["sync"], unset=NO_SOURCE).stdout
    for kc in (laptop, desktop):
        assert secret(kc, "from-laptop") == "item-secret-1" and secret(kc, "from-desktop") == "item-secret-2"


def commit_in_the_copy(kc: KC, service: str, password: str):
    """A commit in the machine's sync copy that the remote lacks (written as a third device: its own
    state folder, so the machine's anchor never sees this copy), so that a pull needs a real merge."""
    folder = sync_folder(kc)
    kc.ok(["--vault", folder / "login.kc", "add", "generic", "-s", service, "--password-stdin"], input=password,
          env={"XDG_STATE_HOME": str(kc.home / "other-state")})
    assert git_by_hand(kc, folder, "commit", "-q", "-am", "kc sync").returncode == 0


def test_a_git_pull_by_hand_is_merged_by_the_agent(pair):
    laptop, desktop = pair
    unlock(desktop)
    laptop.add_generic("from-laptop", "me", "pw1")
    laptop.ok(["sync"])
    commit_in_the_copy(desktop, "in-sync-copy", "pw2")
    folder = sync_folder(desktop)
    pulled = git_by_hand(desktop, folder, "pull", "--no-edit", "origin", "main")
    assert pulled.returncode == 0, pulled
    assert len(git_by_hand(desktop, folder, "rev-list", "--parents", "-n", "1", "HEAD").stdout.split()) == 3, "a merge commit"
    assert "received: 2 added" in desktop.ok(["sync"], unset=NO_SOURCE).stdout
    assert secret(desktop, "from-laptop") == "pw1" and secret(desktop, "in-sync-copy") == "pw2"


def test_the_agent_locked_during_a_git_pull_by_hand(pair):
    """The driver finds the agent locked, no password source and no terminal: exit 1, git shows a
    conflict, %A (the copy's file) untouched; `kc sync --continue` completes once unlocked."""
    laptop, desktop = pair
    laptop.add_generic("from-laptop", "me", "pw1")
    laptop.ok(["sync"])
    unlock(desktop)
    desktop.add_generic("from-desktop", "me", "pw2")
    desktop.ok(["sync"], unset=NO_SOURCE)
    laptop.add_generic("later-from-laptop", "me", "pw3")
    laptop.ok(["sync"])
    commit_in_the_copy(desktop, "in-sync-copy", "pw4")
    folder = sync_folder(desktop)
    ours = (folder / "login.kc").read_bytes()
    desktop.ok(["lock"])
    pulled = git_by_hand(desktop, folder, "pull", "--no-edit", "origin", "main")
    assert pulled.returncode != 0 and "CONFLICT" in pulled.stdout + pulled.stderr, pulled
    errors = [line for line in pulled.stderr.splitlines() if line.startswith("kc: error: ")]
    assert len(errors) == 1 and "errSecInteractionNotAllowed" in errors[0] and "agent" in errors[0], pulled.stderr
    assert (folder / "login.kc").read_bytes() == ours, "%A untouched"
    before = desktop.vault_path.read_bytes()
    refused = desktop.run(["sync", "--continue"], unset=NO_SOURCE)   # still locked: nothing to ask
    assert_failure(refused, "errSecInteractionNotAllowed")
    assert desktop.vault_path.read_bytes() == before and (folder / ".git" / "MERGE_HEAD").exists()
    unlock(desktop)
    desktop.ok(["sync", "--continue"], unset=NO_SOURCE)
    assert not (folder / ".git" / "MERGE_HEAD").exists()
    for service, password in (("from-laptop", "pw1"), ("later-from-laptop", "pw3"), ("in-sync-copy", "pw4")):
        assert secret(desktop, service) == password
    laptop.ok(["sync"])
    assert secret(laptop, "in-sync-copy") == "pw4" and secret(laptop, "from-desktop") == "pw2"


@pytest.mark.parametrize("unlocked", [False, True])
def test_a_copy_beyond_the_cap_is_refused(pair, unlocked):
    laptop, desktop = pair
    if unlocked:
        unlock(desktop)
    folder = sync_folder(desktop)
    copy = folder / "login.kc"
    with open(copy, "r+b") as f:
        f.truncate(CAP + 1)   # sparse: no disk used, never read whole
    before = desktop.vault_path.read_bytes()
    result = desktop.run(["sync"], unset=NO_SOURCE if unlocked else ())
    assert_failure(result, "errSecDecode", EXIT_DECODE)
    assert f"{CAP + 1} bytes, larger than the 256 MiB a merge reads" in result.stderr
    assert desktop.vault_path.read_bytes() == before
    # the driver: the same words, exit 1, ours untouched
    theirs = folder / "theirs"
    theirs.write_bytes(before)
    ours = folder / "ours"
    ours.write_bytes(before)
    with open(theirs, "r+b") as f:
        f.truncate(CAP + 1)
    driver = desktop.run(["merge-driver", "O", ours, theirs, "7", "login.kc"], cwd=str(folder),
                         unset=NO_SOURCE if unlocked else ())
    assert driver.returncode == EXIT_NOT_MERGED and "larger than the 256 MiB a merge reads" in driver.stderr, driver
    assert ours.read_bytes() == before


@pytest.mark.parametrize("line", [
    ["--no-such-option", "merge-driver", "O", "A", "B", "7", "login.kc"],
    ["--master-password-fd", "not-a-number", "merge-driver", "O", "A", "B"],
    ["--keychain", "bad/name", "merge-driver", "O", "A", "B"],
    ["merge-driver"],
    ["-q", "merge-driver", "--help-me", "A", "B", "C", "D", "E", "F"],
])
def test_the_driver_exits_0_or_1_whatever_its_command_line(kc_ready, line):
    result = kc_ready.run(line)
    assert result.returncode == EXIT_NOT_MERGED, result
    assert [l for l in result.stderr.splitlines() if l.startswith("kc: error: ")], result.stderr


def test_conflicts_listed_and_resolved_through_the_agent(pair):
    laptop, desktop = pair
    edit_on_both(laptop, desktop)
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    unlock(desktop)
    listed = desktop.ok(["conflicts", "-w"], unset=NO_SOURCE).stdout
    assert "service: shared" in listed and "current password: laptop-edit" in listed and "other password: desktop-edit" in listed
    assert "laptop-edit" not in desktop.ok(["conflicts"], unset=NO_SOURCE).stdout, "secrets only with -w"
    desktop.ok(["conflicts", "resolve", "generic", "-s", "shared", "--keep", "other"], unset=NO_SOURCE)
    assert desktop.ok(["conflicts"], unset=NO_SOURCE).stdout == ""
    assert secret(desktop, "shared") == "desktop-edit"
    desktop.ok(["sync"], unset=NO_SOURCE)
    laptop.ok(["sync"])
    assert secret(laptop, "shared") == "desktop-edit" and laptop.ok(["conflicts"]).stdout == ""


def test_sync_status_through_the_agent_says_what_it_says_with_the_password(pair):
    laptop, desktop = pair
    laptop.add_generic("from-laptop", "me", "pw1")
    laptop.ok(["compact"])   # a compaction marker among the records counted
    laptop.ok(["sync"])
    desktop.add_generic("from-desktop", "me", "pw2")
    assert git_by_hand(desktop, sync_folder(desktop), "fetch", "-q", "origin").returncode == 0
    with_password = desktop.ok(["sync", "status"]).stdout
    # from-desktop (the desktop's device-name record, the host name, was pushed by its clone)
    assert "1 not yet sent" in with_password and "not yet received" in with_password and "0 not yet received" not in with_password
    unlock(desktop)
    assert desktop.ok(["sync", "status"], unset=NO_SOURCE).stdout == with_password


def test_sync_init_through_the_agent(kc_bin, tmp_path):
    remote = tmp_path / "solo.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    solo = with_runtime_folder(machine(kc_bin, tmp_path, "solo"))
    solo.init()
    solo.add_generic("one", "me", "pw1")
    unlock(solo)
    try:
        solo.ok(["sync", "init", "--remote", remote], unset=NO_SOURCE)
        # The device-name record (the host name) the agent wrote once the copy was made went with
        # init's own sync round: nothing is left unsent.
        assert "records: 0 not yet sent" in solo.ok(["sync", "status"], unset=NO_SOURCE).stdout
        other = machine(kc_bin, tmp_path, "other")
        other.ok(["sync", "clone", remote])
        assert secret(other, "one") == "pw1"
    finally:
        stop_agents(solo)


@pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is missing: run make test-deps")
def test_the_agent_s_sync_reports_lost_marks_and_clocks_ahead(pair):
    """What the agent's import found comes back as data and is told as with the password: an item
    that lost its require-password mark, and records stamped two hours ahead (faketime)."""
    laptop, desktop = pair
    laptop.ok(["update", "generic", "-s", "shared", "--set-require-password", "yes"])
    time.sleep(0.01)
    desktop.ok(["update", "generic", "-s", "shared", "--set-label", "desktop"])
    laptop.ok(["add", "generic", "-s", "future", "--password-stdin"], input="f", wrapper=("faketime", "-f", "+2h"))
    laptop.ok(["sync"])
    unlock(desktop)
    received = desktop.ok(["sync"], unset=NO_SOURCE)
    assert "received: 1 added" in received.stdout
    assert "edited on two machines at once" in received.stderr
    assert "kc: warning: 1 item lost its require-password mark" in received.stderr, received.stderr
    assert re.search(r"kc: warning: records from device [0-9a-f]+ are stamped [12] h \d+ min ahead", received.stderr), received.stderr

