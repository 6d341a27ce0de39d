"""Ask-again items through kc's commands while the agent is unlocked: the prompt on the command's
own terminal (right and wrong password, Ctrl-C), none without a terminal or for what reveals nothing."""
import json

import pexpect

from agentsupport import NO_SOURCE, akc, status, unlock  # noqa: F401
from kcharness import EXIT_AUTH_FAILED, EXIT_CANCELED, EXIT_INTERACTION, assert_failure

PROMPT = "This item asks for the master password again. Master password for "


def marked(kc):
    kc.add_generic("bank", "me", "bank-secret", "--require-password")
    kc.add_generic("plain", "me", "plain-secret")
    unlock(kc)
    return kc


def finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_the_prompt_comes_on_the_commands_terminal(akc):
    marked(akc)
    child = akc.spawn(["find", "-s", "bank", "-w"], unset=NO_SOURCE)
    child.expect_exact(PROMPT + str(akc.vault_path) + ": ")
    child.sendline(akc.master_password)
    assert finish(child) == 0
    assert "bank-secret" in child.before and akc.master_password not in child.before
    # Asked once per command, not once per item or per field.
    child = akc.spawn(["find", "--all", "--json", "-w"], unset=NO_SOURCE)
    child.expect_exact(PROMPT)
    child.sendline(akc.master_password)
    assert finish(child) == 0
    assert child.before.count(PROMPT) == 0
    assert status(akc)[0] == 0


def test_a_wrong_password_or_ctrl_c_reveals_nothing(akc):
    marked(akc)
    child = akc.spawn(["find", "-s", "bank", "-w"], unset=NO_SOURCE)
    child.expect_exact(PROMPT)
    child.sendline("not the password")
    child.expect_exact(PROMPT)   # a second try (of three)
    child.sendcontrol("c")
    assert finish(child) == EXIT_CANCELED
    assert "bank-secret" not in child.before
    child = akc.spawn(["find", "-s", "bank", "-w"], unset=NO_SOURCE)
    child.expect_exact(PROMPT)
    child.sendcontrol("c")
    assert finish(child) == EXIT_CANCELED
    assert "bank-secret" not in child.before
    assert status(akc)[0] == 0, "a refused ask-again does not lock the agent"


def test_no_prompt_for_what_reveals_nothing_and_none_without_a_terminal(akc):
    marked(akc)
    assert "bank" in akc.ok(["list"], unset=NO_SOURCE).stdout
    assert "requirePassword: yes" in akc.ok(["find", "-s", "bank"], unset=NO_SOURCE).stdout
    assert json.loads(akc.ok(["search", "bank", "--json"], unset=NO_SOURCE).stdout)[0]["requirePassword"] is True
    assert akc.ok(["find", "-s", "plain", "-w"], unset=NO_SOURCE).stdout == "plain-secret\n"
    result = akc.run(["find", "-s", "bank", "-w"], unset=NO_SOURCE)
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert "bank-secret" not in result.stdout
    # A master password source answers the question without a terminal.
    assert akc.ok(["find", "-s", "bank", "-w"]).stdout == "bank-secret\n"


def test_an_agent_locked_while_the_prompt_waits_leaves_the_command_to_the_slow_path(akc):
    """The agent ends between the command's two requests (here `kc lock` from another terminal while
    the ask-again prompt waits): the second request was never sent, so the command goes on without
    the agent (opening the vault with the password just typed, not asking it a second time), not
    "the agent stopped before answering"."""
    marked(akc)
    child = akc.spawn(["find", "-s", "bank", "-w"], unset=NO_SOURCE)
    child.expect_exact(PROMPT)
    akc.ok(["lock"])
    assert status(akc)[0] != 0, "the agent still runs"
    child.sendline(akc.master_password)
    assert finish(child) == 0, child.before
    assert "Master password for" not in child.before, "asked a second time"
    assert "bank-secret" in child.before
    assert "stopped before answering" not in child.before


def test_three_tries_at_a_terminal_as_for_the_vaults_password(akc):
    """Two wrong passwords at the ask-again prompt, then the right one: the item is revealed (three
    tries, as the vault's master password gets at a terminal), each later prompt saying the last was
    wrong; three wrong ones end errSecAuthFailed after the third."""
    marked(akc)
    child = akc.spawn(["find", "-s", "bank", "-w"], unset=NO_SOURCE)
    child.expect_exact(PROMPT)
    child.sendline("not the password")
    child.expect_exact("The master password was wrong; try again (2 of 3).")
    child.expect_exact(PROMPT)
    child.sendline("still not it")
    child.expect_exact("(3 of 3)")
    child.expect_exact(PROMPT)
    child.sendline(akc.master_password)
    assert finish(child) == 0, child.before
    assert "bank-secret" in child.before
    child = akc.spawn(["find", "-s", "bank", "-w"], unset=NO_SOURCE)
    for attempt in range(3):
        child.expect_exact(PROMPT)
        child.sendline(f"wrong {attempt}")
    assert finish(child) == EXIT_AUTH_FAILED, child.before
    assert PROMPT not in child.before and "bank-secret" not in child.before
    assert status(akc)[0] == 0, "wrong tries do not lock the agent"


def test_a_password_file_gets_one_try(akc):
    marked(akc)
    akc.write_secret_file(akc.password_file, "not the password\n")
    result = akc.run(["find", "-s", "bank", "-w"])
    assert_failure(result, "errSecAuthFailed", EXIT_AUTH_FAILED)
    assert "try again" not in result.stderr and "bank-secret" not in result.stdout
