"""Server replies shown on the terminal are escaped like stored attributes: a hostile server cannot
send C1 controls (a one-byte CSI) or bidi overrides to the user's terminal through kc's notices."""
import socket
import threading

from kcharness import EXIT_AUTH_FAILED

REJECTION = "530 no\u009b31m\u202egpj.exe"


class HostileServer(threading.Thread):
    """Answers every connection: greeting, 331 to USER, then REJECTION to PASS."""

    def __init__(self):
        super().__init__(daemon=True)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.listener.settimeout(30)
        self.port = self.listener.getsockname()[1]

    def run(self):
        try:
            while True:
                connection, _ = self.listener.accept()
                with connection, connection.makefile("rb") as lines:
                    connection.sendall(b"220 ready\r\n")
                    for line in lines:
                        if line.startswith(b"USER"):
                            connection.sendall(b"331 password please\r\n")
                        elif line.startswith(b"PASS"):
                            connection.sendall(REJECTION.encode() + b"\r\n")
                            break
                        else:
                            connection.sendall(b"500 no\r\n")
        except OSError:
            pass


def test_server_text_in_notices_is_escaped(kc):
    server = HostileServer()
    server.start()
    try:
        result = kc.run(["ftp", "login", "--password-stdin", "--save", "no", f"ftp://deploy@127.0.0.1:{server.port}"],
                        input="pw")
    finally:
        server.listener.close()
    assert result.returncode == EXIT_AUTH_FAILED, result
    assert "Login incorrect: 530 no\\u{009b}31m\\u{202e}gpj.exe" in result.stderr, result.stderr
    assert "\u009b" not in result.stderr and "\u202e" not in result.stderr
