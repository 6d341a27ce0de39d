"""Fixtures for kc's FTP tests: one real FTP/FTPS server per session on 127.0.0.1 at a free
high port, always stopped (also when tests fail), and a kc home with a fresh vault per test.
`kc_bin` comes from the shared Tests/e2e/conftest.py."""
import pytest

from ftpsupport import FTPKC, start_server, stop_server


@pytest.fixture(scope="session")
def ftp_server(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp("ftpd"))
    try:
        yield server
    finally:
        stop_server(server.process)


@pytest.fixture(scope="session")
def ftps_implicit_server(tmp_path_factory):
    """A second server speaking implicit FTPS (TLS from the first byte)."""
    server = start_server(tmp_path_factory.mktemp("ftpd-implicit"), implicit_tls=True)
    try:
        yield server
    finally:
        stop_server(server.process)


@pytest.fixture(scope="session")
def ftp_plain_only_server(tmp_path_factory):
    """A server without TLS: AUTH TLS is refused."""
    server = start_server(tmp_path_factory.mktemp("ftpd-plain"), tls=False)
    try:
        yield server
    finally:
        stop_server(server.process)


@pytest.fixture
def kc(kc_bin, tmp_path):
    """The shared harness's kc (Tests/e2e/kcharness.py) with an initialised vault and FTP helpers."""
    kc = FTPKC(kc_bin, tmp_path / "home")
    kc.init()
    return kc
