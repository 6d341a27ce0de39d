"""Deletes that ask at a terminal and can be undone (issue 19, "Safety"; newcomer review steps
27-34): the [y/N] question through a real pseudo-terminal, --all needing an attribute, the class
taken from the matches, `kc history --deleted` and `kc restore` with and without the agent, the
status line of every write and -q."""
import re
import json

import pexpect
import pytest

from agentsupport import NO_SOURCE, akc, unlock  # noqa: F401
from kcharness import EXIT_CANCELED, EXIT_DUPLICATE, EXIT_NOT_FOUND, EXIT_PARAM, assert_failure


def finish(child) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def services(kc) -> list[str]:
    return sorted(item.get("service") or item.get("server") for item in json.loads(kc.ok(["list", "--json"]).stdout))


@pytest.fixture
def two(kc_ready):
    kc_ready.add_generic("temp.example", "a1", "secret-a1")
    kc_ready.add_generic("temp.example", "a2", "secret-a2")
    return kc_ready


@pytest.mark.parametrize("answer, kept", [("n", True), ("", True), ("y", False)])
def test_delete_at_a_terminal_lists_the_item_and_asks(two, answer, kept):
    child = two.spawn(["delete", "generic", "-s", "temp.example", "-a", "a1"])
    child.expect_exact("Delete 1 item? [y/N] ")
    assert "temp.example" in child.before and "a1" in child.before, child.before   # what it will delete
    child.sendline(answer)
    status = finish(child)
    assert status == (EXIT_CANCELED if kept else 0), child.before
    assert ("a1" in two.ok(["list"]).stdout) == kept
    if not kept:
        assert "kc: deleted 1 item" in child.before


def test_ctrl_c_at_the_question_cancels(two):
    before = two.vault_path.read_bytes()
    child = two.spawn(["delete", "-s", "temp.example", "--all"])
    child.expect_exact("Delete 2 items? [y/N] ")
    child.sendcontrol("c")
    assert finish(child) == EXIT_CANCELED
    assert two.vault_path.read_bytes() == before


def test_yes_or_no_terminal_does_not_ask(two):
    child = two.spawn(["delete", "generic", "-s", "temp.example", "-a", "a1", "--yes"])
    assert finish(child) == 0, child.before
    assert "[y/N]" not in child.before
    result = two.ok(["delete", "generic", "-s", "temp.example", "-a", "a2"])   # a script: no terminal
    assert result.stderr == "kc: deleted 1 item\n"


def test_update_all_and_conflict_free_single_update_at_a_terminal(two):
    child = two.spawn(["update", "-s", "temp.example", "--all", "--set-comment", "c"])
    child.expect_exact("Update 2 items? [y/N] ")
    child.sendline("n")
    assert finish(child) == EXIT_CANCELED
    assert "comment" not in two.ok(["find", "-s", "temp.example", "-a", "a1"]).stdout
    child = two.spawn(["update", "-s", "temp.example", "-a", "a1", "--set-comment", "c"])   # one item: no question
    assert finish(child) == 0, child.before
    assert "[y/N]" not in child.before


@pytest.mark.parametrize("command", [["delete", "generic"], ["update", "generic", "--set-comment", "x"], ["delete"],
                                     ["update", "--set-label", "x"], ["restore", "generic"]])
def test_all_without_an_attribute_is_refused(two, command):
    before = two.vault_path.read_bytes()
    result = two.run([*command, "--all"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "--all needs at least one attribute" in result.stderr and "kc: hint:" in result.stderr
    assert two.vault_path.read_bytes() == before


def test_the_class_is_inferred_from_the_matches(kc_ready):
    kc = kc_ready
    kc.add_generic("gen.example", "me", "g")
    kc.add_internet("net.example", "me", "n", "-r", "https")
    kc.ok(["update", "-s", "net.example", "--set-comment", "changed"])
    assert "comment: changed" in kc.ok(["find", "internet", "-s", "net.example"]).stdout
    assert "version: 2 (current)" in kc.ok(["history", "-s", "net.example"]).stdout
    # Items of both classes: refused, listed, nothing changed.
    before = kc.vault_path.read_bytes()
    result = kc.run(["delete", "-a", "me", "--all"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "gen.example" in result.stderr and "net.example" in result.stderr
    assert "kc delete generic" in result.stderr
    assert kc.vault_path.read_bytes() == before
    assert_failure(kc.run(["delete", "-s", "nothing.example"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    assert kc.ok(["delete", "-s", "gen.example"]).stderr == "kc: deleted 1 item\n"
    assert services(kc) == ["net.example"]


def test_history_deleted_and_restore_without_the_agent(kc_ready):
    kc = kc_ready
    assert kc.ok(["history", "--deleted"]).stderr == "kc: no deleted item can be restored\n"
    kc.add_generic("old.example", "me", "first")
    kc.ok(["update", "generic", "-s", "old.example", "--password-stdin"], input="second")
    kc.add_generic("kept.example", "me", "k")
    kc.ok(["delete", "-s", "old.example"])
    listed = kc.ok(["history", "--deleted"]).stdout
    assert "service: old.example" in listed and "deleted: " in listed and "deleted by: device " in listed, listed
    assert "kept.example" not in listed and "second" not in listed
    assert_failure(kc.run(["history", "--deleted", "-s", "kept.example"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    assert_failure(kc.run(["history", "--deleted", "-w"]), "errSecParam", EXIT_PARAM)
    assert_failure(kc.run(["restore", "-s", "nothing.example"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    assert kc.ok(["restore", "-s", "old.example", "-a", "me"]).stderr == "kc: restored 1 item\n"
    assert kc.ok(["find", "-s", "old.example", "-w"]).stdout == "second\n"
    assert kc.ok(["history", "generic", "-s", "old.example"]).stdout.count("version: ") == 3
    # Restored twice: nothing deleted matches any more; a live item of the key blocks a restore.
    assert_failure(kc.run(["restore", "-s", "old.example"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    kc.ok(["delete", "-s", "old.example"])
    kc.add_generic("old.example", "me", "new one")
    before = kc.vault_path.read_bytes()
    assert_failure(kc.run(["restore", "-s", "old.example"]), "errSecDuplicateItem", EXIT_DUPLICATE)
    assert kc.vault_path.read_bytes() == before


def test_compact_says_how_many_deleted_items_it_drops(kc_ready):
    kc = kc_ready
    for n in range(3):
        kc.add_generic(f"d{n}.example", "me", f"s{n}")
    kc.ok(["delete", "-a", "me", "--all"])
    kc.ok(["restore", "-s", "d0.example"])
    result = kc.ok(["compact"])
    assert "2 deleted items dropped for good" in result.stderr, result
    assert_failure(kc.run(["restore", "-s", "d1.example"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    assert kc.ok(["history", "--deleted"]).stdout == ""


def test_history_deleted_and_restore_through_the_agent(akc):
    akc.add_generic("old.example", "me", "agent-secret")
    akc.add_internet("ftp.example.com", "deploy", "ftp-secret", "-r", "ftp")
    unlock(akc)
    served = dict(unset=NO_SOURCE)   # no master password source: only the agent can answer
    akc.ok(["delete", "-s", "old.example", "--yes"], **served)
    akc.ok(["delete", "internet", "-s", "ftp.example.com"], **served)
    listed = akc.ok(["history", "--deleted"], **served).stdout
    assert "old.example" in listed and "ftp.example.com" in listed and "agent-secret" not in listed
    assert akc.ok(["restore", "-s", "old.example"], **served).stderr == "kc: restored 1 item\n"
    assert akc.ok(["find", "-s", "old.example", "-w"], **served).stdout == "agent-secret\n"
    assert_failure(akc.run(["restore", "-s", "old.example"], **served), "errSecItemNotFound", EXIT_NOT_FOUND)
    assert "2 deleted items" not in akc.ok(["compact"], **served).stderr
    # What the agent wrote, the vault holds.
    akc.ok(["lock"])
    assert akc.ok(["find", "-s", "old.example", "-w"]).stdout == "agent-secret\n"
    assert_failure(akc.run(["restore", "internet", "-s", "ftp.example.com"]), "errSecItemNotFound", EXIT_NOT_FOUND)


def test_every_write_says_so_and_quiet_silences_it(kc_ready):
    kc = kc_ready
    added = kc.run(["add", "generic", "-s", "w.example", "-a", "me", "--password-stdin"], input="x")
    assert added.returncode == 0 and added.stderr == "kc: added 1 item\n", added
    again = kc.run(["add", "generic", "-s", "w.example", "-a", "me", "-U", "--password-stdin"], input="y")
    assert again.stderr == "kc: updated 1 item\n", again
    for args in (["add", "generic", "-s", "q.example", "--password-stdin"], ["-q", "update", "-s", "q.example", "--set-label", "Q"],
                 ["delete", "--quiet", "-s", "q.example"], ["restore", "-q", "-s", "q.example"]):
        quiet = args if "-q" in args or "--quiet" in args else ["--quiet", *args]
        result = kc.run(quiet, input="z")
        assert result.returncode == 0 and result.stderr == "", result


def test_list_and_search_sort_the_same_way(kc_ready):
    kc = kc_ready
    for label in ["zeta", "Alpha", "mid"]:
        kc.add_generic(f"{label}.example", "me", "s", "-l", label)
    kc.add_generic("nolabel.example", "me", "s")
    by_list = [item.get("label") for item in json.loads(kc.ok(["list", "--json"]).stdout)]
    by_search = [item.get("label") for item in json.loads(kc.ok(["search", "example", "--json"]).stdout)]
    assert by_list == by_search == ["Alpha", "mid", "zeta", None]


def test_history_deleted_names_the_device_that_deleted(kc_ready):
    kc = kc_ready
    kc.ok(["sync", "reset-device", "--device-name", "laptop"])
    kc.add_generic("named.example", "me", "x")
    kc.ok(["delete", "-s", "named.example"])
    listed = kc.ok(["history", "--deleted"]).stdout
    assert re.search(r'^deleted by: "laptop" \(device [0-9a-f]{32}\)$', listed, re.M), listed


def test_history_deleted_prints_a_comment_of_several_lines_as_lines(kc_ready):
    kc_ready.add_generic("notes.example", "me", "x", "-j", "first\nsecond")
    kc_ready.ok(["delete", "-s", "notes.example"])
    listed = kc_ready.ok(["history", "--deleted"]).stdout
    assert "comment: first\n  second\n" in listed and "\\n" not in listed, listed


def test_a_key_added_again_since_the_delete_blocks_restore_with_a_hint(kc_ready):
    kc_ready.add_generic("readd.example", "me", "old")
    kc_ready.ok(["delete", "-s", "readd.example"])
    kc_ready.add_generic("readd.example", "me", "new")
    before = kc_ready.vault_path.read_bytes()
    refused = kc_ready.run(["restore", "-s", "readd.example", "-a", "me"])
    assert_failure(refused, "errSecDuplicateItem", EXIT_DUPLICATE)
    assert "added since the delete" in refused.stderr and refused.hint and "delete that item first" in refused.hint, refused
    assert kc_ready.vault_path.read_bytes() == before
