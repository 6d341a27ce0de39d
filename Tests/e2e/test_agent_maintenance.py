"""History, compact, check and the torn-tail repair served by the unlocked agent: no prompt and no master
password source (each fails with errSecInteractionNotAllowed without the agent); history's secrets
follow find's ask-again rule; the agent's compaction is the verified rewrite kc does itself."""
import pexpect

from agentsupport import NO_SOURCE, akc, status, unlock  # noqa: F401
from kcharness import EXIT_AUTH_FAILED, EXIT_DECODE, EXIT_INTERACTION, assert_failure
from test_agent_items import bypassing, served

PROMPT = "This item asks for the master password again. Master password for "


def three_versions(kc, service="svc", *extra):
    kc.add_generic(service, "me", "v1", *extra)
    for secret in ("v2", "v3"):
        kc.ok(["update", "generic", "-s", service, "-a", "me", "--password-stdin"], input=secret)


def test_history_needs_no_password_while_unlocked(akc):
    three_versions(akc)
    assert_failure(akc.run(["history", "generic", "-s", "svc"], unset=NO_SOURCE), "errSecInteractionNotAllowed", EXIT_INTERACTION)
    unlock(akc)
    shown = served(akc, ["history", "generic", "-s", "svc"]).stdout
    assert shown.count("version: ") == 3 and "version: 3 (current)" in shown, shown
    assert "v1" not in shown and "password:" not in shown, "secrets only with -w"
    revealed = served(akc, ["history", "generic", "-s", "svc", "-w"]).stdout
    assert [line for line in revealed.splitlines() if line.startswith("password: ")] == \
        ["password: v1", "password: v2", "password: v3"], revealed
    # The same answer as kc's own reading of the vault.
    assert revealed == bypassing(akc).ok(["history", "generic", "-s", "svc", "-w"]).stdout
    assert_failure(akc.run(["history", "generic", "-s", "nothing"], unset=NO_SOURCE), "errSecItemNotFound")


def test_history_of_a_marked_item_asks_again_only_for_secrets(akc):
    three_versions(akc, "bank", "--require-password")
    unlock(akc)
    assert served(akc, ["history", "generic", "-s", "bank"]).stdout.count("version: ") == 3
    assert_failure(akc.run(["history", "generic", "-s", "bank", "-w"], unset=NO_SOURCE),
                   "errSecInteractionNotAllowed", EXIT_INTERACTION)
    child = akc.spawn(["history", "generic", "-s", "bank", "-w"], unset=NO_SOURCE)
    for attempt in range(3):   # three tries at a terminal
        child.expect_exact(PROMPT + str(akc.vault_path) + ": ")
        child.sendline(f"not the password {attempt}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == EXIT_AUTH_FAILED and "v1" not in child.before
    child = akc.spawn(["history", "generic", "-s", "bank", "-w"], unset=NO_SOURCE)
    child.expect_exact(PROMPT)
    child.sendline(akc.master_password)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "password: v1" in child.before and "password: v3" in child.before, child.before


def test_compact_through_the_agent(akc):
    three_versions(akc)
    akc.add_generic("gone", "me", "x")
    akc.ok(["delete", "generic", "-s", "gone"])
    assert_failure(akc.run(["compact"], unset=NO_SOURCE), "errSecInteractionNotAllowed", EXIT_INTERACTION)
    unlock(akc)
    result = served(akc, ["compact"])
    assert "records -> " in result.stderr, result
    assert status(akc)[0] == 0, "the agent stays unlocked after its own rewrite"
    assert served(akc, ["history", "generic", "-s", "svc", "-w"]).stdout.count("version: ") == 1
    assert served(akc, ["find", "-s", "svc", "-w"]).stdout == "v3\n"
    # Writes go on in the new file, through the agent and beside it; kc's own reading agrees.
    served(akc, ["add", "generic", "-s", "after", "--password-stdin"], input="after-pw")
    bypassing(akc).add_generic("beside", "me", "beside-pw")
    assert served(akc, ["find", "-s", "beside", "-w"]).stdout == "beside-pw\n"
    akc.ok(["lock"])
    akc.ok(["check"])
    assert akc.ok(["find", "-s", "after", "-w"]).stdout == "after-pw\n"
    assert akc.ok(["history", "generic", "-s", "svc"]).stdout.count("version: ") == 1


def test_a_torn_tail_is_removed_through_the_agent(akc):
    akc.add_generic("kept", "me", "kept-pw")
    unlock(akc)
    writer = bypassing(akc)
    writer.env["XDG_STATE_HOME"] = str(akc.home / "writer-state")   # its write is never acknowledged to us
    writer.add_generic("torn", "me", "never-acknowledged")
    akc.vault_path.write_bytes(akc.vault_path.read_bytes()[:-7])
    assert "torn tail: incomplete final record" in served(akc, ["check"]).stdout
    # No terminal to confirm on: refused, nothing removed.
    assert_failure(akc.run(["repair"], unset=NO_SOURCE), "errSecInteractionNotAllowed", EXIT_INTERACTION)
    size = akc.vault_path.stat().st_size
    result = served(akc, ["repair", "--yes"])
    assert "removed" in result.stderr and "bytes of torn tail" in result.stderr, result
    assert akc.vault_path.stat().st_size < size
    assert "no torn tail to remove" in served(akc, ["repair", "--yes"]).stderr
    assert served(akc, ["find", "-s", "kept", "-w"]).stdout == "kept-pw\n"
    akc.ok(["lock"])
    assert "status: whole" in akc.ok(["check"]).stdout


def test_check_through_the_agent_reports_what_kc_reports_with_the_password(akc):
    for n in range(12):
        akc.add_generic(f"svc-{n}", "me", f"secret-{n}")
    assert_failure(akc.run(["check"], unset=NO_SOURCE), "errSecInteractionNotAllowed", EXIT_INTERACTION)
    unlock(akc)
    other = bypassing(akc)
    whole = served(akc, ["check"]).stdout
    assert "status: whole" in whole and "items: 12" in whole, whole
    assert whole == other.ok(["check"]).stdout
    # A record damaged in place, after the agent read it: the walk reports it as kc's own does.
    data = bytearray(akc.vault_path.read_bytes())
    data[len(data) // 2] ^= 0x01
    akc.vault_path.write_bytes(bytes(data))
    damaged = akc.run(["check"], unset=NO_SOURCE)
    assert_failure(damaged, "errSecDecode", EXIT_DECODE)
    assert "damaged: " in damaged.stdout and "status: NOT whole" in damaged.stdout, damaged
    by_password = other.run(["check"])
    assert damaged.stdout == by_password.stdout and damaged.returncode == by_password.returncode
