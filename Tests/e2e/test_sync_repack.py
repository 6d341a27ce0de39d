"""A merge's write repacks as any write does (Docs/FORMAT.md, Writing rules, "Repacking"): the records a
`kc sync` brings in are appended outside pages, and once they are enough the file is rewritten in pages
by that sync, not by the next local write. KC_TEST_REPACK_THRESHOLD (debug builds) lowers the threshold."""
import json

from agentsupport import NO_SOURCE, stop_agents, unlock, with_runtime_folder
from kcformat import frames
from test_sync import machine, pair, remote  # noqa: F401  (pytest fixtures)

THRESHOLD = 16


def import_items(kc, count: int):
    source = kc.home / "items.json"
    source.write_text(json.dumps([{"class": "generic", "service": f"imp{i}.example", "account": "me",
                                   "password": f"pw-imp-{i}"} for i in range(count)]))
    kc.ok(["import", "json", str(source)])


def outside_pages(kc) -> int:
    return sum(0 if f.is_page else 1 for f in frames(kc.vault_path.read_bytes()))


def test_a_sync_that_brings_in_enough_records_repacks_the_vault(pair):
    laptop, desktop = pair
    desktop.ok(["sync"])
    import_items(desktop, THRESHOLD + 4)     # unlowered threshold on the desktop: no repack there
    assert outside_pages(desktop) >= THRESHOLD + 4
    desktop.ok(["sync"])
    laptop.env["KC_TEST_REPACK_THRESHOLD"] = str(THRESHOLD)
    inode = laptop.vault_path.stat().st_ino
    result = laptop.ok(["sync"])
    assert "warning" not in result.stderr, result
    assert laptop.vault_path.stat().st_ino != inode, "the merge's write did not repack the vault"
    assert outside_pages(laptop) == 0, "records left outside pages"
    for i in (0, THRESHOLD + 3):
        assert laptop.ok(["find", "generic", "-s", f"imp{i}.example", "-w"]).stdout == f"pw-imp-{i}\n"
    assert laptop.ok(["find", "generic", "-s", "shared", "-w"]).stdout == "pw0\n"
    assert "status: whole" in laptop.ok(["check"]).stdout
    # Nothing to send or receive: the repack changed no record.
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    assert desktop.ok(["find", "generic", "-s", "imp3.example", "-w"]).stdout == "pw-imp-3\n"


def test_a_sync_that_brings_in_few_records_leaves_the_file_as_it_is(pair):
    laptop, desktop = pair
    desktop.ok(["sync"])
    import_items(desktop, 3)
    desktop.ok(["sync"])
    laptop.env["KC_TEST_REPACK_THRESHOLD"] = str(THRESHOLD)
    inode = laptop.vault_path.stat().st_ino
    laptop.ok(["sync"])
    assert laptop.vault_path.stat().st_ino == inode and outside_pages(laptop) > 0
    assert laptop.ok(["find", "generic", "-s", "imp2.example", "-w"]).stdout == "pw-imp-2\n"


def test_a_sync_served_by_the_agent_repacks_too_and_the_agent_keeps_answering(pair):
    laptop, desktop = pair
    desktop.ok(["sync"])
    import_items(desktop, THRESHOLD + 4)
    desktop.ok(["sync"])
    laptop.env["KC_TEST_REPACK_THRESHOLD"] = str(THRESHOLD)
    with_runtime_folder(laptop)
    try:
        unlock(laptop)
        inode = laptop.vault_path.stat().st_ino
        result = laptop.ok(["sync"], unset=NO_SOURCE)   # only the agent can merge: no password source
        assert "warning" not in result.stderr, result
        assert laptop.vault_path.stat().st_ino != inode and outside_pages(laptop) == 0
        found = laptop.ok(["find", "generic", "-s", f"imp{THRESHOLD}.example", "-w"], unset=NO_SOURCE)
        assert found.stdout == f"pw-imp-{THRESHOLD}\n"
    finally:
        stop_agents(laptop)
    assert "status: whole" in laptop.ok(["check"]).stdout
