"""Helpers for the vault robustness tests, run against the built `kc` binary through the one harness
(Tests/e2e/kcharness.py; the format helpers are in Tests/e2e/kcformat.py).

Everything here works on a private temporary HOME: XDG folders, a master password file
(0600), a fast Argon2id vault. Nothing touches the real user's files.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from kcharness import EXIT_DECODE, EXIT_NOT_FOUND, KC, KC_BIN, Result  # noqa: E402  (the one e2e harness)
from kcformat import sha256  # noqa: E402

STRESS = os.environ.get("KC_STRESS", "") not in ("", "0")


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
# Vault inspection.

@dataclass
class CheckReport:
    returncode: int
    records: int | None
    items: int | None
    damaged: list[str]
    torn: bool
    rollback: bool
    raw: Result

    @property
    def whole(self) -> bool:
        return self.returncode == 0 and not self.damaged and not self.torn

    @property
    def whole_or_torn(self) -> bool:
        """Whole, or only an unacknowledged torn tail (which reading handles; `kc check` exits 0)."""
        return not self.damaged and self.returncode == 0


ItemKey = tuple  # (class, service-or-server, account)


class Kc(KC):
    """The harness's private kc world (Tests/e2e/kcharness.py: HOME, XDG folders, TMPDIR, a master
    password file, no terminal), plus what the vault tests need: item snapshots, `kc check` parsing,
    and snapshots of the vault and state folders."""

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

    # -- vault set-up and inspection
    def create(self) -> None:
        """kc init with the fast test KDF (libsodium's minimum: opening costs nothing)."""
        self.init()

    def put(self, service: str, secret: str | bytes, account: str = "acct", *extra) -> Result:
        return self.ok(["add", "generic", "-s", service, "-a", account, *extra, "--password-stdin"], input=secret)

    def items(self, env: dict | None = None) -> dict:
        """Every item's secret by (class, service/server, account); fails on any error."""
        r, items = self.try_items(env)
        assert items is not None, str(r)
        return items

    def try_items(self, env: dict | None = None) -> tuple[Result, dict | None]:
        r = self.run(["find", "--all", "--json", "-w"], env=env)
        if r.returncode == EXIT_NOT_FOUND and r.stdout.strip() == "[]":
            return r, {}
        if r.returncode != 0:
            return r, None
        return r, items_from_json(r.stdout)

    def check(self, env: dict | None = None) -> CheckReport:
        return parse_check(self.run(["check"], env=env))

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
    for line in r.stdout.splitlines():
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
    return CheckReport(r.returncode, records, items, damaged, torn, rollback, r)


def kill_tree(p: subprocess.Popen, sig=signal.SIGKILL) -> None:
    try:
        os.kill(p.pid, sig)
    except ProcessLookupError:
        pass


def leftovers(folder: Path, keep=("login.kc",)) -> list[str]:
    """Files in a vault folder other than the vault itself (temporary, backup, corrupt copies)."""
    return sorted(n for n in os.listdir(folder) if n not in keep)
