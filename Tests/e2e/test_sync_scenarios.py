"""Named sync scenarios (Docs/SYNC.md) with the built kc, real git and a local bare repository:
compaction on one side or both in both sync orders; `git pull -X theirs` by hand in the sync copy;
an old vault file restored in place; a copied device id; two machines syncing at the same moment;
an edit made after a sync against an earlier edit from a machine whose clock is 2 h ahead; three
machines with criss-cross merges and a rebase (`pull.rebase=true`)."""
import os
import shutil
import subprocess

import pytest

from kcharness import EXIT_DECODE, EXIT_VERIFY_FAILED, assert_failure
from test_sync import GIT_ENV, git, machine, pair, remote, secret, services, sync_folder  # noqa: F401  (pytest fixtures)

IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")


def versions(kc, service: str) -> list[str]:
    """The secrets of every version `kc history` shows, oldest first."""
    history = kc.ok(["history", "generic", "-s", service, "-w"]).stdout
    return [line.split(": ", 1)[1] for line in history.splitlines() if line.startswith("password: ")]


def edit(kc, service: str, value: str) -> None:
    kc.ok(["update", "generic", "-s", service, "--password-stdin"], input=value)


def quiet_sync(kc):
    """A sync that reports no rollback and no records missing from the remote."""
    result = kc.ok(["sync"])
    assert "rollback" not in result.stderr and "missing" not in result.stderr, result.stderr
    return result


@pytest.mark.parametrize("first", ["laptop", "desktop"])
@pytest.mark.parametrize("compacting", ["laptop", "desktop", "both"])
def test_compaction_on_one_side_or_both_loses_nothing_and_brings_nothing_back(pair, compacting, first):
    laptop, desktop = pair
    edit(laptop, "shared", "v1")
    edit(laptop, "shared", "v2")
    laptop.add_generic("gone", "me", "g0")
    laptop.ok(["sync"])
    desktop.ok(["sync"])                                # both hold shared's three versions and "gone"
    laptop.ok(["delete", "generic", "-s", "gone"])      # a tombstone the desktop has not seen
    laptop.add_generic("from-laptop", "me", "l1")
    desktop.add_generic("from-desktop", "me", "d1")
    edit(desktop, "from-desktop", "d2")
    for kc in {"laptop": [laptop], "desktop": [desktop], "both": [laptop, desktop]}[compacting]:
        kc.ok(["compact"])
    order = [laptop, desktop] if first == "laptop" else [desktop, laptop]
    for kc in order + order:
        quiet_sync(kc)
    expected = {"shared": "v2", "from-laptop": "l1", "from-desktop": "d2"}
    for kc in (laptop, desktop):
        assert services(kc) == expected, "no live item lost, the tombstone kept"
        assert versions(kc, "shared") == ["v2"], "the versions a compaction saw superseded stay gone"
        compacted_desktop = compacting in ("desktop", "both")
        assert versions(kc, "from-desktop") == (["d2"] if compacted_desktop else ["d1", "d2"])
        kc.ok(["add", "generic", "-s", "after", "--password-stdin"], input="a")   # no false rollback: writes go on
        kc.ok(["delete", "generic", "-s", "after"])


def test_git_pull_theirs_by_hand_then_sync_brings_everything_back(pair, tmp_path, remote):
    """The desktop's sync committed an item the remote lacks (its push failed); by hand, with the driver
    not configured (as in a plain clone), `git pull -X theirs` takes the remote's file and drops it from the
    sync copy. The live vault still holds it: the next `kc sync` puts it back and sends it."""
    laptop, desktop = pair
    laptop.add_generic("from-laptop", "me", "l1")
    laptop.ok(["sync"])
    desktop.add_generic("from-desktop", "me", "d1")
    away = tmp_path / "away.git"
    remote.rename(away)
    assert desktop.run(["sync"]).returncode != 0      # exported and committed, then the fetch failed
    away.rename(remote)
    folder = sync_folder(desktop)
    git(folder, "config", "--remove-section", "merge.kc")
    git(folder, *IDENTITY, "pull", "-q", "--no-rebase", "--no-edit", "-X", "theirs", "origin", "main")
    after_pull = subprocess.run(["git", "-C", str(folder), "show", "HEAD:login.kc"], capture_output=True, check=True).stdout
    remote_file = subprocess.run(["git", "-C", str(remote), "show", "main:login.kc"], capture_output=True, check=True).stdout
    assert after_pull == remote_file, "-X theirs took the remote's file: the desktop's item is gone from the sync copy"
    quiet_sync(desktop)
    quiet_sync(laptop)
    for kc in (laptop, desktop):
        assert services(kc) == {"shared": "pw0", "from-laptop": "l1", "from-desktop": "d1"}


def test_an_old_vault_file_restored_in_place_is_refused(pair):
    laptop, desktop = pair
    old = desktop.vault_path.read_bytes()
    desktop.add_generic("from-desktop", "me", "d1")
    desktop.ok(["sync"])
    desktop.vault_path.write_bytes(old)                 # a backup put back over the vault
    result = desktop.run(["sync"])
    assert_failure(result, "errSecVerifyFailed", EXIT_VERIFY_FAILED)
    assert desktop.vault_path.read_bytes() == old, "refused: the restored file untouched"
    assert_failure(desktop.run(["add", "generic", "-s", "x", "--password-stdin"], input="x"), "errSecVerifyFailed", EXIT_VERIFY_FAILED)
    # once the user says so, the sync brings back what the old file lacked
    desktop.ok(["--accept-rollback", "sync"])
    assert secret(desktop, "from-desktop") == "d1"


def test_a_copied_device_id_is_refused_clearly(pair, kc_bin, tmp_path, remote):
    """A third machine set up by copying the desktop's home (its state folder, so its device id):
    both write; the second to sync is refused, naming the device, and its vault is left as it was."""
    laptop, desktop = pair
    third = machine(kc_bin, tmp_path, "third")
    for part in ("data", "state"):
        shutil.copytree(desktop.home / part, third.home / part, symlinks=True)
    desktop.add_generic("from-desktop", "me", "d1")
    third.add_generic("from-third", "me", "t1")
    desktop.ok(["sync"])
    before = third.vault_path.read_bytes()
    result = third.run(["sync"])
    assert_failure(result, "errSecDecode", EXIT_DECODE)
    assert "share device id" in result.stderr and result.stderr.count("kc: error:") == 1, result.stderr
    assert "kc sync reset-device" in result.stderr, "the hint names the way out"
    assert third.vault_path.read_bytes() == before
    assert services(laptop) == {"shared": "pw0"}, "the remote never took the clash"
    laptop.ok(["sync"])
    assert services(laptop) == {"shared": "pw0", "from-desktop": "d1"}


def test_two_machines_syncing_at_the_same_moment_both_get_through(pair):
    laptop, desktop = pair
    for round_ in range(2):
        laptop.add_generic(f"laptop-{round_}", "me", f"l{round_}")
        desktop.add_generic(f"desktop-{round_}", "me", f"d{round_}")
        running = [kc.popen(["sync"], stdin=subprocess.DEVNULL) for kc in (laptop, desktop)]
        for process in running:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    expected = {"shared": "pw0", **{f"laptop-{n}": f"l{n}" for n in range(2)}, **{f"desktop-{n}": f"d{n}" for n in range(2)}}
    assert services(laptop) == services(desktop) == expected


@pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is missing: run make test-deps")
def test_an_edit_after_a_sync_beats_an_earlier_edit_from_a_clock_2_hours_ahead(pair):
    laptop, desktop = pair
    ahead = ("faketime", "-f", "+2h")
    desktop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="ahead-edit", wrapper=ahead)
    desktop.ok(["sync"], wrapper=ahead)
    laptop.ok(["sync"])
    edit(laptop, "shared", "later-edit")        # made after the laptop received the desktop's edit
    laptop.ok(["sync"])
    desktop.ok(["sync"], wrapper=ahead)
    for kc in (laptop, desktop):
        assert secret(kc, "shared") == "later-edit"
        assert versions(kc, "shared") == ["pw0", "ahead-edit", "later-edit"]
        assert "shared" not in kc.ok(["conflicts"]).stdout, "one edit on top of the other: no conflict"


def test_three_machines_with_criss_cross_merges_and_a_rebase_converge(pair, kc_bin, tmp_path, remote):
    """Three sync copies merged by hand with git, kc's driver doing every merge: the laptop and the desktop
    merge each other's commit at once (a criss-cross: the next merge between them has two merge bases, so
    git merges those first, through the driver too); the third machine, with `pull.rebase=true`, rebases its
    commit on the remote. Then `kc sync` everywhere: every machine holds every item."""
    laptop, desktop = pair
    third = machine(kc_bin, tmp_path, "third")
    third.ok(["sync", "clone", remote])
    kcs = {"laptop": laptop, "desktop": desktop, "third": third}
    away = tmp_path / "away.git"

    def commit_offline(name: str, service: str) -> None:
        """An item exported and committed in the sync copy by a sync that cannot reach the remote."""
        kcs[name].add_generic(service, "me", service)
        remote.rename(away)
        try:
            assert kcs[name].run(["sync"]).returncode != 0
        finally:
            away.rename(remote)

    def by_hand(name: str, *args) -> None:
        env = {**os.environ, **kcs[name].environment(), **GIT_ENV, "GIT_TERMINAL_PROMPT": "0"}
        done = subprocess.run(["git", "-C", str(sync_folder(kcs[name])), *IDENTITY, *args], capture_output=True, text=True,
                              env=env, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (args, done.stderr)

    commit_offline("laptop", "l1")
    commit_offline("desktop", "d1")
    by_hand("laptop", "fetch", "-q", sync_folder(desktop), "main:refs/peer/desktop")
    by_hand("desktop", "fetch", "-q", sync_folder(laptop), "main:refs/peer/laptop")
    by_hand("laptop", "merge", "-q", "--no-edit", "refs/peer/desktop")
    by_hand("desktop", "merge", "-q", "--no-edit", "refs/peer/laptop")
    commit_offline("laptop", "l2")
    commit_offline("desktop", "d2")
    by_hand("laptop", "fetch", "-q", sync_folder(desktop), "main:refs/peer/desktop")
    bases = git(sync_folder(laptop), "merge-base", "--all", "HEAD", "refs/peer/desktop").split()
    assert len(bases) == 2, "a criss-cross: two merge bases"
    by_hand("laptop", "merge", "-q", "--no-edit", "refs/peer/desktop")
    quiet_sync(laptop)
    git(sync_folder(third), "config", "pull.rebase", "true")
    commit_offline("third", "t1")
    by_hand("third", "pull", "-q", "origin", "main")
    assert git(sync_folder(third), "rev-list", "--merges", "--count", "HEAD@{u}..HEAD").strip() == "0", "rebased, not merged"
    for kc in (third, desktop, laptop, third, desktop):
        quiet_sync(kc)
    expected = {"shared": "pw0", **{s: s for s in ("l1", "l2", "d1", "d2", "t1")}}
    for kc in (laptop, desktop, third):
        assert services(kc) == expected
