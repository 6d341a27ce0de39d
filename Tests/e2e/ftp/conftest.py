"""Fixtures for kc's FTP tests: one real FTP/FTPS server per session on 127.0.0.1 at a free
high port, always stopped (also when tests fail), and a kc home with a fresh vault per test.
`kc_bin` comes from the shared Tests/e2e/conftest.py."""
import pytest

from ftpsupport import FTPKC, running_server


@pytest.fixture(scope="session")
def ftp_server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("ftpd")) as server:
        yield server


@pytest.fixture(scope="session")
def ftps_implicit_server(tmp_path_factory):
    """A second server speaking implicit FTPS (TLS from the first byte)."""
    with running_server(tmp_path_factory.mktemp("ftpd-implicit"), implicit_tls=True) as server:
        yield server


@pytest.fixture(scope="session")
def ftp_plain_only_server(tmp_path_factory):
    """A server without TLS: AUTH TLS is refused."""
    with running_server(tmp_path_factory.mktemp("ftpd-plain"), tls=False) as server:
        yield server


@pytest.fixture
def kc(kc_bin, tmp_path):
    """The shared harness's kc (Tests/e2e/kcharness.py) with an initialised vault and FTP helpers."""
    kc = FTPKC(kc_bin, tmp_path / "home")
    kc.init()
    return kc
