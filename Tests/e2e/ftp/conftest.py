"""Fixtures for kc's FTP tests: one real FTP/FTPS server per session on 127.0.0.1 at a free
high port, always stopped (also when tests fail), and a kc home with a fresh vault per test."""
import shutil

import pytest

from ftpsupport import KC, kc_binary, start_server, stop_server


@pytest.fixture(scope="session")
def ftp_server(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp("ftpd"))
    try:
        yield server
    finally:
        stop_server(server.process)


@pytest.fixture(scope="session")
def kc_bin():
    return kc_binary()


@pytest.fixture
def kc(kc_bin, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    yield KC(kc_bin, home)
    shutil.rmtree(home, ignore_errors=True)
