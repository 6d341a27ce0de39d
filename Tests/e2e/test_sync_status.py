"""`kc sync status`, `kc conflicts` and `kc conflicts resolve` on two simulated machines synced
through a local bare repository (the fixtures of test_sync.py)."""
import time

from kcharness import EXIT_NOT_FOUND, assert_failure
from test_sync import pair, remote, secret  # noqa: F401  (pytest fixtures)


def edit_on_both(laptop, desktop):
    """The same item edited on both machines, the laptop's edit later; both synced."""
    desktop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="desktop-edit")
    time.sleep(0.01)
    laptop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="laptop-edit")
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    desktop.ok(["sync"])


def test_status_counts_what_is_not_sent_and_names_the_devices(pair):
    laptop, desktop = pair
    before = laptop.ok(["sync", "status"]).stdout
    # the laptop's device-name record (the host name) went with its init's push
    assert "last sync: never" not in before and "records: 0 not yet sent, 0 not yet received" in before
    laptop.add_generic("one", "me", "pw1")
    laptop.add_generic("two", "me", "pw2")
    status = laptop.ok(["sync", "status"]).stdout
    assert "records: 2 not yet sent, 0 not yet received" in status
    assert "commits: 0 to push, 0 to merge" in status
    laptop.ok(["sync"])   # receives the desktop's device-name record, sent by its clone
    desktop.ok(["sync"])
    desktop.add_generic("three", "me", "pw3")
    desktop.ok(["sync"])
    status = laptop.ok(["sync", "status"]).stdout
    assert "last sync: 20" in status
    assert "records: 0 not yet sent, 0 not yet received" in status, "as of the laptop's last fetch"
    devices = [line for line in status.splitlines() if line.startswith("  ")]
    assert len(devices) == 2 and any(line.endswith(" 4 (this machine)") for line in devices), status
    assert any(line.endswith(" 1") for line in devices), "the desktop's name only: its item is not fetched yet"
    laptop.ok(["sync"])
    status = laptop.ok(["sync", "status"]).stdout
    devices = [line for line in status.splitlines() if line.startswith("  ")]
    assert len(devices) == 2 and sum(line.endswith("(this machine)") for line in devices) == 1, status
    assert any(line.endswith(" 2") for line in devices), "the desktop's name and its item"


def test_conflicts_list_the_winner_and_the_other_on_both_machines(pair):
    laptop, desktop = pair
    assert laptop.ok(["conflicts"]).stdout == "" and laptop.ok(["conflicts"]).stderr == "kc: no conflicts\n"
    edit_on_both(laptop, desktop)
    for kc in (laptop, desktop):
        listed = kc.ok(["conflicts", "-w"]).stdout
        assert "service: shared" in listed
        assert "current password: laptop-edit" in listed and "other password: desktop-edit" in listed
        assert listed.count("current: written") == 1 and listed.count("other: written") == 1


def test_resolve_keeping_the_other_version_ends_the_conflict_everywhere(pair):
    laptop, desktop = pair
    edit_on_both(laptop, desktop)
    desktop.ok(["conflicts", "resolve", "generic", "-s", "shared", "--keep", "other"])
    assert secret(desktop, "shared") == "desktop-edit"
    assert desktop.ok(["conflicts"]).stdout == ""
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    assert secret(laptop, "shared") == "desktop-edit" and laptop.ok(["conflicts"]).stdout == ""
    assert_failure(laptop.run(["conflicts", "resolve", "generic", "-s", "shared", "--keep", "winner"]),
                   "errSecItemNotFound", EXIT_NOT_FOUND)


def test_resolve_keeping_the_winner(pair):
    laptop, desktop = pair
    edit_on_both(laptop, desktop)
    laptop.ok(["conflicts", "resolve", "generic", "-s", "shared", "--keep", "winner"])
    assert secret(laptop, "shared") == "laptop-edit" and laptop.ok(["conflicts"]).stdout == ""
