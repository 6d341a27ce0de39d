"""`kc sync` warns when its merge leaves an item without the require-password mark that a
concurrent version had, in the words of `kc merge-driver` (the fixtures of test_sync.py)."""
import json
import time

from test_sync import pair, remote  # noqa: F401  (pytest fixtures)

WARNING = "kc: warning: 1 item lost its require-password mark"


def marks(kc) -> list:
    return [item.get("requirePassword") for item in json.loads(kc.ok(["find", "--all", "--json"]).stdout)]


def test_a_sync_that_unmarks_an_item_warns_once_on_each_machine(pair):
    """The laptop marks the item; the desktop, not having seen the mark, edits it later: the later,
    unmarked version wins on both machines, and each machine's sync that brings it says so once."""
    laptop, desktop = pair
    laptop.ok(["update", "generic", "-s", "shared", "--set-require-password", "yes"])
    time.sleep(0.01)
    desktop.ok(["update", "generic", "-s", "shared", "--set-label", "desktop"])
    first = laptop.ok(["sync"])
    assert "lost" not in first.stderr, "nothing to merge yet"
    second = desktop.ok(["sync"])
    assert "edited on two machines at once" in second.stderr
    assert WARNING in second.stderr, second.stderr
    third = laptop.ok(["sync"])
    assert WARNING in third.stderr, third.stderr
    assert marks(laptop) == marks(desktop) == [None]
    again = desktop.ok(["sync"])
    assert "lost" not in again.stderr, "a mark lost earlier is not reported again"
    laptop.ok(["update", "generic", "-s", "shared", "--set-require-password", "yes"])
    laptop.ok(["sync"])
    assert "lost" not in desktop.ok(["sync"]).stderr
    assert marks(desktop) == [True]
