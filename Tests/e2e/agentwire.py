"""A small client of the kc agent's wire protocol (Docs/AGENT.md), for tests that talk to the
agent process directly: the frozen hello and Shutdown, frames, and a few requests (status, unlock,
find, add, update, delete, lock). The numbers of this build (protocol, message kinds, attribute
and class codes) are read from `kc __agent-wire`, which generates them from kc's own types; only
the fields of those few requests are written here, as the tests need them."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import struct
import subprocess
from pathlib import Path

MAGIC = b"kc-agent"   # frozen, as the hello's layout and Shutdown's kind are
SHUTDOWN = 0x7F
VAULT_NAME_LENGTH = 32   # after the agent's hello, from protocol 3 on
TEST_BUILD = "e2e-test-build"
_TABLE = json.loads(subprocess.run([os.environ.get("KC_BIN", "kc"), "__agent-wire"], check=True,
                                   capture_output=True, text=True).stdout)
assert _TABLE["magic"] == MAGIC.decode() and _TABLE["shutdown"] == SHUTDOWN, _TABLE
PROTOCOL = _TABLE["protocol"]
ATTRIBUTES = _TABLE["attributes"]
CLASSES = _TABLE["classes"]
REQUEST = _TABLE["requests"]
REPLY = {number: name for name, number in _TABLE["replies"].items()}


def vault_name(vault: Path) -> bytes:
    """The name of `vault` in its agent's hello: BLAKE2b-256 of its canonical path."""
    return hashlib.blake2b(os.path.realpath(vault).encode(), digest_size=32, person=b"kc vault name").digest()


def socket_path(runtime_dir: Path, vault: Path) -> Path:
    """The agent's socket for `vault` with XDG_RUNTIME_DIR=`runtime_dir`."""
    return runtime_dir / "kc" / (base64.b32encode(vault_name(vault)[:15]).decode().lower() + ".sock")


def read_hello(sock: socket.socket) -> tuple[int, str, bytes | None]:
    """The agent's hello on `sock`: protocol number, build id, and the vault name that follows
    it when the agent speaks this protocol (None otherwise: nothing more is read)."""
    fixed = sock.recv(13, socket.MSG_WAITALL)
    assert fixed[:8] == MAGIC, fixed
    protocol = struct.unpack(">I", fixed[8:12])[0]
    build = sock.recv(fixed[12], socket.MSG_WAITALL).decode() if fixed[12] else ""
    name = sock.recv(VAULT_NAME_LENGTH, socket.MSG_WAITALL) if protocol == PROTOCOL else None
    return protocol, build, name


def hello(build: str = TEST_BUILD, protocol: int = PROTOCOL) -> bytes:
    raw = build.encode()
    return MAGIC + struct.pack(">IB", protocol, len(raw)) + raw


def frame(kind: int, body: bytes = b"", more: bool = False) -> bytes:
    return struct.pack(">IBB", len(body) + 2, kind, 1 if more else 0) + body


def u32(n: int) -> bytes:
    return struct.pack(">I", n)


def blob(data: bytes | str) -> bytes:
    if isinstance(data, str):
        data = data.encode()
    return u32(len(data)) + data


def query(item_class: str | None = None, **filters: str) -> bytes:
    out = bytes([0 if item_class is None else CLASSES.index(item_class) + 1]) + u32(len(filters))
    for name, value in sorted(filters.items()):
        out += bytes([ATTRIBUTES.index(name)]) + blob(value)
    return out + b"\x00\x00\x00"   # ignoreCase, matchAll, no item id


class Connection:
    """One connection: the hellos are exchanged on opening; `request` sends one frame and
    returns (reply kind name, body bytes) of the first reply frame."""

    def __init__(self, path: Path, build: str = TEST_BUILD, timeout: float = 10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.sock.sendall(hello(build))
        self.protocol, self.build, self.vault_name = read_hello(self.sock)

    @classmethod
    def on(cls, sock: socket.socket) -> "Connection":
        """A connection on a socket the caller connected and set up itself (no hello exchanged)."""
        connection = cls.__new__(cls)
        connection.sock = sock
        return connection

    def receive(self, count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise EOFError("the agent closed the connection")
            data += chunk
        return data

    def read_frame(self) -> tuple[str, bool, bytes]:
        length = struct.unpack(">I", self.receive(4))[0]
        body = self.receive(length)
        return REPLY.get(body[0], str(body[0])), body[1] == 1, body[2:]

    def request(self, kind: str, body: bytes = b"") -> tuple[str, bytes]:
        self.sock.sendall(frame(REQUEST[kind], body))
        name, _, rest = self.read_frame()
        return name, rest

    def close(self):
        self.sock.close()


def request(path: Path, kind: str, body: bytes = b"", build: str = TEST_BUILD) -> tuple[str, bytes]:
    connection = Connection(path, build)
    try:
        return connection.request(kind, body)
    finally:
        connection.close()


def unlock_body(password: str, idle: float = 900, max_ttl: float = 28800) -> bytes:
    return blob(password) + struct.pack(">dd", idle, max_ttl)


def find_body(q: bytes, revealing: bool = True, password: str | None = None) -> bytes:
    return u32(1) + q + bytes([1 if revealing else 0]) + optional_secret(password)


def first_secret(items_body: bytes) -> bytes:
    """The secret of the first item of an `items` reply body."""
    count, pos = struct.unpack(">I", items_body[:4])[0], 4
    assert count >= 1
    id_len = struct.unpack(">I", items_body[pos:pos + 4])[0]
    pos += 4 + id_len + 1
    attrs = struct.unpack(">I", items_body[pos:pos + 4])[0]
    pos += 4
    for _ in range(attrs):
        pos += 1
        pos += 4 + struct.unpack(">I", items_body[pos:pos + 4])[0]
    pos += 2   # the require-password and this-device-only marks
    pos += 16
    length = struct.unpack(">I", items_body[pos:pos + 4])[0]
    return items_body[pos + 4:pos + 4 + length]


def status(path: Path) -> dict:
    name, body = request(path, "status")
    assert name == "status", name
    unlocked = body[0] == 1
    pos = 1
    n = struct.unpack(">I", body[pos:pos + 4])[0]
    vault = body[pos + 4:pos + 4 + n].decode()
    pos += 4 + n
    pid = struct.unpack(">I", body[pos:pos + 4])[0]
    idle, absolute = struct.unpack(">dd", body[pos + 4:pos + 20])
    return {"unlocked": unlocked, "vault": vault, "pid": pid, "idle": idle, "absolute": absolute}


def attributes(item_class: str, require_password: bool = False, this_device_only: bool = False, **values: str) -> bytes:
    out = bytes([CLASSES.index(item_class) + 1]) + u32(len(values))
    for name, value in sorted(values.items()):
        out += bytes([ATTRIBUTES.index(name)]) + blob(value)
    return out + bytes([1 if require_password else 0, 1 if this_device_only else 0])


def add_body(item_class: str, secret: bytes | str, update_existing: bool = False, require_password: bool = False,
             password: str | None = None, **values: str) -> bytes:
    return (attributes(item_class, require_password, **values) + blob(secret) + bytes([1 if update_existing else 0])
            + optional_secret(password))


def delete_body(q: bytes, password: str | None = None) -> bytes:
    return q + optional_secret(password)


def optional_secret(password: str | None) -> bytes:
    return b"\x00" if password is None else b"\x01" + blob(password)


def update_body(q: bytes, require_password: bool | None = None, password: str | None = None,
                this_device_only: bool | None = None, secret: bytes | None = None) -> bytes:
    """An update that changes no attribute, only (maybe) the secret and the marks."""
    def optional_bool(flag: bool | None) -> int:
        return 0 if flag is None else (2 if flag else 1)
    new_secret = b"\x00" if secret is None else b"\x01" + blob(secret)
    return (q + u32(0) + new_secret + bytes([optional_bool(require_password), optional_bool(this_device_only)])
            + optional_secret(password))
