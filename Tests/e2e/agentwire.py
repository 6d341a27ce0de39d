"""A small client of the kc agent's wire protocol (Docs/AGENT.md), for tests that talk to the
agent process directly. Only what AGENT.md freezes is written here: the hello, the framing and
Shutdown. The numbers of this build come from `kc __agent-wire`; a request's fields are written by
kc's own AgentRequest (`kc __agent-wire encode`, from a JSON description: `*_body` below build
them) and replies are read by kc's own AgentReply (`kc __agent-wire decode`). Raw bytes can still
be framed and sent, for tests of malformed input."""
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
KC_BIN = os.environ.get("KC_BIN", "kc")
_TABLE = json.loads(subprocess.run([KC_BIN, "__agent-wire"], check=True, capture_output=True, text=True).stdout)
assert _TABLE["magic"] == MAGIC.decode() and _TABLE["shutdown"] == SHUTDOWN, _TABLE
PROTOCOL = _TABLE["protocol"]
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


def frame(kind: int, body: bytes | dict = b"", more: bool = False) -> bytes:
    """A frame of `kind`: of raw `body` bytes (framing is frozen; a malformed body is the test's
    choice), or, for a description (dict), the frames kc encodes for it."""
    if isinstance(body, dict):
        encoded = encode(body)
        assert encoded[4] == kind, (body, encoded[4], kind)
        return encoded
    return struct.pack(">IBB", len(body) + 2, kind, 1 if more else 0) + body


def _wire(mode: str, data: bytes) -> bytes:
    result = subprocess.run([KC_BIN, "__agent-wire", mode], input=data, capture_output=True)
    assert result.returncode == 0, f"kc __agent-wire {mode}: {result.stderr.decode()}"
    return result.stdout


_ENCODED: dict[str, bytes] = {}


def encode(description: dict) -> bytes:
    """The frames kc's own AgentRequest writes for `description` (a JSON object: `kind` and the
    case's fields, Docs/AGENT.md "Test clients"), given to kc on standard input only. Cached: a
    test polls some requests (status) many times."""
    text = json.dumps(description, sort_keys=True)
    if text not in _ENCODED:
        _ENCODED[text] = _wire("encode", text.encode())
    return _ENCODED[text]


def decode(message: bytes) -> dict:
    """One reply message (its frames as received) as kc's own AgentReply reads it, in JSON."""
    return json.loads(_wire("decode", message))


def _secret(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def query(item_class: str | None = None, **filters: str) -> dict:
    return {"class": item_class, "filters": filters}


class Connection:
    """One connection: the hellos are exchanged on opening; `request` sends one request and
    returns the kind name of the first reply message and that message's frames (for `decode`)."""

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

    def read_message(self) -> tuple[str, bytes]:
        """The frames of one message (up to one without the more flag) and its kind's name."""
        message, more = b"", True
        while more:
            header = self.receive(4)
            body = self.receive(struct.unpack(">I", header)[0])
            message += header + body
            more = body[1] == 1
        return REPLY.get(message[4], str(message[4])), message

    def request(self, kind: str, body: bytes | dict | None = None) -> tuple[str, bytes]:
        """Sends `body` (a description, raw bytes, or None: the request of `kind` without fields)."""
        self.sock.sendall(frame(REQUEST[kind], {"kind": kind} if body is None else body))
        return self.read_message()

    def close(self):
        self.sock.close()


def request(path: Path, kind: str, body: bytes | dict | None = None, build: str = TEST_BUILD) -> tuple[str, bytes]:
    connection = Connection(path, build)
    try:
        return connection.request(kind, body)
    finally:
        connection.close()


# Descriptions of the requests the tests send (AgentRequest's cases, fields by their labels).

def unlock_body(password: str, idle: float = 900, max_ttl: float = 28800) -> dict:
    return {"kind": "unlock", "password": password, "idleMilliseconds": round(idle * 1000),
            "maxTTLMilliseconds": round(max_ttl * 1000)}


def find_body(q: dict, revealing: bool = True, password: str | None = None) -> dict:
    return {"kind": "find", "queries": [q], "revealing": revealing, "password": password}


def all_items_body(revealing: bool = True, password: str | None = None) -> dict:
    return {"kind": "allItems", "revealing": revealing, "password": password}


def attributes(item_class: str, require_password: bool = False, this_device_only: bool = False, **values: str) -> dict:
    return {"class": item_class, "values": values, "requirePassword": require_password, "thisDeviceOnly": this_device_only}


def add_body(item_class: str, secret: bytes | str, update_existing: bool = False, require_password: bool = False,
             password: str | None = None, **values: str) -> dict:
    return {"kind": "add", "attributes": attributes(item_class, require_password, **values), "secret": _secret(secret),
            "updateExisting": update_existing, "password": password}


def delete_body(q: dict, password: str | None = None) -> dict:
    return {"kind": "delete", "query": q, "password": password}


def update_body(q: dict, require_password: bool | None = None, password: str | None = None,
                this_device_only: bool | None = None, secret: bytes | None = None) -> dict:
    """An update that changes no attribute, only (maybe) the secret and the marks."""
    return {"kind": "update", "query": q, "secret": _secret(secret), "requirePassword": require_password,
            "thisDeviceOnly": this_device_only, "password": password}


# Replies, read by kc.

def first_secret(message: bytes) -> bytes:
    """The secret of the first item of an `items` reply message."""
    items = decode(message)["items"]
    assert items, "no items"
    return bytes.fromhex(items[0]["secretHex"])


def status(path: Path) -> dict:
    """The agent's status reply: unlocked, vault, pid, idle and absolute (None when locked), build."""
    name, message = request(path, "status")
    assert name == "status", name
    return decode(message)
