"""`kc ftp login` through an unlocked agent with a saved password marked require-password: the master
password is asked again once, on the command's terminal, before the saved password is used, and that
answer also covers saving a corrected password over it; without a terminal nothing is sent."""
import io
import re

from agentsupport import NO_SOURCE, stop_agents, unlock, with_runtime_folder
from ftpsupport import PASSWORD, USER, finish, send_password_then_answer
from kcharness import EXIT_INTERACTION, assert_failure

HOST = "127.0.0.1"
PROMPT = "This item asks for the master password again. Master password for "


def logins_in_log(server):
    """Login attempts the server saw: every USER command it logged."""
    return [line for line in server.log_text().splitlines() if re.search(r"COMMAND USER\b", line)]


def test_a_marked_saved_password_asks_again_once(kc, ftp_server):
    with_runtime_folder(kc)
    kc.ok(["add", "internet", "-s", HOST, "-r", "ftp", "-a", USER, "-P", str(ftp_server.port), "--require-password",
           "--password-stdin"], input="stale-password")
    unlock(kc)
    try:
        users = len(logins_in_log(ftp_server))
        result = kc.run(["ftp", "login", ftp_server.url()], unset=NO_SOURCE)
        assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
        assert len(logins_in_log(ftp_server)) == users, "no login without the master password"
        child = kc.spawn(["ftp", "login", ftp_server.url()], unset=NO_SOURCE)
        child.logfile_read = transcript = io.StringIO()
        child.expect_exact(PROMPT)
        child.sendline(kc.master_password)
        child.expect(r"The server rejected the saved password for deploy@127\.0\.0\.1: 530 [^\r\n]*\r\n")
        child.expect_exact("User name [deploy]: ")
        child.sendline("")
        child.expect_exact("Password for deploy@127.0.0.1: ")
        send_password_then_answer(child, "Update the saved password for deploy@127.0.0.1? [y/N] ")
        child.expect_exact("Logged in to 127.0.0.1 as deploy.")
        rest, status = finish(child)
        assert status == 0, rest
        assert transcript.getvalue().count(PROMPT) == 1, "the update of the marked secret is covered by the same answer"
        assert kc.secret(HOST, USER).stdout == PASSWORD + "\n"
    finally:
        stop_agents(kc)

