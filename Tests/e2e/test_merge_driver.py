"""kc as git's merge driver (Docs/SYNC.md): real git (2.39 on Debian 12), a bare repository as the
remote, two clones each edited by its own machine (its own home, state folder and device id), and
`git merge` running `kc merge-driver %O %A %B %L %P`. The driver exits 0 or 1 only and leaves %A
untouched unless it merged."""
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentsupport import NO_SOURCE, stop_agents, with_runtime_folder
from kcharness import EXIT_NOT_MERGED, ERROR_LINE, KC

VAULT = "login.kc"


def git(machine: KC, *args, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    """Real git in `cwd` with the machine's environment (its KC_MASTER_PASSWORD_FILE reaches the driver)."""
    env = machine.environment({
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": "kc test", "GIT_AUTHOR_EMAIL": "kc@example.invalid",
        "GIT_COMMITTER_NAME": "kc test", "GIT_COMMITTER_EMAIL": "kc@example.invalid",
    })
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                            start_new_session=True)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def clone(machine: KC, remote: Path, folder: Path) -> Path:
    git(machine, "clone", "-q", str(remote), str(folder), cwd=remote.parent)
    git(machine, "config", "merge.kc.name", "kc vault merge", cwd=folder)
    git(machine, "config", "merge.kc.driver", f"{machine.binary} merge-driver %O %A %B %L %P", cwd=folder)
    git(machine, "config", "pull.rebase", "false", cwd=folder)
    return folder


def services(machine: KC, vault: Path) -> set:
    found = json.loads(machine.ok(["--vault", vault, "find", "--all", "--json"]).stdout)
    return {item.get("service") for item in found}


@pytest.fixture
def machines(kc_bin, tmp_path):
    """Two machines with clones of one remote holding a vault with one item."""
    laptop, desktop = KC(kc_bin, tmp_path / "laptop"), KC(kc_bin, tmp_path / "desktop")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    a = clone(laptop, remote, tmp_path / "laptop-sync")
    laptop.ok(["--vault", a / VAULT, "init", "--kdf-ops", "1", "--kdf-memory", "8K"])
    laptop.ok(["--vault", a / VAULT, "add", "generic", "-s", "shared", "-a", "me", "--password-stdin"], input="pw0")
    (a / ".gitattributes").write_text("*.kc merge=kc -text -diff\n")
    git(laptop, "add", ".", cwd=a)
    git(laptop, "commit", "-q", "-m", "kc sync", cwd=a)
    git(laptop, "push", "-q", "origin", "main", cwd=a)
    b = clone(desktop, remote, tmp_path / "desktop-sync")
    return laptop, a, desktop, b


def diverge(laptop, a, desktop, b):
    """Each machine adds an item to its clone and commits; the laptop pushes first."""
    laptop.ok(["--vault", a / VAULT, "add", "generic", "-s", "from-laptop", "--password-stdin"], input="pw1")
    desktop.ok(["--vault", b / VAULT, "add", "generic", "-s", "from-desktop", "--password-stdin"], input="pw2")
    for machine, folder in ((laptop, a), (desktop, b)):
        git(machine, "commit", "-q", "-am", "kc sync", cwd=folder)
    git(laptop, "push", "-q", "origin", "main", cwd=a)


def test_git_merge_runs_the_driver_and_keeps_both_machines_items(machines):
    laptop, a, desktop, b = machines
    diverge(laptop, a, desktop, b)
    before = (b / VAULT).read_bytes()
    git(desktop, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=b)
    merged = (b / VAULT).read_bytes()
    assert merged.startswith(before) and len(merged) > len(before), "the desktop's bytes kept, the laptop's record appended"
    assert services(desktop, b / VAULT) == {"shared", "from-laptop", "from-desktop"}
    assert git(desktop, "status", "--porcelain", cwd=b).stdout == ""
    # Back to the laptop: a fast-forward, then both clones hold the same file.
    git(desktop, "push", "-q", "origin", "main", cwd=b)
    git(laptop, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=a)
    assert (a / VAULT).read_bytes() == merged
    assert services(laptop, a / VAULT) == {"shared", "from-laptop", "from-desktop"}


@pytest.mark.parametrize("delete_first", [True, False])
def test_the_later_of_a_delete_and_an_edit_wins_on_both_machines(machines, delete_first):
    laptop, a, desktop, b = machines
    steps = [lambda: laptop.ok(["--vault", a / VAULT, "delete", "generic", "-s", "shared"]),
             lambda: desktop.ok(["--vault", b / VAULT, "update", "generic", "-s", "shared", "--set-label", "edited"])]
    for step in steps if delete_first else reversed(steps):
        step()
        time.sleep(0.01)   # the later write's clock is later on the other machine too
    for machine, folder in ((laptop, a), (desktop, b)):
        git(machine, "commit", "-q", "-am", "kc sync", cwd=folder)
    git(laptop, "push", "-q", "origin", "main", cwd=a)
    git(desktop, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=b)
    git(desktop, "push", "-q", "origin", "main", cwd=b)
    git(laptop, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=a)
    expected = {"shared"} if delete_first else set()
    for machine, folder in ((laptop, a), (desktop, b)):
        found = json.loads(machine.run(["--vault", folder / VAULT, "find", "--all", "--json"]).stdout or "[]")
        assert {item.get("service") for item in found} == expected, (machine.home, found)


def test_concurrent_edits_merge_with_a_notice_and_the_later_wins(machines):
    laptop, a, desktop, b = machines
    for machine, folder, label in ((laptop, a, "laptop"), (desktop, b, "desktop")):
        machine.ok(["--vault", folder / VAULT, "update", "generic", "-s", "shared", "--set-label", label])
        git(machine, "commit", "-q", "-am", "kc sync", cwd=folder)
        time.sleep(0.01)
    git(laptop, "push", "-q", "origin", "main", cwd=a)
    result = git(desktop, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=b)
    assert "1 item was edited on two machines at once" in result.stderr, result.stderr
    found = json.loads(desktop.ok(["--vault", b / VAULT, "find", "--all", "--json"]).stdout)
    assert [item.get("label") for item in found] == ["desktop"]
    history = desktop.ok(["--vault", b / VAULT, "history", "generic", "-s", "shared"]).stdout
    assert "laptop" in history and "desktop" in history, history


def test_a_merge_that_unmarks_an_item_says_so(machines):
    """The laptop marks the item; the desktop, not knowing, edits it later: the later, unmarked
    version wins, and the driver warns that the item lost its require-password mark."""
    laptop, a, desktop, b = machines
    laptop.ok(["--vault", a / VAULT, "update", "generic", "-s", "shared", "--set-require-password", "yes"])
    time.sleep(0.01)
    desktop.ok(["--vault", b / VAULT, "update", "generic", "-s", "shared", "--set-label", "desktop"])
    for machine, folder in ((laptop, a), (desktop, b)):
        git(machine, "commit", "-q", "-am", "kc sync", cwd=folder)
    git(laptop, "push", "-q", "origin", "main", cwd=a)
    result = git(desktop, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=b)
    assert "kc: warning: 1 item lost its require-password mark" in result.stderr, result.stderr
    found = json.loads(desktop.ok(["--vault", b / VAULT, "find", "--all", "--json"]).stdout)
    assert [item.get("requirePassword") for item in found] == [None]


def test_a_damaged_side_is_a_conflict_with_ours_untouched(machines):
    laptop, a, desktop, b = machines
    diverge(laptop, a, desktop, b)
    git(laptop, "fetch", "-q", cwd=a)
    # The laptop's next commit damages a record (as a bad disk or a hostile remote might).
    damaged = bytearray((a / VAULT).read_bytes())
    damaged[-30] ^= 0x01
    (a / VAULT).write_bytes(bytes(damaged))
    git(laptop, "commit", "-q", "-am", "damaged", cwd=a)
    git(laptop, "push", "-q", "-f", "origin", "main", cwd=a)
    ours = (b / VAULT).read_bytes()
    result = git(desktop, "pull", "--no-rebase", "--no-edit", "origin", "main", cwd=b, check=False)
    assert result.returncode != 0 and "CONFLICT" in result.stdout, result
    assert (b / VAULT).read_bytes() == ours
    assert [line for line in result.stderr.splitlines() if line.startswith("kc: error: ")], result.stderr
    assert git(desktop, "cat-file", "-e", f":3:{VAULT}", cwd=b).returncode == 0, "their version stays readable for a later merge"


def run_driver(machine: KC, folder: Path, ancestor, ours, theirs, **kwargs):
    return machine.run(["merge-driver", ancestor, ours, theirs, "7", VAULT], cwd=str(folder), **kwargs)


def assert_not_merged(result, ours: Path, before: bytes, error: str):
    assert result.returncode == EXIT_NOT_MERGED, result
    errors = [line for line in result.stderr.splitlines() if line.startswith("kc: error: ")]
    assert len(errors) == 1 and ERROR_LINE.match(errors[0]) and error in errors[0], result
    assert ours.read_bytes() == before


@pytest.fixture
def copies(machines, tmp_path):
    """git's three temporary files, as it hands them to the driver: ancestor, ours, theirs."""
    laptop, a, desktop, b = machines
    ancestor = (b / VAULT).read_bytes()
    diverge(laptop, a, desktop, b)
    folder = tmp_path / "merge"
    folder.mkdir(mode=0o700)
    for name, data in (("O", ancestor), ("A", (b / VAULT).read_bytes()), ("B", (a / VAULT).read_bytes())):
        (folder / name).write_bytes(data)
        os.chmod(folder / name, 0o600)
    return desktop, folder


def test_driver_refusals_exit_1_and_leave_ours(copies, kc_bin, tmp_path):
    desktop, folder = copies
    ours = folder / "A"
    before = ours.read_bytes()
    damaged = folder / "damaged"
    damaged.write_bytes(before[:-40] + bytes(b ^ 0xFF for b in before[-40:]))
    assert_not_merged(run_driver(desktop, folder, "O", "A", "damaged"), ours, before, "does not read with this vault's key")
    assert_not_merged(run_driver(desktop, folder, "O", "A", "B", unset=("KC_MASTER_PASSWORD_FILE",)),
                      ours, before, "errSecInteractionNotAllowed")
    wrong = KC.write_secret_file(tmp_path / "wrong", "not the password\n")
    assert_not_merged(run_driver(desktop, folder, "O", "A", "B", env={"KC_MASTER_PASSWORD_FILE": str(wrong)}),
                      ours, before, "errSecAuthFailed")
    other = KC(kc_bin, tmp_path / "other")
    other.init()
    shutil.copyfile(other.vault_path, folder / "other")
    assert_not_merged(run_driver(desktop, folder, "O", "A", "other"), ours, before, "two different vaults")
    assert_not_merged(run_driver(desktop, folder, "O", "A", "missing"), ours, before, "could not read")
    # And the merge itself, for contrast: 0, with the laptop's item in; the machine's state folder
    # (device id, rollback anchors, known vault paths) and its live vault untouched.
    desktop.init()
    state = desktop.home / "state"
    before_state = snapshot(state)
    live = desktop.vault_path.read_bytes()
    assert run_driver(desktop, folder, "O", "A", "B").returncode == 0
    assert snapshot(state) == before_state and desktop.vault_path.read_bytes() == live
    assert services(desktop, ours) == {"shared", "from-laptop", "from-desktop"}


def test_a_copy_that_is_not_a_regular_file_exits_1_unread(copies):
    """The size cap holds for every kind of input (security review I1): a device that never ends
    (/dev/zero as THEIRS or OURS) and a FIFO nobody writes to are refused at once, exit 1 with one
    error line, never read without bound (that was an abort, exit 134) nor waited on."""
    desktop, folder = copies
    ours = folder / "A"
    before = ours.read_bytes()
    fifo = folder / "fifo"
    os.mkfifo(fifo, 0o600)
    for theirs in ("/dev/zero", "fifo"):
        result = run_driver(desktop, folder, "O", "A", theirs, timeout=30)
        assert_not_merged(result, ours, before, "not a regular file")
    result = run_driver(desktop, folder, "O", "/dev/zero", "B", timeout=30)
    assert result.returncode == EXIT_NOT_MERGED and "not a regular file" in result.stderr, result


def test_a_malformed_driver_command_line_exits_1_and_leaves_ours(copies):
    """A driver line configured wrongly (an argument missing, one too many) is a usage error, and
    still exits 1 as documented, with ours untouched."""
    desktop, folder = copies
    ours = folder / "A"
    before = ours.read_bytes()
    for args in (["O", "A"], ["O", "A", "B", "7", VAULT, "extra"]):
        assert_not_merged(desktop.run(["merge-driver", *args], cwd=str(folder)), ours, before, "errSecParam")


def snapshot(folder: Path) -> dict:
    """Every file under `folder`: its bytes and modification time."""
    return {str(p): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file()}


def test_fuzzed_copies_give_0_or_1_and_ours_untouched_on_failure(copies):
    fuzz(*copies)


def test_fuzzed_copies_merged_by_the_unlocked_agent(copies):
    """The same, every merge done by the vault's agent (no password source): it answers every
    random or damaged copy as data and stays unlocked."""
    desktop, folder = copies
    desktop.vault_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(folder / "A", desktop.vault_path)
    os.chmod(desktop.vault_path, 0o600)
    with_runtime_folder(desktop)
    desktop.ok(["unlock"])
    try:
        fuzz(desktop, folder, unset=NO_SOURCE)
        assert desktop.run(["status"], unset=NO_SOURCE).returncode == 0, "the agent is still unlocked"
    finally:
        stop_agents(desktop)


def fuzz(desktop: KC, folder: Path, **driver_options):
    """Random and damaged O/A/B: only 0 or 1, ours untouched on 1, one error line."""
    seed = int(os.environ.get("KC_FUZZ_SEED") or time.time_ns() % 2**32)
    print(f"merge-driver fuzz seed {seed} (replay with KC_FUZZ_SEED={seed})", file=sys.stderr)
    rng = random.Random(seed)
    pristine = {name: (folder / name).read_bytes() for name in "OAB"}
    counts = {0: 0, EXIT_NOT_MERGED: 0}
    for case in range(int(os.environ.get("KC_FUZZ_CASES", "40"))):
        files = {name: bytearray(rng.choice(list(pristine.values()))) if rng.random() < 0.2 else bytearray(data)
                 for name, data in pristine.items()}
        for name in rng.sample("OAB", rng.randint(1, 3)):
            data = files[name]
            action = rng.randrange(5)
            if action == 0 and data:
                for _ in range(rng.randint(1, 8)):
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            elif action == 1:
                del data[rng.randrange(len(data) + 1):]
            elif action == 2:
                data[:] = rng.randbytes(rng.randrange(400))
            elif action == 3:
                data[:] = data + rng.randbytes(rng.randrange(1, 200))
            else:
                data[:] = data[:140] + data[140:][::-1]
        for name, data in files.items():
            (folder / name).write_bytes(bytes(data))
        result = run_driver(desktop, folder, "O", "A", "B", **driver_options)
        assert result.returncode in counts, (seed, case, result)
        counts[result.returncode] += 1
        if result.returncode == EXIT_NOT_MERGED:
            assert (folder / "A").read_bytes() == bytes(files["A"]), (seed, case)
            errors = [line for line in result.stderr.splitlines() if line.startswith("kc: error: ")]
            assert len(errors) == 1 and ERROR_LINE.match(errors[0]), (seed, case, result)
    print(f"merge-driver fuzz: {counts[0]} merged, {counts[EXIT_NOT_MERGED]} refused", file=sys.stderr)
    assert counts[EXIT_NOT_MERGED] > 0


def test_driver_asks_on_a_terminal(copies):
    """With a terminal (a person running git merge) and no other source, the password is asked there."""
    import pexpect
    desktop, folder = copies
    child = pexpect.spawn(desktop.binary, ["merge-driver", "O", "A", "B", "7", VAULT], cwd=str(folder), timeout=30,
                          env=desktop.environment(unset=("KC_MASTER_PASSWORD_FILE",)), encoding="utf-8")
    child.expect_exact("Master password to merge the vault: ")
    child.sendline(desktop.master_password)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert services(desktop, folder / "A") == {"shared", "from-laptop", "from-desktop"}
