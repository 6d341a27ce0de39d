"""Support for kc's FTP end-to-end tests: the pyftpdlib server (plain FTP and explicit FTPS
with a certificate made at test time), kc in a temporary HOME, and helpers.

kc itself comes from the shared harness, Tests/e2e/kcharness.py (binary: KC_BIN).
"""
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pexpect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kcharness import KC  # noqa: E402  (the one e2e harness)

HERE = Path(__file__).resolve().parent
USER = "deploy"
# Spaces, a quote and a backslash: exercises netrc quoting and the terminal reader.
PASSWORD = 'Ftp s3cret"\\Q7'
OTHER_USER = "other"
OTHER_PASSWORD = "other-pw-81"
REPORT = b"id,total\n1,42\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class FTPServer:
    port: int
    cafile: str
    root: Path
    log: Path
    process: subprocess.Popen = field(repr=False)
    host: str = "127.0.0.1"

    def url(self, scheme="ftp", user=None, port=None):
        """ftp://[user@]HOST:PORT (scheme ftp, ftps or ftps-implicit; an IPv6 host in brackets)."""
        who = f"{user}@" if user else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{who}{host}:{port or self.port}"

    def log_text(self):
        return self.log.read_text() if self.log.exists() else ""


def make_certificate(folder: Path):
    """A self-signed certificate valid for IP 127.0.0.1 and ::1, made with openssl for this run."""
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=kc test ftpd",
         "-addext", "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True)
    combined = folder / "combined.pem"
    combined.write_bytes(key.read_bytes() + cert.read_bytes())
    return str(cert), str(combined)


def start_server(folder: Path, tls=True, implicit_tls=False, host="127.0.0.1", certificate=None):
    """`certificate`: (CA file to trust, PEM with the server's key and certificate); default a
    self-signed certificate made here."""
    folder.mkdir(parents=True, exist_ok=True)
    root = folder / "root"
    root.mkdir(exist_ok=True)
    (root / "report.csv").write_bytes(REPORT)
    cafile, combined = certificate or make_certificate(folder)
    portfile, log, users = folder / "port", folder / "ftpd.log", folder / "users"
    users.write_text(f"{USER}:{PASSWORD}\n{OTHER_USER}:{OTHER_PASSWORD}\n")
    users.chmod(0o600)
    args = [sys.executable, str(HERE / "ftpd_server.py"), "--port", "0", "--portfile", str(portfile),
            "--root", str(root), "--log", str(log), "--fail-delay", "0",
            "--users-file", str(users), "--host", host]
    if tls:
        args += ["--tls-cert", combined]
    if implicit_tls:
        args += ["--implicit-tls"]
    out = open(folder / "ftpd.out", "w")
    process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    out.close()
    deadline = time.time() + 15
    while not portfile.exists():
        if process.poll() is not None or time.time() > deadline:
            stop_server(process)
            raise RuntimeError("FTP test server did not start:\n" + (folder / "ftpd.out").read_text())
        time.sleep(0.05)
    port = int(portfile.read_text())
    with socket.create_connection((host, port), timeout=5):
        pass
    return FTPServer(port=port, cafile=cafile, root=root, log=log, process=process, host=host)


@contextmanager
def running_server(folder: Path, **options):
    """`start_server(folder, **options)`, always stopped afterwards (also when tests fail)."""
    server = start_server(folder, **options)
    try:
        yield server
    finally:
        stop_server(server.process)


def stop_server(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class FTPKC(KC):
    """The harness's kc (temporary HOME, master password file, fast KDF) with the helpers these
    tests use: internet items and the vault's bytes."""

    def save_internet(self, server, account, password, protocol="ftp", port=None):
        args = ["add", "internet", "-s", server, "-r", protocol, "-a", account, "--password-stdin"]
        if port is not None:
            args += ["-P", str(port)]
        return self.ok(args, input=password)

    def secret(self, server, account):
        return self.run(["find", "internet", "-s", server, "-a", account, "-w"])

    def vault_bytes(self):
        return self.vault_path.read_bytes()


def finish(child):
    """Waits for the spawned kc to end; returns (everything it wrote after the last expect, exit status)."""
    child.expect(pexpect.EOF)
    rest = child.before
    child.close()
    return rest, child.exitstatus


def send_password_then_answer(child, question, answer="y"):
    """Types the test password at the password prompt kc shows, then answers `question` (save or update)."""
    child.sendline(PASSWORD)
    child.expect_exact(question)
    assert PASSWORD not in child.before, "the password was echoed"
    assert_prompt_is_last(child)
    child.sendline(answer)


def assert_prompt_is_last(child, quiet=0.3):
    """After an expected prompt: nothing more is written (no colour codes, no late lines) until we answer."""
    try:
        extra = child.read_nonblocking(size=1000, timeout=quiet)
    except pexpect.TIMEOUT:
        extra = ""
    assert extra == "", f"written after the prompt: {extra!r}"
    assert "\x1b" not in child.before + child.after, "colour or control codes around a prompt"

