"""Harness for end-to-end tests of the kc binary.

`KC(binary, home)` runs kc in a private HOME with XDG folders inside it, a master password file
(mode 0600) named by KC_MASTER_PASSWORD_FILE, and nothing from the caller's KC_* environment.
Every run has no controlling terminal (a new session) unless it goes through `spawn` (pexpect).
"""
from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# Test-only KDF cost: libsodium's minimum ops and 8 MiB, so init and every open take milliseconds.
FAST_KDF = ["--kdf-ops", "1", "--kdf-memory", "8M"]
MASTER_PASSWORD = "correct horse battery staple ✓"
ERROR_LINE = re.compile(r"^kc: error: .+ \((errSec[A-Za-z]+)\)$")


@dataclass
class Result:
    returncode: int
    stdout_bytes: bytes
    stderr: str

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def error_name(self) -> str | None:
        """The errSec name of the `kc: error:` line, or None when there is none."""
        for line in self.stderr.splitlines():
            match = ERROR_LINE.match(line)
            if match:
                return match.group(1)
        return None

    @property
    def hint(self) -> str | None:
        for line in self.stderr.splitlines():
            if line.startswith("kc: hint: "):
                return line[len("kc: hint: "):]
        return None

    def __repr__(self) -> str:  # shown by pytest on failure
        return f"Result(rc={self.returncode}, stdout={self.stdout_bytes[:400]!r}, stderr={self.stderr[:800]!r})"


class KC:
    """One kc installation in a temporary home: `.run(args)`, `.init()`, `.vault_path`, `.env`."""

    def __init__(self, binary: str, home: Path):
        self.binary = binary
        self.home = home
        self.home.mkdir(parents=True, exist_ok=True)
        self.master_password = MASTER_PASSWORD
        self.password_file = home / "master-password"
        self.write_secret_file(self.password_file, self.master_password + "\n")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_CONFIG_HOME": str(home / "config"),
            "TMPDIR": str(home / "tmp"),
            "KC_MASTER_PASSWORD_FILE": str(self.password_file),
        }
        (home / "tmp").mkdir(exist_ok=True)

    @property
    def vault_path(self) -> Path:
        """The default vault under this home."""
        return self.home / "data" / "kc" / "login.kc"

    @staticmethod
    def write_secret_file(path: Path, text: str, mode: int = 0o600) -> Path:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def environment(self, env: dict | None = None, unset: tuple = ()) -> dict:
        merged = dict(self.env)
        merged.update(env or {})
        for name in unset:
            merged.pop(name, None)
        return merged

    def run(self, args, input: bytes | str | None = None, env: dict | None = None, unset: tuple = (),
            pass_fds: tuple = (), timeout: float = 60, cwd: str | None = None) -> Result:
        """Runs kc with `args` in a new session (no terminal); stdin is `input` or /dev/null."""
        if isinstance(input, str):
            input = input.encode()
        for attempt in range(20):
            try:
                completed = subprocess.run(
                    [self.binary, *args],
                    input=input,
                    stdin=subprocess.DEVNULL if input is None else None,
                    capture_output=True,
                    env=self.environment(env, unset),
                    timeout=timeout,
                    start_new_session=True,
                    pass_fds=pass_fds,
                    cwd=cwd or str(self.home),
                )
                break
            except OSError as error:
                # ETXTBSY: the binary is being rebuilt (developers share a tree); kc did not run.
                if error.errno != errno.ETXTBSY or attempt == 19:
                    raise
                time.sleep(0.25)
        return Result(completed.returncode, completed.stdout, completed.stderr.decode("utf-8", "replace"))

    def ok(self, args, **kwargs) -> Result:
        """Runs kc and asserts success."""
        result = self.run(args, **kwargs)
        assert result.returncode == 0, result
        return result

    def init(self, *extra: str, **kwargs) -> Result:
        """Creates the vault with the fast test KDF."""
        return self.ok(["init", *FAST_KDF, *extra], **kwargs)

    def add_generic(self, service: str, account: str | None = None, secret: str | bytes = "s3cret", *extra: str) -> Result:
        args = ["add", "generic", "-s", service, *([] if account is None else ["-a", account]), *extra, "--password-stdin"]
        return self.ok(args, input=secret)

    def add_internet(self, server: str, account: str | None = None, secret: str | bytes = "s3cret", *extra: str) -> Result:
        args = ["add", "internet", "-s", server, *([] if account is None else ["-a", account]), *extra, "--password-stdin"]
        return self.ok(args, input=secret)

    def spawn(self, args, env: dict | None = None, unset: tuple = (), timeout: float = 20):
        """Runs kc on a real pseudo-terminal (pexpect)."""
        import pexpect
        return pexpect.spawn(self.binary, list(args), env=self.environment(env, unset), timeout=timeout,
                             encoding="utf-8", cwd=str(self.home))

    def mode(self, path: Path) -> int:
        return stat.S_IMODE(os.stat(path).st_mode)


def assert_failure(result: Result, name: str, code: int):
    """Asserts the exit status and the single `kc: error: ... (errSecName)` line."""
    assert result.returncode == code, result
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("kc: error: ")]
    assert len(error_lines) == 1, result
    assert ERROR_LINE.match(error_lines[0]), result
    assert result.error_name == name, result
