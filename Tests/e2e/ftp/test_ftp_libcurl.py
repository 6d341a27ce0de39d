"""libcurl is loaded with dlopen by the FTP commands only: the kc binary must not link it
(that cost every command ~15 ms of dynamic loading), and a missing libcurl is a clear error."""
import ctypes
import subprocess

import pytest

from ftpsupport import PASSWORD, USER
from kcharness import EXIT_NOT_AVAILABLE



def loaded_libraries(kc, *args, input=None):
    """(result, the `file=...` lines of LD_DEBUG=files) for one kc run: every library the loader opened."""
    result = kc.run(args, input=input, env={**kc.env, "LD_DEBUG": "files"})
    lines = [line for line in result.stderr.splitlines() if "file=" in line]
    return result, lines


def test_binary_does_not_link_libcurl(kc_bin):
    ldd = subprocess.run(["ldd", kc_bin], capture_output=True, text=True, timeout=30)
    assert ldd.returncode == 0, ldd.stderr
    assert "libc.so.6" in ldd.stdout, ldd.stdout  # the listing is real
    linked = [line.strip() for line in ldd.stdout.splitlines() if "libcurl" in line]
    assert linked == [], f"{kc_bin} links libcurl again (directly or through a library): {linked}"


def test_only_ftp_login_loads_libcurl(kc, ftp_server):
    for args in (["--version"], ["list"]):
        result, lines = loaded_libraries(kc, *args)
        assert result.returncode == 0, result.stderr[-2000:]
        assert any("libc.so.6" in line for line in lines), lines  # LD_DEBUG took effect
        assert not [line for line in lines if "libcurl" in line], f"kc {' '.join(args)} loaded libcurl"

    result, lines = loaded_libraries(kc, "ftp", "login", "--password-stdin", "--save", "no",
                                     ftp_server.url(user=USER), input=PASSWORD)
    assert result.returncode == 0, result.stderr[-2000:]
    assert any("file=libcurl.so.4" in line and "dynamically loaded by" in line for line in lines), lines


def libcurl_file():
    """The file `dlopen("libcurl.so.4")` opens here (after symbolic links)."""
    ctypes.CDLL("libcurl.so.4")
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "/libcurl.so" in line:
                return line.split()[-1]
    pytest.fail("libcurl.so.4 loaded but not found in /proc/self/maps")


def test_missing_libcurl_is_a_clear_error(kc):
    # A private mount namespace where /dev/null hides libcurl's file (for both libcurl.so.4 and libcurl.so).
    hide = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
            'mount --bind /dev/null "$1" && shift && exec "$@"', "sh", libcurl_file()]
    probe = subprocess.run([*hide, "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"no unprivileged mount namespace here: {probe.stderr.strip()}")
    before = kc.vault_bytes()
    result = kc.run(["ftp", "login", "--password-stdin", "ftp://127.0.0.1:1/"], input=PASSWORD, wrapper=hide)
    stderr = result.stderr
    assert result.returncode == EXIT_NOT_AVAILABLE, stderr   # as for every missing helper program
    assert stderr.startswith("kc: error: cannot load libcurl (libcurl.so.4): "), stderr
    assert stderr.splitlines()[0].endswith("(errSecNotAvailable)"), stderr
    assert "kc: hint: install libcurl4 (Debian: apt-get install libcurl4)" in stderr, stderr
    assert kc.vault_bytes() == before
    # Everything that does not need libcurl still works there.
    assert kc.run(["list"], wrapper=hide).returncode == 0
