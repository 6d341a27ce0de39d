"""Merge rules that show to a user of `kc sync` and `kc conflicts` (Docs/SYNC.md, rules 4-5 and
Clocks), on two simulated machines synced through a local bare repository with real git (the
fixtures of test_sync.py)."""
import time

from test_sync import pair, remote, secret  # noqa: F401  (pytest fixtures)


def update(kc, service, password):
    kc.ok(["update", "generic", "-s", service, "--password-stdin"], input=password)
    time.sleep(0.01)


def test_two_edits_in_a_row_do_not_hide_the_other_machine_s_edit(pair):
    laptop, desktop = pair
    update(desktop, "shared", "desktop-edit")
    update(laptop, "shared", "laptop-first")
    update(laptop, "shared", "laptop-second")   # the latest: wins, built on the laptop's first edit
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    for kc in (laptop, desktop):
        assert secret(kc, "shared") == "laptop-second"
        listed = kc.ok(["conflicts", "-w"]).stdout
        assert "current password: laptop-second" in listed and "other password: desktop-edit" in listed, listed
        assert listed.count("other: written") == 1
    # an edit on a machine that has both versions ends the conflict, there and after a sync elsewhere
    update(desktop, "shared", "settled")
    assert desktop.ok(["conflicts"]).stdout == ""
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    assert secret(laptop, "shared") == "settled" and laptop.ok(["conflicts"]).stdout == ""
