"""A version stamped more than 366 days ahead (Docs/SYNC.md, Clocks): the writer's clock does not follow it,
but an edit of that item is stamped after it, so the edit, a delete and a conflict resolution still win; other
items go on stamped by real time. Through kc sync too: the other machine's edit of the item wins there."""
import shutil

import pytest

from kcharness import EXIT_NOT_FOUND
from test_sync import pair, remote, secret  # noqa: F401  (pytest fixtures)

pytestmark = pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is missing: run make test-deps")
FAR_AHEAD = ("faketime", "-f", "+400d")


def written_years(kc, service) -> list:
    result = kc.ok(["history", "generic", "-s", service])
    return [line.split()[1][:4] for line in result.stdout.splitlines() if line.startswith("written:")]


def test_an_edit_after_a_version_far_ahead_wins(kc_ready):
    kc = kc_ready
    kc.add_generic("far", "me", "v0")
    kc.ok(["update", "generic", "-s", "far", "--password-stdin"], input="from-the-future", wrapper=FAR_AHEAD)
    kc.ok(["update", "generic", "-s", "far", "--password-stdin"], input="now")
    assert kc.ok(["find", "generic", "-s", "far", "-w"]).stdout.strip() == "now"
    assert kc.ok(["conflicts"]).stdout == "", "one edit on top of the other: no conflict"
    kc.add_generic("other", "me", "o")
    far = written_years(kc, "far")   # oldest first: v0 (real time), then two versions a year ahead
    assert far[1] == far[2] != far[0], far
    assert written_years(kc, "other") == far[:1], "another item is stamped by real time"
    kc.ok(["delete", "generic", "-s", "far"])
    assert kc.run(["find", "generic", "-s", "far"]).returncode == EXIT_NOT_FOUND


def test_an_edit_on_another_machine_after_it_synced_wins_everywhere(pair):
    laptop, desktop = pair
    laptop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="from-the-future", wrapper=FAR_AHEAD)
    laptop.ok(["sync"], wrapper=FAR_AHEAD)
    desktop.ok(["sync"])
    desktop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="desktop-later")
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    for kc in (laptop, desktop):
        assert secret(kc, "shared") == "desktop-later"
        assert kc.ok(["conflicts"]).stdout == ""
