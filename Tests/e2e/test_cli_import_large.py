"""Imports take real exports whatever their size: kc's own `export --with-secrets` of thousands of items
(several MiB, above the 1 MiB every import once refused) imported back into a fresh vault, item for item;
a foreign export of the same size; and the bound, sized for 1,000,000 items, named in the error beyond it."""
import json
import os

from kcharness import KC, assert_failure

COUNT = 8_000


def big_export(count: int) -> list:
    """kc's JSON export format, `count` internet items with longer comments (about 300 bytes each)."""
    return [{"class": "internet", "server": f"host-{i:06d}.example.com", "account": f"user{i}@example.org",
             "protocol": "https", "label": f"Host {i}", "comment": f"note {i}: " + "x" * 120,
             "password": f"secret-{i:06d}-" + "p" * 20} for i in range(count)]


def test_kcs_own_large_export_imports_back_item_for_item(kc_ready, kc_bin, tmp_path):
    source = tmp_path / "source.json"
    source.write_text(json.dumps(big_export(COUNT)))
    assert source.stat().st_size > 2 << 20
    result = kc_ready.ok(["import", "json", source])
    assert f"{COUNT} added, 0 skipped as duplicate, 0 rejected" in result.stderr
    export = tmp_path / "export.json"
    kc_ready.ok(["export", "--with-secrets", "--yes", "-o", export])
    assert export.stat().st_size > 2 << 20
    target = KC(kc_bin, tmp_path / "target-home")
    target.init()
    result = target.ok(["import", "json", export])
    assert f"{COUNT} added, 0 skipped as duplicate, 0 rejected" in result.stderr
    # Ids, dates, attributes and secrets, to the millisecond.
    again = tmp_path / "again.json"
    target.ok(["export", "--with-secrets", "--yes", "-o", again])
    assert json.loads(again.read_text()) == json.loads(export.read_text())
    # Importing the same file again: every item a duplicate, nothing written.
    before = target.vault_path.read_bytes()
    result = target.ok(["import", "json", export])
    assert f"0 added, {COUNT} skipped as duplicate, 0 rejected" in result.stderr
    assert target.vault_path.read_bytes() == before


def test_a_large_foreign_export_imports(kc_ready, tmp_path):
    rows = "".join(f'"Root","T{i}","u{i}","p{i}-' + "q" * 40 + f'","https://h{i}.example/","' + "n" * 60 + '"\n'
                   for i in range(COUNT))
    path = tmp_path / "keepassxc.csv"
    path.write_text('"Group","Title","Username","Password","URL","Notes"\n' + rows)
    assert path.stat().st_size > 1 << 20
    result = kc_ready.ok(["import", "keepassxc-csv", path])
    assert f"{COUNT} added, 0 skipped as duplicate, 0 rejected" in result.stderr


def test_a_file_beyond_the_bound_is_refused_before_it_is_read(kc_ready, tmp_path):
    """The bound (1 GiB: 1,000,000 items of about 1 KiB) is checked on the file's size, so a sparse file
    above it is refused at once, with errSecParam, the vault untouched."""
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate((1 << 30) + 1)
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", "json", path])
    assert_failure(result, "errSecParam")
    assert "is larger than 1 GiB" in result.stderr, result
    assert kc_ready.vault_path.read_bytes() == before
    os.unlink(path)


def test_a_large_import_through_the_unlocked_agent(kc_ready, tmp_path):
    """The agent takes the batch in frames of its own size, so a file of several MiB goes through it
    too, with no master password source."""
    from agentsupport import NO_SOURCE, stop_agents, with_runtime_folder
    kc = with_runtime_folder(kc_ready)
    source = tmp_path / "source.json"
    source.write_text(json.dumps(big_export(COUNT)))
    kc.ok(["unlock"])
    try:
        result = kc.run(["import", "json", source], unset=NO_SOURCE)
        assert result.returncode == 0 and f"{COUNT} added, 0 skipped as duplicate, 0 rejected" in result.stderr, result
        found = kc.run(["find", "internet", "-s", f"host-{COUNT - 1:06d}.example.com", "-w"], unset=NO_SOURCE)
        assert found.stdout == f"secret-{COUNT - 1:06d}-{'p' * 20}\n", found
    finally:
        stop_agents(kc)
