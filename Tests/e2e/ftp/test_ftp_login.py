"""`kc ftp login` against a real FTP/FTPS server, prompts through a real pseudo-terminal."""
import json
import re
import socket
import threading
import time

import pexpect

from ftpsupport import (OTHER_PASSWORD, OTHER_USER, PASSWORD, USER, assert_prompt_is_last, finish, free_port,
                        send_password_then_answer)
from kcharness import (EXIT_AUTH_FAILED, EXIT_CANCELED, EXIT_INTERACTION, EXIT_IO, EXIT_NO_SUCH_KEYCHAIN,
                       EXIT_NOT_TRUSTED, EXIT_PARAM)

HOST = "127.0.0.1"


def items(kc):
    result = kc.run(["list", "--json"])
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def commands_in_log(server, name):
    """The `name` commands (e.g. USER) the server received: it logs every command as it arrives."""
    return [line for line in server.log_text().splitlines() if re.search(rf"COMMAND {name}\b", line)]


def logins_in_log(server):
    """Login attempts the server saw: every USER command, answered or not."""
    return commands_in_log(server, "USER")


def test_server_log_shows_credentials_sent_by_a_client_that_hangs_up(ftp_server):
    """Control for the "no USER/PASS sent" checks: a bare USER, and a PASS, then hanging up."""
    users, passwords = len(logins_in_log(ftp_server)), len(commands_in_log(ftp_server, "PASS"))
    with socket.create_connection(("127.0.0.1", ftp_server.port), timeout=10) as s:
        s.recv(1000)
        s.sendall(b"USER leaked\r\n")
        s.recv(1000)
        s.sendall(b"PASS wrong\r\n")
    deadline = time.monotonic() + 10
    while len(commands_in_log(ftp_server, "PASS")) == passwords and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(logins_in_log(ftp_server)) == users + 1, ftp_server.log_text()[-2000:]
    assert len(commands_in_log(ftp_server, "PASS")) == passwords + 1, ftp_server.log_text()[-2000:]


def test_found_and_accepted_writes_nothing(kc, ftp_server):
    kc.save_internet(HOST, USER, PASSWORD, port=ftp_server.port)
    before = kc.vault_bytes()
    child = kc.spawn(["ftp", "login", ftp_server.url()])
    child.expect_exact(f"Logged in to {HOST} as {USER}.")
    rest, status = finish(child)
    assert status == 0
    assert "Password" not in child.before + rest and "Save" not in rest
    assert kc.vault_bytes() == before, "a successful login with the saved password writes nothing"


def test_found_rejected_then_corrected_and_updated(kc, ftp_server):
    kc.save_internet(HOST, USER, "stale-password", port=ftp_server.port)
    child = kc.spawn(["ftp", "login", ftp_server.url()])
    child.expect(r"The server rejected the saved password for deploy@127\.0\.0\.1: 530 [^\r\n]*\r\n")
    child.expect_exact("User name [deploy]: ")
    assert_prompt_is_last(child)
    child.sendline("")
    child.expect_exact("Password for deploy@127.0.0.1: ")
    send_password_then_answer(child, "Update the saved password for deploy@127.0.0.1? [y/N] ")
    child.expect_exact("Logged in to 127.0.0.1 as deploy.")
    _, status = finish(child)
    assert status == 0
    assert kc.secret(HOST, USER).stdout == PASSWORD + "\n"
    assert len(items(kc)) == 1, "updated in place, not added"


def test_not_found_then_typed_and_saved(kc, ftp_server):
    child = kc.spawn(["ftp", "login", ftp_server.url() + "/incoming"])
    child.expect(r"No saved password for 127\.0\.0\.1:\d+ \(ftp\) in the keychain\.\r\n")
    child.expect_exact("User name: ")
    assert_prompt_is_last(child)
    child.sendline(USER)
    child.expect_exact("Password for deploy@127.0.0.1: ")
    assert_prompt_is_last(child)
    send_password_then_answer(child, "Save this password in the keychain? [y/N] ")
    child.expect_exact("Logged in to 127.0.0.1 as deploy.")
    rest, status = finish(child)
    assert status == 0
    assert "saved the password for deploy@127.0.0.1" in rest
    [item] = items(kc)
    assert (item["server"], item["protocol"], item["port"], item["account"], item["path"]) == \
        (HOST, "ftp", ftp_server.port, USER, "/incoming")
    assert kc.secret(HOST, USER).stdout == PASSWORD + "\n"
    # The next login finds it: no prompt at all.
    again = kc.run(["ftp", "login", ftp_server.url()])
    assert again.returncode == 0, again.stderr
    assert again.stdout == "Logged in to 127.0.0.1 as deploy.\n"


def test_typed_and_not_saved(kc, ftp_server):
    before = kc.vault_bytes()
    child = kc.spawn(["ftp", "login", ftp_server.url(user=OTHER_USER)])
    child.expect_exact("Password for other@127.0.0.1: ")
    child.sendline(OTHER_PASSWORD)
    child.expect_exact("Save this password in the keychain? [y/N] ")
    child.sendline("")
    child.expect_exact("Logged in to 127.0.0.1 as other.")
    _, status = finish(child)
    assert status == 0
    assert kc.vault_bytes() == before
    assert items(kc) == []


def cancel_case(kc, server, keys):
    """Runs a not-found login, answering with `keys` (a list of (prompt, action)); returns the exit status."""
    child = kc.spawn(["ftp", "login", server.url()])
    for prompt, action in keys:
        child.expect_exact(prompt)
        if action == "^C":
            child.sendcontrol("c")
        elif action == "^D":
            child.sendcontrol("d")
        else:
            child.sendline(action)
    rest, status = finish(child)
    assert "Logged in" not in rest or keys[-1][0].startswith("Save")
    return status


def test_cancel_at_each_prompt(kc, ftp_server):
    before = kc.vault_bytes()
    user, password, save = "User name: ", "Password for deploy@127.0.0.1: ", "Save this password in the keychain? [y/N] "
    cases = [
        [(user, "^C")],
        [(user, "^D")],
        [(user, USER), (password, "^C")],
        [(user, USER), (password, "^D")],
        [(user, USER), (password, "")],
        [(user, USER), (password, PASSWORD), (save, "^C")],
    ]
    for keys in cases:
        assert cancel_case(kc, ftp_server, keys) == EXIT_CANCELED, keys
    assert kc.vault_bytes() == before, "canceling never writes"


def test_cancel_at_update_prompt_keeps_the_old_password(kc, ftp_server):
    kc.save_internet(HOST, USER, "stale-password", port=ftp_server.port)
    before = kc.vault_bytes()
    status = cancel_case(kc, ftp_server, [("User name [deploy]: ", ""), ("Password for deploy@127.0.0.1: ", PASSWORD),
                                          ("Update the saved password for deploy@127.0.0.1? [y/N] ", "^C")])
    assert status == EXIT_CANCELED
    assert kc.vault_bytes() == before


def test_three_wrong_attempts(kc, ftp_server):
    before = kc.vault_bytes()
    child = kc.spawn(["ftp", "login", ftp_server.url(user=USER)])
    for attempt in range(3):
        if attempt:
            child.expect_exact("User name [deploy]: ")
            child.sendline("")
        child.expect_exact("Password for deploy@127.0.0.1: ")
        child.sendline(f"wrong-{attempt}")
        child.expect(r"Login incorrect: 530 ")
    rest, status = finish(child)
    assert status == EXIT_AUTH_FAILED
    assert "errSecAuthFailed" in rest and "Save" not in rest
    assert kc.vault_bytes() == before


def test_no_terminal_fails_before_any_login(kc, ftp_server):
    seen = len(logins_in_log(ftp_server))
    result = kc.run(["ftp", "login", ftp_server.url()])
    assert result.returncode == EXIT_INTERACTION, result.stderr
    assert "errSecInteractionNotAllowed" in result.stderr
    assert "No saved password" in result.stderr
    assert len(logins_in_log(ftp_server)) == seen, "no USER/PASS sent when no password can be had"


def test_password_stdin_and_save_yes_without_terminal(kc, ftp_server):
    result = kc.run(["ftp", "login", "--password-stdin", "--save", "yes", ftp_server.url(user=USER)],
                    input=(PASSWORD + "\n").encode())
    assert result.returncode == 0, result.stderr
    assert kc.secret(HOST, USER).stdout == PASSWORD + "\n"
    wrong = kc.run(["ftp", "login", "--password-stdin", "--save", "yes", ftp_server.url(user=USER)], input=b"nope")
    assert wrong.returncode == EXIT_AUTH_FAILED, wrong.stderr
    assert kc.secret(HOST, USER).stdout == PASSWORD + "\n", "rejected credentials are never saved"


def test_server_down_fails_before_the_master_password_prompt(kc, ftp_server):
    env = dict(kc.env)
    del env["KC_MASTER_PASSWORD_FILE"]   # a look-up would have to prompt for it
    child = kc.spawn(["ftp", "login", f"ftp://127.0.0.1:{free_port()}"], env=env)
    rest, status = finish(child)
    assert status == EXIT_IO
    assert "cannot connect to 127.0.0.1" in rest and "errSecIO" in rest
    assert "password" not in rest.lower().replace("errsec", "")


def serve_once(reply):
    """A TCP server on a free port that sends `reply` to each connection and closes it (None: stays silent)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def loop():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                if reply is not None:
                    connection.sendall(reply)
                else:
                    connection.recv(100)   # say nothing until the client gives up
    threading.Thread(target=loop, daemon=True).start()
    return listener


def test_wrong_port_busy_server_and_closed_connection_are_io(kc):
    cases = [(b"HTTP/1.0 400 Bad Request\r\n\r\n", "errSecIO"),   # not an FTP server
             (b"421 Too many users, try later.\r\n", "421 Too many users"),
             (b"", "closed the connection")]
    for reply, expected in cases:
        listener = serve_once(reply)
        try:
            for scheme in ("ftp", "ftps"):
                result = kc.run(["ftp", "login", f"{scheme}://deploy@127.0.0.1:{listener.getsockname()[1]}"])
                assert result.returncode == EXIT_IO, (reply, scheme, result.stderr)
                assert expected in result.stderr and "Password" not in result.stderr, (reply, scheme, result.stderr)
        finally:
            listener.close()


def test_silent_server_times_out(kc):
    listener = serve_once(None)
    try:
        result = kc.run(["ftp", "login", "--timeout", "1", f"ftp://deploy@127.0.0.1:{listener.getsockname()[1]}"])
    finally:
        listener.close()
    assert result.returncode == EXIT_IO, result.stderr
    assert "within 1 s" in result.stderr


def test_unknown_host_is_io(kc):
    # .invalid never resolves (RFC 6761); where no resolver answers, the lookup times out instead.
    result = kc.run(["ftp", "login", "--timeout", "5", "ftp://deploy@no-such-host.invalid"])
    assert result.returncode == EXIT_IO, result.stderr
    assert "cannot resolve host name 'no-such-host.invalid'" in result.stderr or "within 5 s" in result.stderr


def test_tls_untrusted_certificate(kc, ftp_server):
    kc.save_internet(HOST, USER, PASSWORD, protocol="ftps", port=ftp_server.port)
    seen = len(logins_in_log(ftp_server))
    child = kc.spawn(["ftp", "login", ftp_server.url("ftps")])
    rest, status = finish(child)
    assert status == EXIT_NOT_TRUSTED
    assert "not trusted" in rest and "--cafile" in rest and "Password for" not in rest
    assert len(logins_in_log(ftp_server)) == seen, "no credentials sent to an untrusted server"


def test_explicit_ftps_with_cafile_typed_saved_then_found(kc, ftp_server):
    child = kc.spawn(["ftp", "login", "--cafile", ftp_server.cafile, ftp_server.url("ftps", user=USER)])
    child.expect_exact("Password for deploy@127.0.0.1: ")
    send_password_then_answer(child, "Save this password in the keychain? [y/N] ", "yes")
    _, status = finish(child)
    assert status == 0
    assert [item["protocol"] for item in items(kc)] == ["ftps"]
    again = kc.run(["ftp", "login", "--cafile", ftp_server.cafile, ftp_server.url("ftps")])
    assert again.returncode == 0, again.stderr
    assert re.search(rb"USER 'deploy' logged in", ftp_server.log.read_bytes())


def test_implicit_ftps(kc, ftps_implicit_server):
    server = ftps_implicit_server
    untrusted = kc.run(["ftp", "login", server.url("ftps-implicit", user=USER)])
    assert untrusted.returncode == EXIT_NOT_TRUSTED, untrusted.stderr
    child = kc.spawn(["ftp", "login", "--cafile", server.cafile, server.url("ftps-implicit", user=USER)])
    child.expect_exact("Password for deploy@127.0.0.1: ")
    child.sendline(PASSWORD)
    child.expect_exact("Save this password in the keychain? [y/N] ")
    child.sendline("y")
    assert finish(child)[1] == 0
    [item] = items(kc)
    assert (item["protocol"], item["port"]) == ("ftps", server.port)
    again = kc.run(["ftp", "login", "--cafile", server.cafile, server.url("ftps-implicit")])
    assert again.returncode == 0 and again.stdout == "Logged in to 127.0.0.1 as deploy.\n", again.stderr


def test_ftps_never_falls_back_to_clear_text(kc, ftp_plain_only_server):
    server = ftp_plain_only_server
    kc.save_internet(HOST, USER, PASSWORD, protocol="ftps", port=server.port)
    result = kc.run(["ftp", "login", server.url("ftps")])
    assert result.returncode == EXIT_IO, result.stderr
    assert "does not offer TLS" in result.stderr and "clear text" in result.stderr
    assert logins_in_log(server) == [], "no USER/PASS in clear text"


def test_insecure_warns_and_connects(kc, ftp_server):
    result = kc.run(["ftp", "login", "--insecure", "--password-stdin", "--save", "no", ftp_server.url("ftps", user=USER)],
                    input=PASSWORD)
    assert result.returncode == 0, result.stderr
    assert "kc: warning: --insecure: the certificate of 127.0.0.1 is not verified" in result.stderr


def test_password_saved_for_ftps_is_never_sent_over_plain_ftp(kc, ftp_server):
    kc.save_internet(HOST, USER, PASSWORD, protocol="ftps", port=ftp_server.port)
    seen = len(logins_in_log(ftp_server))
    result = kc.run(["ftp", "login", ftp_server.url(user=USER)])
    assert result.returncode == EXIT_INTERACTION, result.stderr
    assert len(logins_in_log(ftp_server)) == seen


def test_several_matches_choose_on_terminal_or_fail_without(kc, ftp_server):
    kc.save_internet(HOST, USER, PASSWORD, port=ftp_server.port)
    kc.save_internet(HOST, OTHER_USER, OTHER_PASSWORD, port=ftp_server.port)
    result = kc.run(["ftp", "login", ftp_server.url()])
    assert result.returncode == EXIT_PARAM
    assert "ftp://ACCOUNT@127.0.0.1" in result.stderr
    child = kc.spawn(["ftp", "login", ftp_server.url()])
    child.expect_exact("Use which one [1-2]: ")
    child.sendline("2")
    child.expect_exact("Logged in to 127.0.0.1 as other.")
    assert finish(child)[1] == 0
    narrowed = kc.run(["ftp", "login", ftp_server.url(user=OTHER_USER)])
    assert narrowed.returncode == 0 and "as other." in narrowed.stdout
    by_flag = kc.run(["ftp", "login", "--user", USER, ftp_server.url(user=OTHER_USER)])
    assert by_flag.returncode == 0 and "as deploy." in by_flag.stdout, "--user wins over user@"


def test_missing_vault_after_connecting(kc, ftp_server):
    kc.vault_path.unlink()
    result = kc.run(["ftp", "login", ftp_server.url(user=USER)])
    assert result.returncode == EXIT_NO_SUCH_KEYCHAIN, result.stderr
    assert "errSecNoSuchKeychain" in result.stderr and "kc init" in result.stderr


def test_bad_urls_and_flags_are_usage_errors(kc):
    for args in (["ftp://"], ["http://example.com"], ["ftp://user:pw@example.com"], ["--save", "maybe", "ftp://h"],
                 ["--timeout", "0", "ftp://h"], ["--cafile", "/nonexistent.pem", "ftps://h"]):
        result = kc.run(["ftp", "login", *args])
        assert result.returncode == EXIT_PARAM, (args, result.stderr)
    assert "pw" not in kc.run(["ftp", "login", "ftp://user:pw@example.com"]).stderr.replace("password", "")


def test_clear_text_warning_for_remote_hosts(kc):
    result = kc.run(["ftp", "login", "--timeout", "2", "ftp://deploy@no-such-host.invalid"])
    assert result.stderr.count("clear text") == 1
    local = kc.run(["ftp", "login", f"ftp://deploy@127.0.0.1:{free_port()}"])
    assert "clear text" not in local.stderr
