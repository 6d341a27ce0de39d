"""`kc netrc` never hands one protocol's password to a client of another, and writes only lines
every netrc reader reads the same way; with real curl against the test server."""
import netrc as pynetrc

from kcharness import EXIT_NOT_FOUND, EXIT_PARAM

from ftpsupport import OTHER_PASSWORD, OTHER_USER, PASSWORD, REPORT, USER
from test_ftp_netrc import HOST, curl_with_netrc


def logins(server, user):
    return server.log_text().count(f"USER '{user}' logged in")


def test_items_of_several_protocols_for_one_server_are_refused(kc, ftp_server, tmp_path):
    kc.save_internet(HOST, USER, PASSWORD, port=ftp_server.port)
    # Newer, for the same host: an imaps password (the test server happens to accept it for FTP).
    kc.save_internet(HOST, OTHER_USER, OTHER_PASSWORD, protocol="imaps")
    before = logins(ftp_server, OTHER_USER)
    output = tmp_path / "report.csv"
    fetched = curl_with_netrc(kc, ftp_server, output)
    assert fetched.returncode != 0, "curl got credentials although the items span two protocols"
    assert not output.exists() or output.read_bytes() != REPORT
    assert logins(ftp_server, OTHER_USER) == before, "the imaps password was sent over ftp"

    result = kc.run(["netrc", "-s", HOST])
    assert result.returncode == EXIT_PARAM and result.stdout == ""
    stderr = result.stderr
    assert stderr.startswith(f"kc: error: 2 items for {HOST} span several protocols or ports"), stderr
    assert f"ftp port {ftp_server.port} (account {USER})" in stderr and f"imaps (account {OTHER_USER})" in stderr
    assert "(errSecParam)" in stderr and "kc: hint: choose one with -r PROTOCOL" in stderr
    assert OTHER_PASSWORD not in result.stderr and PASSWORD not in result.stderr

    # Narrowed to ftp, curl logs in with the ftp item.
    fetched = curl_with_netrc(kc, ftp_server, output, netrc_args=f"-s {HOST} -r ftp")
    assert fetched.returncode == 0, fetched.stderr
    assert output.read_bytes() == REPORT
    assert logins(ftp_server, OTHER_USER) == before


def test_items_of_several_ports_are_refused_until_a_port_is_chosen(kc, ftp_server, tmp_path):
    kc.save_internet(HOST, USER, PASSWORD, port=ftp_server.port)
    kc.save_internet(HOST, OTHER_USER, OTHER_PASSWORD, port=ftp_server.port + 1)
    refused = kc.run(["netrc", "-s", HOST, "-r", "ftp"])
    assert refused.returncode == EXIT_PARAM and refused.stdout == "", refused.stderr
    chosen = kc.run(["netrc", "-s", HOST, "-P", str(ftp_server.port)])
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.stdout.startswith(f"machine {HOST} login {USER} password ")
    output = tmp_path / "report.csv"
    fetched = curl_with_netrc(kc, ftp_server, output, netrc_args=f"-s {HOST} -P {ftp_server.port}")
    assert fetched.returncode == 0, fetched.stderr
    assert output.read_bytes() == REPORT
    bad_port = kc.run(["netrc", "-P", "70000"])
    assert bad_port.returncode == EXIT_PARAM and "port number from 1 to 65535" in bad_port.stderr


def old_reader(text):
    """How readers without quoting (curl before 7.84, inetutils) split a line: at whitespace."""
    entries = {}
    words = text.split()
    for index, word in enumerate(words):
        if word == "machine":
            entries[words[index + 1]] = words[index + 3] if words[index + 2] == "login" else None
    return entries


def test_names_other_readers_would_split_and_tab_passwords_are_skipped(kc, ftp_server, tmp_path):
    kc.save_internet(HOST, USER, PASSWORD, port=ftp_server.port)
    # An account that old readers would turn into tokens of their own (e.g. from an imported file).
    kc.save_internet("files.example.com", f"bob machine {HOST} login {OTHER_USER}", "b0b")
    kc.save_internet("tabs.example.com", "carol", "tab\tpw")
    result = kc.run(["netrc"])
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith(f"machine {HOST} login {USER} password ") and text.count("\n") == 1, text
    stderr = result.stderr
    assert "kc: warning: skipped files.example.com (account bob machine" in stderr
    assert "kc: warning: skipped tabs.example.com (account carol): its password holds a line break or tab" in stderr
    # Every reader sees the same machine and login; Python reads the quoted password back exactly.
    assert old_reader(text) == {HOST: USER}
    netrc_file = tmp_path / "netrc"
    netrc_file.write_text(text)
    netrc_file.chmod(0o600)
    assert pynetrc.netrc(str(netrc_file)).hosts == {HOST: (USER, "", PASSWORD)}
    output = tmp_path / "report.csv"
    fetched = curl_with_netrc(kc, ftp_server, output, netrc_args="")
    assert fetched.returncode == 0, fetched.stderr
    assert output.read_bytes() == REPORT
    assert kc.run(["netrc", "-s", "tabs.example.com"]).returncode == EXIT_NOT_FOUND
