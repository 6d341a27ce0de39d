"""`kc ftp login` says what it is doing before the first slow step: at a terminal only (standard
error a terminal), like kc's progress lines; a script's standard error stays as it was."""
from ftpsupport import PASSWORD, USER, finish

HOST = "127.0.0.1"


def test_at_a_terminal_the_first_line_says_where_kc_connects(kc, ftp_server):
    kc.save_internet(HOST, USER, PASSWORD, port=ftp_server.port)
    child = kc.spawn(["ftp", "login", ftp_server.url()])
    child.expect_exact(f"kc: connecting to {HOST}:{ftp_server.port} ...")
    assert child.before.strip() == "", "nothing comes before it"
    child.expect_exact(f"Logged in to {HOST} as {USER}.")
    _, status = finish(child)
    assert status == 0


def test_without_a_terminal_nothing_extra_is_said(kc, ftp_server):
    result = kc.run(["ftp", "login", "--password-stdin", "--save", "no", ftp_server.url(user=USER)], input=PASSWORD)
    assert result.returncode == 0, result
    assert "connecting" not in result.stderr
