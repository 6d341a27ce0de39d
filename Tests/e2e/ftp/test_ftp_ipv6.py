"""kc ftp login to a real FTP/FTPS server listening on the IPv6 loopback, with a bracketed URL."""
import json
import socket

import pytest

from ftpsupport import PASSWORD, USER, finish, running_server, send_password_then_answer
from kcharness import EXIT_NOT_TRUSTED


def ipv6_loopback_available():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not ipv6_loopback_available(),
                                reason="this machine has no IPv6 loopback (::1 cannot be bound)")


@pytest.fixture(scope="module")
def ipv6_server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("ftpd-ipv6"), host="::1") as server:
        yield server


def test_bracketed_ipv6_typed_saved_then_found(kc, ipv6_server):
    url = ipv6_server.url(user=USER)
    assert url.startswith("ftp://deploy@[::1]:")
    child = kc.spawn(["ftp", "login", url])
    child.expect_exact("Password for deploy@::1: ")
    send_password_then_answer(child, "Save this password in the keychain? [y/N] ")
    _, status = finish(child)
    assert status == 0
    items = json.loads(kc.run(["find", "internet", "--all", "--json"]).stdout)
    assert [(i["server"], i["account"], i["port"]) for i in items] == [("::1", USER, ipv6_server.port)]
    again = kc.run(["ftp", "login", ipv6_server.url()])
    assert again.returncode == 0, again.stderr
    assert "Logged in to ::1 as deploy." in again.stdout + again.stderr
    assert "USER 'deploy' logged in" in ipv6_server.log_text()


def test_explicit_ftps_over_ipv6_verifies_the_certificate(kc, ipv6_server):
    kc.save_internet("::1", USER, PASSWORD, protocol="ftps", port=ipv6_server.port)
    untrusted = kc.run(["ftp", "login", ipv6_server.url("ftps")])
    assert untrusted.returncode == EXIT_NOT_TRUSTED, untrusted.stderr
    trusted = kc.run(["ftp", "login", "--cafile", ipv6_server.cafile, ipv6_server.url("ftps")])
    assert trusted.returncode == 0, trusted.stderr
