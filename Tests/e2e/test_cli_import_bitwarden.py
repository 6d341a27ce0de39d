"""Bitwarden's JSON export, the details a switching user meets (samples/bitwarden-history.json, written by
hand after Bitwarden's exporter): `passwordHistory` becomes the item's kc history (earlier versions with
their dates, oldest first); boolean custom fields (type 2) are attributes, in the comment, not secret items;
`--dry-run` reports every entry, each rejected one too; a multi-line comment prints as lines in `find`, its
control characters escaped."""
import json
import re
from pathlib import Path

from kcharness import assert_failure, items_with_secrets, only_item

SAMPLE = Path(__file__).parent / "samples" / "bitwarden-history.json"


def imported(kc):
    result = kc.ok(["import", "bitwarden-json", "--partial", SAMPLE])
    assert "3 added, 0 skipped as duplicate, 3 rejected" in result.stderr, result
    return result


def versions(kc, *selector) -> list[dict]:
    """`kc history ... -w` as a list of {field: value}, oldest first."""
    text = kc.ok(["history", *selector, "-w"]).stdout
    return [dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith("  "))
            for block in text.strip().split("\n\n")]


def test_password_history_becomes_the_items_history_in_order_with_dates(kc_ready):
    imported(kc_ready)
    found = versions(kc_ready, "internet", "-s", "forum.example.net", "-a", "alice")
    assert [v["password"] for v in found] == ["first-pw", "second-pw", "third-pw", "current-pw"]
    # Each version is dated when it became the password: the item's creation, then the day the one
    # before it was last used; the current version the item's revision date.
    assert [v["modified"] for v in found] == ["2022-11-02T12:00:00Z", "2023-01-15T10:30:00Z",
                                              "2023-09-01T00:00:00Z", "2024-05-20T08:00:00Z"]
    assert [v["version"] for v in found] == ["1", "2", "3", "4 (current)"]
    assert all(v["created"] == "2022-11-02T12:00:00Z" for v in found)
    # The current secret is the login's password; the history is not a list of items.
    items = items_with_secrets(kc_ready)
    assert only_item(items, server="forum.example.net")["password"] == "current-pw"
    assert not [i for i in items if i.get("password") in ("first-pw", "second-pw", "third-pw")]


def test_an_item_without_history_has_one_version(kc_ready):
    imported(kc_ready)
    found = versions(kc_ready, "internet", "-s", "wiki.example.net")
    assert [v["password"] for v in found] == ["wiki-pw"] and found[0]["version"] == "1 (current)"


def test_boolean_fields_are_attributes_in_the_comment_not_secret_items(kc_ready):
    imported(kc_ready)
    items = items_with_secrets(kc_ready)
    forum = only_item(items, server="forum.example.net")
    assert forum["comment"] == ("personal account\nsecond line\x1b[31m red?\n\nOther URLs:\nhttps://m.forum.example.net"
                                "\n\nFields:\nRemember me: true\nNewsletter: false")
    services = sorted(i.get("service", "") for i in items if i["class"] == "generic")
    assert services == ["Forum (Security answer)"], "a hidden field is still a secret item, a boolean one is not"
    assert only_item(items, service="Forum (Security answer)")["password"] == "blue-whale"


def test_dry_run_reports_every_entry_and_every_rejection(kc_ready):
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", "bitwarden-json", "--dry-run", SAMPLE])
    assert_failure(result, "errSecDecode")
    out = result.stdout
    assert "would add item 0 (line 10): Forum (alice)" in out
    assert "would add item 0 (line 10): Forum (Security answer) (alice)" in out
    assert "would add item 2 (line 97): Wiki (alice)" in out
    assert "rejected item 1 (line 74): a card entry, which kc does not store" in out
    assert "rejected item 3 (line 123): an identity entry, which kc does not store" in out
    assert re.search(r"rejected item 4 \(line 141\): .*password", out), out
    assert f"kc: error: {SAMPLE}:74: item 1 (line 74): a card entry" in result.stderr
    assert "kc: hint: 3 items rejected; nothing would be imported; --partial imports the rest" in result.stderr
    assert kc_ready.vault_path.read_bytes() == before


def test_dry_run_with_partial_reports_the_same_and_succeeds(kc_ready):
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.ok(["import", "bitwarden-json", "--dry-run", "--partial", SAMPLE])
    out = result.stdout
    assert out.count("would add") == 3 and out.count("rejected") == 3, out
    assert "3 would be added (dry run, nothing written), 0 skipped as duplicate, 3 rejected" in result.stderr
    assert kc_ready.vault_path.read_bytes() == before


def test_a_multi_line_comment_prints_as_lines_with_controls_escaped(kc_ready):
    imported(kc_ready)
    out = kc_ready.ok(["find", "internet", "-s", "forum.example.net"]).stdout
    lines = out.splitlines()
    start = lines.index("comment: personal account")
    assert lines[start + 1:start + 8] == ["  second line\\x1b[31m red?", "  ", "  Other URLs:",
                                          "  https://m.forum.example.net", "  ", "  Fields:", "  Remember me: true"]
    assert "\x1b" not in out and "\\n" not in out
    # Every other line of the item is still `name: value`.
    assert all(re.match(r"^(\w+: |  |$)", line) for line in lines), lines


def test_a_json_listing_keeps_the_comment_exact(kc_ready):
    imported(kc_ready)
    [forum] = json.loads(kc_ready.ok(["find", "internet", "-s", "forum.example.net", "--json"]).stdout)
    assert forum["comment"].startswith("personal account\nsecond line\x1b[31m red?\n\n")


def test_the_history_comes_through_the_agent_too(kc_ready):
    """With the vault's agent unlocked and no master password source, the import is the agent's; the
    earlier versions cross its wire with the item."""
    from agentsupport import NO_SOURCE, stop_agents, with_runtime_folder
    kc = with_runtime_folder(kc_ready)
    kc.ok(["unlock"])
    try:
        result = kc.run(["import", "bitwarden-json", "--partial", SAMPLE], unset=NO_SOURCE)
        assert result.returncode == 0 and "3 added" in result.stderr, result
        text = kc.run(["history", "internet", "-s", "forum.example.net", "-w"], unset=NO_SOURCE).stdout
        assert [line for line in text.splitlines() if line.startswith("password: ")] == [
            "password: first-pw", "password: second-pw", "password: third-pw", "password: current-pw"]
    finally:
        stop_agents(kc)
