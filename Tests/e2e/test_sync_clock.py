"""Clocks across machines (Docs/SYNC.md, Clocks): records written on a machine whose clock runs two
hours ahead (faketime) reach the others through `kc sync` and through git's merge driver, accepted,
with one warning per device naming it; a machine whose clock is behind still writes after them."""
import re
import shutil

import pytest

from kcharness import KC
from test_merge_driver import VAULT, git, machines, services  # noqa: F401  (pytest fixtures)
from test_sync import pair, remote, secret  # noqa: F401  (pytest fixtures)

pytestmark = pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is missing: run make test-deps")

AHEAD = ("faketime", "-f", "+2h")


def ahead_warnings(stderr: str) -> list[str]:
    """The device ids the clock warnings name."""
    return re.findall(r"kc: warning: records from device ([0-9a-f]+) are stamped [12] h \d+ min ahead of this machine's clock; "
                      r"they were accepted", stderr)


def this_device(kc: KC) -> str:
    """This machine's device id as `kc sync status` shows it."""
    lines = [line for line in kc.ok(["sync", "status"]).stdout.splitlines() if line.endswith("(this machine)")]
    assert len(lines) == 1, lines
    return lines[0].split()[0]


def test_sync_accepts_records_from_a_clock_ahead_and_names_the_device_once(pair):
    laptop, desktop = pair
    desktop.ok(["add", "generic", "-s", "future-1", "--password-stdin"], input="f1", wrapper=AHEAD)
    desktop.ok(["add", "generic", "-s", "future-2", "--password-stdin"], input="f2", wrapper=AHEAD)
    sent = desktop.ok(["sync"])
    assert ahead_warnings(sent.stderr) == [], "a machine's own records are not news to it"
    received = laptop.ok(["sync"])
    assert "received: 2 added" in received.stdout
    assert ahead_warnings(received.stderr) == [this_device(desktop)], received.stderr
    assert secret(laptop, "future-1") == "f1" and secret(laptop, "future-2") == "f2"
    # The laptop's clock is two hours behind the records it now holds: its edit still comes after them.
    laptop.ok(["update", "generic", "-s", "future-1", "--password-stdin"], input="edited-behind")
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    for kc in (laptop, desktop):
        assert secret(kc, "future-1") == "edited-behind"
    assert ahead_warnings(laptop.ok(["sync"]).stderr) == [], "records already received are not reported again"


def test_merge_driver_accepts_records_from_a_clock_ahead_with_a_warning(machines):
    laptop, a, desktop, b = machines
    desktop.ok(["--vault", b / VAULT, "add", "generic", "-s", "future", "--password-stdin"], input="f", wrapper=AHEAD)
    git(desktop, "commit", "-q", "-am", "kc sync", cwd=b)
    git(desktop, "push", "-q", "origin", "main", cwd=b)
    laptop.ok(["--vault", a / VAULT, "add", "generic", "-s", "from-laptop", "--password-stdin"], input="l")
    git(laptop, "commit", "-q", "-am", "kc sync", cwd=a)
    pulled = git(laptop, "pull", "--no-rebase", "--no-edit", "origin", "main", cwd=a)
    device = (desktop.home / "state" / "kc" / "device-id").read_text().strip()
    assert ahead_warnings(pulled.stderr) == [device], pulled.stderr
    assert services(laptop, a / VAULT) == {"shared", "from-laptop", "future"}
    assert git(laptop, "status", "--porcelain", cwd=a).stdout == ""
