"""Writes that replace or destroy the secret of a require-password item ask for the master password
again through an unlocked agent, as revealing it does: `add -U`, `update` with a new secret, `delete`,
`security add-generic-password -U` and `delete-generic-password`, and `git-credential erase` (and `netrc`
reveals it). A right password on the command's
terminal lets the write through, a wrong one or none (no terminal) leaves the vault as it was; writes and
bulk reveals of unmarked items never ask."""
import json

import pexpect
import pytest

from agentsupport import NO_SOURCE, akc, unlock  # noqa: F401
from kcharness import EXIT_AUTH_FAILED, EXIT_INTERACTION, EXIT_NOT_FOUND, assert_failure

PROMPT = "This item asks for the master password again. Master password for "

# Each write of the marked item bank (account me), and how to tell it happened.
WRITES = {
    "add -U": ["add", "generic", "-s", "bank", "-a", "me", "-U", "--generate"],
    "update of the secret": ["update", "generic", "-s", "bank", "--generate"],
    "delete": ["delete", "generic", "-s", "bank", "--yes"],
    "security delete": ["security", "delete-generic-password", "-s", "bank"],
    "security add -U": ["security", "add-generic-password", "-U", "-s", "bank", "-a", "me", "-w", "new-secret"],
}


def marked(kc):
    kc.add_generic("bank", "me", "bank-secret", "--require-password")
    kc.add_generic("plain", "me", "plain-secret")
    unlock(kc)
    return kc


def bank_secret(kc) -> str | None:
    """The bank item's secret (read with the master password source), None when it is gone."""
    result = kc.run(["find", "-s", "bank", "-w"])
    if result.returncode == EXIT_NOT_FOUND:
        return None
    assert result.returncode == 0, result
    return result.stdout


def finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def assert_write_asks_again(kc, write):
    """`write`, through the unlocked agent, asks for the master password again: without a terminal or
    a password source, and with three wrong ones, it is refused and the vault stays byte-identical; with
    the right one it is asked once and the write goes through."""
    before = kc.vault_path.read_bytes()
    # No terminal and no password source: refused, nothing written.
    assert_failure(kc.run(write, unset=NO_SOURCE), "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert kc.vault_path.read_bytes() == before
    # Wrong passwords on the terminal (three tries): refused, nothing written.
    child = kc.spawn(write, unset=NO_SOURCE)
    for attempt in range(3):
        child.expect_exact(PROMPT + str(kc.vault_path) + ": ")
        child.sendline(f"not the password {attempt}")
    assert finish(child) == EXIT_AUTH_FAILED
    assert kc.vault_path.read_bytes() == before
    # The right one: asked once, and the write goes through.
    child = kc.spawn(write, unset=NO_SOURCE)
    child.expect_exact(PROMPT)
    child.sendline(kc.master_password)
    assert finish(child) == 0
    assert child.before.count(PROMPT) == 0
    assert kc.vault_path.read_bytes() != before


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_a_write_of_a_marked_secret_asks_again(akc, write):
    marked(akc)
    assert_write_asks_again(akc, write)
    assert bank_secret(akc) != "bank-secret\n"
    assert akc.ok(["find", "-s", "plain", "-w"], unset=NO_SOURCE).stdout == "plain-secret\n"


def test_one_prompt_for_a_command_that_deletes_several_marked_items(akc):
    akc.add_generic("bank", "other", "other-secret", "--require-password")
    marked(akc)
    child = akc.spawn(["delete", "generic", "-s", "bank", "--all", "--yes"], unset=NO_SOURCE)
    child.expect_exact(PROMPT)
    child.sendline(akc.master_password)
    assert finish(child) == 0
    assert child.before.count(PROMPT) == 0
    assert bank_secret(akc) is None


def test_attributes_and_unmarked_items_never_ask(akc):
    """Without a terminal or a password source: what neither reveals nor replaces a marked secret
    goes through, bulk reveals and writes of unmarked items included."""
    marked(akc)
    quiet = dict(unset=NO_SOURCE)
    akc.ok(["update", "generic", "-s", "bank", "--set-label", "My bank"], **quiet)
    assert json.loads(akc.ok(["find", "-s", "bank", "--json"], **quiet).stdout)[0]["label"] == "My bank"
    assert "bank" in akc.ok(["list"], **quiet).stdout and "bank" in akc.ok(["search", "bank"], **quiet).stdout
    akc.ok(["add", "generic", "-s", "plain", "-a", "me", "-U", "--password-stdin"], input="plain-2", **quiet)
    akc.ok(["update", "generic", "-s", "plain", "--password-stdin"], input="plain-3", **quiet)
    akc.ok(["delete", "generic", "-s", "plain"], **quiet)
    assert bank_secret(akc) == "bank-secret\n"
    # Bulk reveals and writes of a vault without marked items.
    akc.ok(["delete", "generic", "-s", "bank"])
    for n in range(3):
        akc.add_generic(f"svc{n}", "me", f"secret-{n}")
    assert [item["password"] for item in json.loads(akc.ok(["find", "--all", "--json", "-w"], **quiet).stdout)] \
        == ["secret-0", "secret-1", "secret-2"]
    assert len(json.loads(akc.ok(["export", "--format", "json"], **quiet).stdout)) == 3
    akc.ok(["update", "generic", "-a", "me", "--all", "--password-stdin"], input="same", **quiet)
    akc.ok(["delete", "generic", "-a", "me", "--all"], **quiet)
    assert akc.ok(["list"], **quiet).stdout == ""


def test_git_credential_erase_of_a_marked_item_asks_again(akc):
    akc.add_internet("h", "alice", "bank-secret", "-r", "https", "--require-password")
    unlock(akc)
    before = akc.vault_path.read_bytes()
    request = "protocol=https\nhost=h\nusername=alice\n\n"
    result = akc.run(["git-credential", "erase"], input=request, unset=NO_SOURCE)
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert akc.vault_path.read_bytes() == before
    child = akc.spawn(["git-credential", "erase"], unset=NO_SOURCE)
    child.send(request)
    child.sendeof()
    child.expect_exact(PROMPT)
    child.sendline(akc.master_password)
    assert finish(child) == 0
    assert "alice" not in akc.ok(["list"], unset=NO_SOURCE).stdout


def test_netrc_of_a_marked_item_asks_again(akc):
    akc.add_internet("h", "alice", "bank-secret", "-r", "https", "--require-password")
    akc.add_internet("other", "bob", "plain-secret", "-r", "https")
    unlock(akc)
    assert "plain-secret" in akc.ok(["netrc", "-s", "other"], unset=NO_SOURCE).stdout
    result = akc.run(["netrc"], unset=NO_SOURCE)
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert result.stdout == ""
    child = akc.spawn(["netrc", "--force"], unset=NO_SOURCE)
    child.expect_exact(PROMPT)
    child.sendline(akc.master_password)
    assert finish(child) == 0
    assert "bank-secret" in child.before and "plain-secret" in child.before
