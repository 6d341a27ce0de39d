"""Helpers for the vault robustness tests (issue 3), run against the built `kc` binary.

Everything here works on a private temporary HOME: XDG folders, a master password file
(0600), a fast Argon2id vault. Nothing touches the real user's files.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
from kcharness import KC  # noqa: E402  (the shared e2e harness; built upon, not edited)

KC_BIN = os.environ.get("KC_BIN") or str(REPO / ".build" / "debug" / "kc")
STRESS = os.environ.get("KC_STRESS", "") not in ("", "0")

HEADER_LENGTH = 140
FRAME_LENGTH = 16
SEAM_EXIT = 77

# Exit statuses (low byte of the Keychain result code).
EXIT_PARAM = 2
EXIT_VERIFY_FAILED = 32
EXIT_INTERACTION = 36
EXIT_NOT_FOUND = 44
EXIT_DUPLICATE = 45
EXIT_NO_SUCH_KEYCHAIN = 50
EXIT_AUTH_FAILED = 51
EXIT_NOT_AVAILABLE = 53
EXIT_DECODE = 93


def scale(ci: int, stress: int) -> int:
    """CI count by default, release-scale count under KC_STRESS=1."""
    return stress if STRESS else ci


# ---------------------------------------------------------------------------------------------
# Figures: every test states what it measured; the conftest prints them in the terminal summary
# and they are also kept in Tests/e2e/vault/.figures.

FIGURES: list[str] = []
FIGURES_PATH = HERE / ".figures"
_figures_started = False


def figure(text: str) -> None:
    global _figures_started
    mode = "a" if _figures_started else "w"
    _figures_started = True
    FIGURES.append(text)
    with open(FIGURES_PATH, mode) as f:
        f.write(text + "\n")


# ---------------------------------------------------------------------------------------------
# The vault format, as far as these tests need it (Docs/FORMAT.md; Sources/KCFormat).

def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value


@dataclass
class Frame:
    offset: int      # start of the frame
    end: int         # end of the body
    sequence: int

    @property
    def body(self) -> tuple[int, int]:
        return self.offset + FRAME_LENGTH, self.end


def frames(data: bytes) -> list[Frame]:
    """The complete records of an intact vault, in order (stops at the first incomplete one)."""
    out = []
    offset = HEADER_LENGTH
    while offset + FRAME_LENGTH <= len(data):
        length, sequence, crc = struct.unpack_from("<IQI", data, offset)
        assert crc == crc32c(data[offset:offset + 12]), f"bad frame checksum at {offset}"
        end = offset + FRAME_LENGTH + length
        if end > len(data):
            break
        out.append(Frame(offset, end, sequence))
        offset = end
    return out


def frame_bytes(length: int, sequence: int) -> bytes:
    head = struct.pack("<IQ", length, sequence)
    return head + struct.pack("<I", crc32c(head))


def renumber(record: bytes, sequence: int) -> bytes:
    """A record with its frame's sequence number changed and the frame checksum recomputed."""
    length = struct.unpack_from("<I", record, 0)[0]
    return frame_bytes(length, sequence) + record[FRAME_LENGTH:]


def patch_header(data: bytes, *, ops: int | None = None, memory: int | None = None) -> bytes:
    """Sets the header's Argon2id opslimit (u64 LE at 32) and memlimit (u64 LE at 40) and
    recomputes the header CRC-32C (over 0..<136, stored LE at 136)."""
    b = bytearray(data)
    if ops is not None:
        struct.pack_into("<Q", b, 32, ops)
    if memory is not None:
        struct.pack_into("<Q", b, 40, memory)
    struct.pack_into("<I", b, 136, crc32c(bytes(b[0:136])))
    return bytes(b)


def header_kdf(data: bytes) -> tuple[int, int]:
    return struct.unpack_from("<QQ", data, 32)


def vault_id(data: bytes) -> str:
    return data[12:28].hex()


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Running kc.

@dataclass
class Result:
    args: list
    rc: int
    out: bytes
    err: str
    seconds: float = 0.0

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "replace")

    def __str__(self) -> str:
        return f"kc {' '.join(map(str, self.args))} -> {self.rc}\nstdout: {self.text[:2000]}\nstderr: {self.err[:2000]}"


@dataclass
class CheckReport:
    rc: int
    records: int | None
    items: int | None
    damaged: list[str]
    torn: bool
    rollback: bool
    raw: Result

    @property
    def whole(self) -> bool:
        return self.rc == 0 and not self.damaged and not self.torn

    @property
    def whole_or_torn(self) -> bool:
        """Whole, or only an unacknowledged torn tail (which reading handles)."""
        return not self.damaged and (self.rc == 0 or (self.rc == EXIT_DECODE and self.torn))


ItemKey = tuple  # (class, service-or-server, account)


class Kc(KC):
    """The shared e2e harness's private kc world (Tests/e2e/kcharness.py: HOME, XDG folders, TMPDIR,
    a master password file, no terminal), plus what the vault tests need: exit codes and stderr as
    `Result`, the fault seam, background processes, item snapshots, `kc check` parsing, and
    snapshots of the vault and state folders."""

    def __init__(self, root: Path, password: bytes | str | None = None):
        super().__init__(KC_BIN, Path(root) / "home")
        self.root = Path(root)
        self.data = self.home / "data"
        self.state = self.home / "state"
        self.tmpdir = self.home / "tmp"
        self.vault = self.vault_path
        if password is not None:
            self.set_password(password)
        self.password = self.master_password.encode()

    # -- passwords
    def set_password(self, password: bytes | str) -> None:
        if isinstance(password, bytes):
            password = password.decode()
        self.master_password = password
        self.password = password.encode()
        self.write_secret_file(self.password_file, password + "\n")

    def password_file_for(self, password: str, name: str) -> Path:
        return self.write_secret_file(self.root / f"{name}.password", password + "\n")

    # -- running
    def command(self, args) -> list[str]:
        return [self.binary, *map(str, args)]

    def env_for(self, extra: dict | None = None, fault: str | None = None) -> dict:
        env = self.environment()
        if fault:
            env["KC_FAULT"] = fault
        for k, v in (extra or {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def call(self, *args, input: bytes | str | None = None, env: dict | None = None, fault: str | None = None,
             timeout: float = 120, pass_fds=(), cwd=None, preexec_fn=None) -> Result:
        """Runs kc in a new session (no terminal), stdin `input` (empty when None)."""
        if isinstance(input, str):
            input = input.encode()
        start = time.monotonic()
        p = subprocess.run(self.command(args), input=input if input is not None else b"",
                           capture_output=True, env=self.env_for(env, fault), timeout=timeout,
                           pass_fds=pass_fds, cwd=cwd or self.home, start_new_session=True,
                           preexec_fn=preexec_fn)
        return Result(list(args), p.returncode, p.stdout, p.stderr.decode("utf-8", "replace"),
                      time.monotonic() - start)

    def popen(self, *args, env: dict | None = None, fault: str | None = None, **kw) -> subprocess.Popen:
        kw.setdefault("stdin", subprocess.PIPE)
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("start_new_session", True)
        return subprocess.Popen(self.command(args), env=self.env_for(env, fault), cwd=self.home, **kw)

    def must(self, *args, **kw) -> Result:
        r = self.call(*args, **kw)
        assert r.rc == 0, str(r)
        return r

    # -- vault set-up and inspection
    def create(self, ops: int = 1, memory: str = "8K") -> None:
        """kc init with a test KDF (libsodium's minimum by default: opening costs nothing)."""
        self.must("init", "--kdf-ops", ops, "--kdf-memory", memory)

    def put(self, service: str, secret: str | bytes, account: str = "acct", *extra) -> Result:
        return self.must("add", "generic", "-s", service, "-a", account, *extra, "--password-stdin", input=secret)

    def items(self, env: dict | None = None) -> dict:
        """Every item's secret by (class, service/server, account); fails on any error."""
        r, items = self.try_items(env)
        assert items is not None, str(r)
        return items

    def try_items(self, env: dict | None = None) -> tuple[Result, dict | None]:
        r = self.call("find", "--all", "--json", "-w", env=env)
        if r.rc == EXIT_NOT_FOUND and r.text.strip() == "[]":
            return r, {}
        if r.rc != 0:
            return r, None
        return r, items_from_json(r.text)

    def check(self, env: dict | None = None) -> CheckReport:
        return parse_check(self.call("check", env=env))

    def digest(self) -> str:
        return sha256(self.vault)

    def folder(self) -> list[str]:
        return sorted(os.listdir(self.vault.parent))

    def anchor_files(self) -> list[Path]:
        d = self.state / "kc" / "anchors"
        return sorted(d.iterdir()) if d.exists() else []

    def clear_anchors(self) -> None:
        d = self.state / "kc" / "anchors"
        if d.exists():
            shutil.rmtree(d)

    def snapshot(self) -> dict:
        """The bytes of every file under the data and state folders."""
        files = {}
        for base in (self.data, self.state):
            if base.exists():
                for p in base.rglob("*"):
                    if p.is_file() and not p.is_symlink():
                        files[p] = p.read_bytes()
        return files

    def restore(self, snap: dict) -> None:
        for base in (self.data, self.state):
            if base.exists():
                shutil.rmtree(base)
        for p, content in snap.items():
            p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(content)
        for base in (self.data, self.state):
            if base.exists():
                for d in [base, *[q for q in base.rglob("*") if q.is_dir()]]:
                    os.chmod(d, 0o700)


def items_from_json(text: str) -> dict:
    out = {}
    for obj in json.loads(text):
        key = (obj["class"], obj.get("service", obj.get("server")), obj.get("account"))
        assert key not in out, f"two items with the key {key}"
        out[key] = obj.get("password", obj.get("passwordBase64"))
    return out


def parse_check(r: Result) -> CheckReport:
    records = items = None
    damaged = []
    torn = rollback = False
    for line in r.text.splitlines():
        if line.startswith("records: "):
            records = int(line.split(": ", 1)[1])
        elif line.startswith("items: "):
            items = int(line.split(": ", 1)[1])
        elif line.startswith("damaged: "):
            damaged.append(line)
        elif line.startswith("torn tail: "):
            torn = True
        elif line.startswith("rollback: "):
            rollback = True
    return CheckReport(r.rc, records, items, damaged, torn, rollback, r)


def kill_tree(p: subprocess.Popen, sig=signal.SIGKILL) -> None:
    try:
        os.kill(p.pid, sig)
    except ProcessLookupError:
        pass


def leftovers(folder: Path, keep=("login.kc",)) -> list[str]:
    """Files in a vault folder other than the vault itself (temporary, backup, corrupt copies)."""
    return sorted(n for n in os.listdir(folder) if n not in keep)
