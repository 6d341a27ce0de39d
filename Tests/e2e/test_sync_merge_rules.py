"""Merge rules that show to a user of `kc sync` and `kc conflicts` (Docs/SYNC.md, rules 4-5 and
Clocks), on two simulated machines synced through a local bare repository with real git (the
fixtures of test_sync.py)."""
import json
import time

from kcharness import EXIT_DUPLICATE, assert_failure
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


def test_an_import_of_another_machine_s_export_does_not_become_its_item(pair, tmp_path):
    laptop, desktop = pair
    desktop.add_generic("from-desktop", "me", "desktop-pw")
    export = tmp_path / "desktop.json"
    desktop.ok(["export", "--with-secrets", "-o", export])
    desktop_ids = {item["id"] for item in json.loads(export.read_text())}
    edited = json.loads(export.read_text())
    for item in edited:
        item["service"] += ".imported"
        item["password"] = "imported-pw"
    export.write_text(json.dumps(edited))
    laptop.ok(["import", "json", export])   # the laptop has not seen the desktop's item yet
    imported = {item["service"]: item["id"] for item in json.loads(laptop.ok(["export"]).stdout)}
    assert not desktop_ids & {imported["shared.imported"], imported["from-desktop.imported"]}, "new ids"
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    for kc in (laptop, desktop):
        assert secret(kc, "from-desktop") == "desktop-pw" and secret(kc, "shared") == "pw0"
        assert secret(kc, "from-desktop.imported") == "imported-pw" and secret(kc, "shared.imported") == "imported-pw"
        assert kc.ok(["conflicts"]).stdout == ""


def found(kc, service):
    return json.loads(kc.ok(["find", "generic", "-s", service, "--all", "--json", "-w"]).stdout)


def sync_all(laptop, desktop):
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    laptop.ok(["sync"])


def test_one_primary_key_added_on_two_machines_is_one_item_and_a_conflict(pair):
    laptop, desktop = pair
    laptop.add_generic("x", "me", "laptop-pw")
    time.sleep(0.01)
    desktop.add_generic("x", "me", "desktop-pw")   # later: holds the key
    sync_all(laptop, desktop)
    for kc in (laptop, desktop):
        items = found(kc, "x")
        assert len(items) == 1 and items[0]["password"] == "desktop-pw", items
        assert len(json.loads(kc.ok(["find", "--all", "--json"]).stdout)) == 2, "x and shared"
        listed = kc.ok(["conflicts", "-w"]).stdout
        assert "current password: desktop-pw" in listed and "other password: laptop-pw" in listed, listed
        assert_failure(kc.run(["add", "generic", "-s", "x", "-a", "me", "--password-stdin"], input="third"),
                       "errSecDuplicateItem", EXIT_DUPLICATE)
    laptop.ok(["conflicts", "resolve", "generic", "-s", "x", "-a", "me", "--keep", "other"])
    assert secret(laptop, "x") == "laptop-pw" and laptop.ok(["conflicts"]).stdout == ""
    sync_all(laptop, desktop)
    for kc in (laptop, desktop):
        assert [item["password"] for item in found(kc, "x")] == ["laptop-pw"]
        assert kc.ok(["conflicts"]).stdout == ""


def test_an_update_to_another_machine_s_primary_key(pair):
    laptop, desktop = pair
    laptop.add_generic("y", "me", "y-pw")
    sync_all(laptop, desktop)
    desktop.add_generic("z", "me", "z-pw")           # the desktop's own item z, offline
    time.sleep(0.01)
    laptop.ok(["update", "generic", "-s", "y", "--set-service", "z"])   # later: y becomes z and holds the key
    sync_all(laptop, desktop)
    for kc in (laptop, desktop):
        assert [item["password"] for item in found(kc, "z")] == ["y-pw"]
        assert "other password: z-pw" in kc.ok(["conflicts", "-w"]).stdout
    # an edit of the key's holder on a machine that has both ends it, the other kept in history
    desktop.ok(["update", "generic", "-s", "z", "--set-label", "settled"])
    sync_all(laptop, desktop)
    for kc in (laptop, desktop):
        assert [item["password"] for item in found(kc, "z")] == ["y-pw"] and kc.ok(["conflicts"]).stdout == ""
    # deleting the key's holder deletes the key: the other version does not come back
    laptop.add_generic("w", "me", "w1")
    time.sleep(0.01)
    desktop.add_generic("w", "me", "w2")
    sync_all(laptop, desktop)
    laptop.ok(["delete", "generic", "-s", "w"])
    sync_all(laptop, desktop)
    for kc in (laptop, desktop):
        assert kc.run(["find", "generic", "-s", "w"]).returncode != 0
