"""`kc conflicts resolve` at a real pseudo-terminal (issue 19, "Safety"): a real conflict made by two
machines synced through a bare repository (the fixtures of test_sync.py); the item and the version
kept (and the device that wrote it, by its name) are shown and `[y/N]` asked; n (or Enter) keeps the conflict with exit 128 and the vault
untouched, y resolves it, --yes does not ask."""
import socket

import pexpect
import pytest

from kcharness import EXIT_CANCELED
from test_sync import pair, remote, secret  # noqa: F401  (pytest fixtures)
from test_sync_status import edit_on_both

QUESTION = " of this item? [y/N] "


def finish(child) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def resolve(kc, keep: str, *extra: str):
    return kc.spawn(["conflicts", "resolve", "generic", "-s", "shared", "--keep", keep, *extra])


@pytest.mark.parametrize("answer", ["n", ""])
def test_no_at_the_question_keeps_the_conflict(pair, answer):
    laptop, desktop = pair
    edit_on_both(laptop, desktop)
    before = desktop.vault_path.read_bytes()
    child = resolve(desktop, "other")
    child.expect_exact(QUESTION)
    assert "Keep the other version (written 20" in child.before, child.before
    # the device that wrote it by its name (the host name), as `kc conflicts` names it
    assert f'by "{socket.gethostname()}" (device ' in child.before, child.before
    assert "shared" in child.before and "me" in child.before, child.before   # the item it changes
    child.sendline(answer)
    assert finish(child) == EXIT_CANCELED, child.before
    assert "nothing was changed (errSecUserCanceled)" in child.before, child.before   # (the prefix in colour)
    assert desktop.vault_path.read_bytes() == before
    listed = desktop.ok(["conflicts"]).stdout
    assert "service: shared" in listed and "other: written" in listed
    assert secret(desktop, "shared") == "laptop-edit"


@pytest.mark.parametrize("keep, kept", [("other", "desktop-edit"), ("winner", "laptop-edit")])
def test_yes_at_the_question_resolves(pair, keep, kept):
    laptop, desktop = pair
    edit_on_both(laptop, desktop)
    child = resolve(desktop, keep)
    child.expect_exact(QUESTION)
    assert f"Keep the {'other' if keep == 'other' else 'current'} version" in child.before, child.before
    child.sendline("y")
    assert finish(child) == 0, child.before
    assert "the conflict is resolved" in child.before, child.before
    assert desktop.ok(["conflicts"]).stdout == ""
    assert secret(desktop, "shared") == kept


def test_yes_flag_does_not_ask(pair):
    laptop, desktop = pair
    edit_on_both(laptop, desktop)
    child = resolve(desktop, "other", "--yes")
    assert finish(child) == 0, child.before
    assert "[y/N]" not in child.before, child.before
    assert "the conflict is resolved: the other version is kept" in child.before, child.before
    assert desktop.ok(["conflicts"]).stdout == ""
    assert secret(desktop, "shared") == "desktop-edit"


def test_conflicts_print_a_comment_of_several_lines_as_lines(pair):
    laptop, desktop = pair
    desktop.ok(["update", "generic", "-s", "shared", "--set-comment", "line one\nline two"])
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    edit_on_both(laptop, desktop)
    listed = desktop.ok(["conflicts"]).stdout
    assert "comment: line one\n  line two\n" in listed and "\\n" not in listed, listed
