"""Through an unlocked agent, what would send a require-password item's secret somewhere else, or
take it from the other machines, asks for the master password again, as revealing it does
(security review 2026-12, I4; issue 18): changing an internet item's protocol, server, port or path
(where git-credential, netrc and ftp login send it), withdrawing it with --set-this-device-only yes,
ending a marked losing version with conflicts resolve --keep winner, and setting the mark on an existing item with add -U --require-password (as update
--set-require-password does). Other attribute changes still never ask."""
import json
import time

import pytest

from agentsupport import NO_SOURCE, akc, stop_agents, unlock, with_runtime_folder  # noqa: F401
from test_agent_ask_again_writes import assert_write_asks_again
from test_sync import pair, remote  # noqa: F401  (pytest fixtures)
from kcharness import EXIT_INTERACTION, assert_failure

WRITES = {
    "protocol": ["update", "internet", "-s", "git.example", "--set-protocol", "http"],
    "server": ["update", "internet", "-s", "git.example", "--set-server", "evil.example"],
    "port": ["update", "internet", "-s", "git.example", "--set-port", "8080"],
    "path": ["update", "internet", "-s", "git.example", "--set-path", "/elsewhere"],
    "withdraw": ["update", "internet", "-s", "git.example", "--set-this-device-only", "yes"],
    "mark by add -U": ["add", "generic", "-s", "plain", "-a", "me", "-U", "--require-password", "--generate"],
}


def prepared(kc):
    kc.add_internet("git.example", "me", "git-token", "-r", "https", "--require-password")
    kc.add_generic("plain", "me", "plain-secret")
    unlock(kc)
    return kc


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_sending_a_marked_secret_elsewhere_asks_again(akc, write):
    prepared(akc)
    assert_write_asks_again(akc, write)


def test_other_attribute_changes_of_a_marked_item_never_ask(akc):
    prepared(akc)
    quiet = dict(unset=NO_SOURCE)
    akc.ok(["update", "internet", "-s", "git.example", "--set-label", "Git"], **quiet)
    akc.ok(["update", "internet", "-s", "git.example", "--set-comment", "work"], **quiet)
    akc.ok(["update", "internet", "-s", "git.example", "--set-this-device-only", "no"], **quiet)
    item = json.loads(akc.ok(["find", "internet", "-s", "git.example", "--json"], **quiet).stdout)[0]
    assert item["label"] == "Git" and item["comment"] == "work"


def test_keeping_the_winner_over_a_marked_losing_version_asks_again(pair):
    """conflicts resolve --keep winner ends the other versions: when one of them has the mark, its
    secret is destroyed, so the unlocked agent asks as for deleting a marked item."""
    laptop, desktop = pair
    desktop.ok(["update", "generic", "-s", "shared", "--set-require-password", "yes", "--password-stdin"],
               input="desktop-marked")
    time.sleep(0.01)
    laptop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="laptop-edit")
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    assert "other: written" in laptop.ok(["conflicts"]).stdout
    with_runtime_folder(laptop)
    try:
        unlock(laptop)
        before = laptop.vault_path.read_bytes()
        resolve = ["conflicts", "resolve", "generic", "-s", "shared", "--keep", "winner"]
        assert_failure(laptop.run(resolve, unset=NO_SOURCE), "errSecInteractionNotAllowed", EXIT_INTERACTION)
        assert laptop.vault_path.read_bytes() == before
        laptop.ok(resolve)   # with the master password (a source)
        assert laptop.ok(["conflicts"], unset=NO_SOURCE).stdout == ""
    finally:
        stop_agents(laptop)
