"""Merge rules that show to a user of `kc sync` and `kc conflicts` (Docs/SYNC.md, rules 4-5 and
Clocks), on two simulated machines synced through a local bare repository with real git (the
fixtures of test_sync.py)."""
import json
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
