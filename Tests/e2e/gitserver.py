"""A small smart-HTTP git server on 127.0.0.1 that requires HTTP Basic authentication.

`GitServer(root, user, password)` serves the bare repositories under `root` through
`git http-backend` (run as a CGI program for each request) to clients that send the right
`Authorization` header, and answers 401 with a `WWW-Authenticate: Basic` challenge otherwise.
It runs in a thread of the test process; `.url(name)` is a repository's address, `.requests` counts
the requests by outcome ("denied", "served").
"""
from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit


def _backend() -> str:
    exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=True).stdout.strip()
    return os.path.join(exec_path, "git-http-backend")


class GitServer:
    def __init__(self, root: Path, user: str, password: str):
        self.root = Path(root)
        self.user = user
        self.expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.requests: Counter = Counter()
        self.backend = _backend()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def url(self, repository: str) -> str:
        return f"http://127.0.0.1:{self.port}/{repository}"

    def create_repository(self, name: str) -> None:
        """A bare repository with one commit on main, served for fetch."""
        bare = self.root / name
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
        work = self.root / (name + ".work")
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
               "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
        subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True, env=env)
        (work / "README").write_text("hello\n")
        subprocess.run(["git", "-C", str(work), "add", "README"], check=True, env=env)
        subprocess.run(["git", "-C", str(work), "commit", "-qm", "first"], check=True, env=env)
        subprocess.run(["git", "-C", str(work), "push", "-q", str(bare), "main"], check=True, env=env)

    def start(self) -> "GitServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, format, *args):  # quiet: pytest shows failures, not access logs
                pass

            def do_GET(self):
                self._serve()

            def do_POST(self):
                self._serve()

            def _serve(self):
                if self.headers.get("Authorization") != server.expected:
                    server.requests["denied"] += 1
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="kc test"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                server.requests["served"] += 1
                self._run_backend(self._body())

            def _body(self) -> bytes:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    return self.rfile.read(length)
                if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
                    return b""
                body = b""
                while (size := int(self.rfile.readline().strip(), 16)) > 0:
                    body += self.rfile.read(size)
                    self.rfile.readline()
                self.rfile.readline()
                return body

            def _run_backend(self, body: bytes):
                target = urlsplit(self.path)
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_PROJECT_ROOT": str(server.root),
                       "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": target.path, "QUERY_STRING": target.query,
                       "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                       "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": server.user, "REMOTE_ADDR": "127.0.0.1",
                       "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                       "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", "")}
                output = subprocess.run([server.backend], input=body, env=env, capture_output=True).stdout
                head, _, payload = output.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
