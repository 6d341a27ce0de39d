"""FTP hardening: no TLS key log, --cafile trusts only its file, --insecure asks before sending a
saved password, loopback means an address, FTP warnings in kc's own form."""
import os
import shutil
import subprocess

import pytest

from kcharness import EXIT_CANCELED, EXIT_INTERACTION, EXIT_IO, EXIT_NOT_TRUSTED

from ftpsupport import PASSWORD, USER, finish, running_server
from test_ftp_login import logins_in_log

HOST = "127.0.0.1"


def test_no_tls_key_log_even_with_sslkeylogfile(kc, ftp_server, tmp_path):
    keylog = tmp_path / "keylog.txt"
    result = kc.run(["ftp", "login", "--password-stdin", "--save", "no", "--cafile", ftp_server.cafile,
                     ftp_server.url("ftps", user=USER)], input=PASSWORD, env={"SSLKEYLOGFILE": str(keylog)})
    assert result.returncode == 0, result.stderr
    assert "Logged in to 127.0.0.1 as deploy." in result.stdout
    assert not keylog.exists(), f"TLS session keys written: {keylog.read_text()[:200]}"
    # Control: the same libcurl, given the variable, does write a key log.
    control = subprocess.run(["curl", "-sS", "--max-time", "20", "--cacert", ftp_server.cafile, "--ssl-reqd",
                              "--user", "nobody:wrong", f"{ftp_server.url()}/"],
                             env=kc.environment({"SSLKEYLOGFILE": str(keylog)}), capture_output=True, timeout=60)
    assert keylog.exists() and "CLIENT_" in keylog.read_text(), control.stderr


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def rogue_ca_server(tmp_path_factory):
    """A server whose certificate is issued by a CA ("rogue") that only the system store trusts."""
    folder = tmp_path_factory.mktemp("rogue-ca")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=kc test rogue CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
            "-keyout", "ca-key.pem", "-out", "ca.pem", cwd=folder)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kc test ftpd", "-keyout", "key.pem",
            "-out", "server.csr", cwd=folder)
    (folder / "ext").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
            "-days", "2", "-extfile", "ext", "-out", "cert.pem", cwd=folder)
    combined = folder / "combined.pem"
    combined.write_bytes((folder / "key.pem").read_bytes() + (folder / "cert.pem").read_bytes())
    # The stand-in system store: the rogue CA as the bundle and in the hashed folder.
    store = folder / "certs"
    store.mkdir()
    shutil.copy(folder / "ca.pem", store / "ca-certificates.crt")
    shutil.copy(folder / "ca.pem", store / "rogue.pem")
    subprocess.run(["openssl", "rehash", str(store)], check=True, capture_output=True, timeout=60)
    with running_server(folder / "server", certificate=(str(folder / "ca.pem"), str(combined))) as server:
        yield server, store


def with_system_store(store, *command):
    """`command` in a private mount namespace where /etc/ssl/certs (libcurl's CA file and folder) is `store`."""
    return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
            'mount --bind "$1" /etc/ssl/certs && shift && exec "$@"', "sh", str(store), *command]


def test_cafile_trusts_only_that_file(kc, rogue_ca_server, ftp_server):
    server, store = rogue_ca_server
    probe = subprocess.run(with_system_store(store, "true"), capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"no unprivileged mount namespace here: {probe.stderr.strip()}")

    def login(*flags):
        return subprocess.run(with_system_store(store, *kc.command(["ftp", "login", "--password-stdin", "--save", "no",
                                                                     *flags, server.url("ftps", user=USER)])),
                              input=PASSWORD.encode(), capture_output=True, env=kc.env, timeout=60,
                              start_new_session=True)

    # Control: the stand-in system store is in effect (kc trusts the rogue CA without --cafile).
    trusted = login()
    assert trusted.returncode == 0, trusted.stderr
    # With --cafile naming another CA, the system store is not consulted: refused before any login.
    before = len(logins_in_log(server))
    refused = login("--cafile", ftp_server.cafile)
    stderr = refused.stderr.decode()
    assert refused.returncode == EXIT_NOT_TRUSTED, stderr
    assert "(errSecNotTrusted)" in stderr and f"--cafile trusts only the CAs in {ftp_server.cafile}" in stderr
    assert len(logins_in_log(server)) == before
    # The right CA in --cafile works.
    assert login("--cafile", server.cafile).returncode == 0


def test_insecure_asks_before_sending_a_saved_password(kc, ftp_server):
    kc.save_internet(HOST, USER, PASSWORD, protocol="ftps", port=ftp_server.port)
    seen = len(logins_in_log(ftp_server))
    # No terminal: nothing sent, and kc says why.
    result = kc.run(["ftp", "login", "--insecure", ftp_server.url("ftps")])
    stderr = result.stderr
    assert result.returncode == EXIT_INTERACTION, stderr
    assert "kc: warning: --insecure: the certificate of 127.0.0.1 is not verified; a saved password is sent only if you confirm" in stderr
    assert "the saved password for deploy@127.0.0.1 was not sent" in stderr and "(errSecInteractionNotAllowed)" in stderr
    assert len(logins_in_log(ftp_server)) == seen, "the saved password went to an unverified server"
    # On a terminal: asked; "no" sends nothing; "y" logs in.
    question = "The certificate of 127.0.0.1 is not verified: send the saved password for deploy anyway? [y/N] "
    child = kc.spawn(["ftp", "login", "--insecure", ftp_server.url("ftps")])
    child.expect_exact(question)
    child.sendline("n")
    assert finish(child)[1] == EXIT_CANCELED
    assert len(logins_in_log(ftp_server)) == seen
    child = kc.spawn(["ftp", "login", "--insecure", ftp_server.url("ftps")])
    child.expect_exact(question)
    child.sendline("y")
    child.expect_exact("Logged in to 127.0.0.1 as deploy.")
    assert finish(child)[1] == 0
    assert len(logins_in_log(ftp_server)) == seen + 1


def test_loopback_means_an_address_not_a_name(kc):
    for host in ("127.attacker.invalid", "127.0.0.1.invalid"):
        result = kc.run(["ftp", "login", "--timeout", "2", f"ftp://deploy@{host}:2121"])
        assert result.stderr.startswith(f"kc: warning: ftp:// sends the password to {host} in clear text"), result
        assert result.returncode == EXIT_IO, result
    local = kc.run(["ftp", "login", "--timeout", "2", "ftp://deploy@127.0.0.2:1"])
    assert "clear text" not in local.stderr and local.returncode == EXIT_IO, local
