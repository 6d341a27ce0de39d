"""The one harness for kc's end-to-end tests: run the kc binary as a user would.

`KC(binary, home)` runs kc in a private HOME with XDG folders inside it, a master password file
(mode 0600) named by KC_MASTER_PASSWORD_FILE, and nothing from the caller's KC_* environment.
Every run has no controlling terminal (a new session) unless it goes through `spawn` (pexpect).
`KC.run` is the one runner (with `popen` for background processes and `spawn` for terminals), and
`Result` the one result type; the exit statuses have names below (EXIT_*), used by every test.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# The kc binary under test: $KC_BIN, else the debug build (which has the test-only fault seam).
KC_BIN = os.environ.get("KC_BIN") or str(REPO / ".build" / "debug" / "kc")
# Test-only KDF cost: libsodium's minimum (1 pass, 8 KiB), so init and every open take microseconds.
FAST_KDF = ["--kdf-ops", "1", "--kdf-memory", "8K"]
# Strong enough for init and passwd without a terminal (zxcvbn: about 105 bits; below 50 they refuse it).
MASTER_PASSWORD = "correct horse battery staple ✓"
ERROR_LINE = re.compile(r"^kc: error: .+ \((errSec[A-Za-z]+)\)$")

# Exit statuses: the low byte of the Keychain result code (KeychainStatus), usage errors 2.
EXIT_PARAM = 2                  # errSecParam: usage errors
EXIT_VERIFY_FAILED = 32         # errSecVerifyFailed
EXIT_INTERACTION = 36           # errSecInteractionNotAllowed
EXIT_NOT_FOUND = 44             # errSecItemNotFound
EXIT_DUPLICATE = 45             # errSecDuplicateItem
EXIT_DUPLICATE_KEYCHAIN = 48    # errSecDuplicateKeychain
EXIT_NO_SUCH_KEYCHAIN = 50      # errSecNoSuchKeychain
EXIT_AUTH_FAILED = 51           # errSecAuthFailed
EXIT_NOT_AVAILABLE = 53         # errSecNotAvailable
EXIT_DECODE = 93                # errSecDecode
EXIT_CANCELED = 128             # errSecUserCanceled
EXIT_IO = 220                   # errSecIO
EXIT_NOT_TRUSTED = 253          # errSecNotTrusted
EXIT_SECURITY_FAILURE = 1       # `kc security` as macOS security: an unknown subcommand, a bad four-character code
EXIT_NOT_MERGED = 1             # `kc merge-driver`: not merged (git takes any non-zero status as a conflict)
SEAM_EXIT = 77                  # the debug build's fault seam ended kc on purpose (KC_FAULT)

# The same codes by Keychain name (checked against Sources by test_harness.py).
EXIT_BY_NAME = {
    "errSecParam": EXIT_PARAM, "errSecVerifyFailed": EXIT_VERIFY_FAILED,
    "errSecInteractionNotAllowed": EXIT_INTERACTION, "errSecItemNotFound": EXIT_NOT_FOUND,
    "errSecDuplicateItem": EXIT_DUPLICATE, "errSecDuplicateKeychain": EXIT_DUPLICATE_KEYCHAIN,
    "errSecNoSuchKeychain": EXIT_NO_SUCH_KEYCHAIN, "errSecAuthFailed": EXIT_AUTH_FAILED,
    "errSecNotAvailable": EXIT_NOT_AVAILABLE, "errSecDecode": EXIT_DECODE, "errSecUserCanceled": EXIT_CANCELED,
    "errSecIO": EXIT_IO, "errSecNotTrusted": EXIT_NOT_TRUSTED,
}


@dataclass
class Result:
    """One finished kc run: exit status, raw stdout, decoded stderr, the arguments and the wall time."""
    returncode: int
    stdout_bytes: bytes
    stderr: str
    args: list = field(default_factory=list)
    seconds: float = 0.0

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
        return (f"Result(kc {' '.join(map(str, self.args))} -> rc={self.returncode}, "
                f"stdout={self.stdout_bytes[:400]!r}, stderr={self.stderr[:800]!r})")

    __str__ = __repr__


def retrying_text_busy(start):
    """Calls `start()`, retrying while exec fails with ETXTBSY (the binary is being rebuilt by a
    developer sharing the tree: kc did not run)."""
    for attempt in range(20):
        try:
            return start()
        except OSError as error:
            if error.errno != errno.ETXTBSY or attempt == 19:
                raise
            time.sleep(0.25)


class KC:
    """One kc installation in a temporary home: `.run(args)`, `.ok(args)`, `.popen(args)`,
    `.spawn(args)`, `.init()`, `.vault_path`, `.env`."""

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

    def environment(self, env: dict | None = None, unset: tuple = (), fault: str | None = None) -> dict:
        """This home's environment, updated with `env` (a value of None removes the name), without
        the names in `unset`, and with KC_FAULT=`fault` (the debug build's fault seam) when given."""
        merged = dict(self.env)
        for name, value in (env or {}).items():
            if value is None:
                merged.pop(name, None)
            else:
                merged[name] = value
        for name in unset:
            merged.pop(name, None)
        if fault:
            merged["KC_FAULT"] = fault
        return merged

    def command(self, args, wrapper=()) -> list[str]:
        """kc with `args`, run through `wrapper` (e.g. strace or unshare and their options) if given."""
        return [*map(str, wrapper), self.binary, *map(str, args)]

    def run(self, args, input: bytes | str | None = None, env: dict | None = None, unset: tuple = (),
            pass_fds: tuple = (), timeout: float = 120, cwd: str | None = None, fault: str | None = None,
            preexec_fn=None, wrapper=()) -> Result:
        """Runs kc with `args` in a new session (no terminal); stdin is `input` or /dev/null."""
        if isinstance(input, str):
            input = input.encode()
        start = time.monotonic()
        completed = retrying_text_busy(lambda: subprocess.run(
            self.command(args, wrapper),
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            env=self.environment(env, unset, fault),
            timeout=timeout,
            start_new_session=True,
            pass_fds=pass_fds,
            cwd=cwd or str(self.home),
            preexec_fn=preexec_fn,
        ))
        return Result(completed.returncode, completed.stdout, completed.stderr.decode("utf-8", "replace"),
                      list(args), time.monotonic() - start)

    def ok(self, args, **kwargs) -> Result:
        """Runs kc and asserts success."""
        result = self.run(args, **kwargs)
        assert result.returncode == 0, result
        return result

    def popen(self, args, env: dict | None = None, unset: tuple = (), fault: str | None = None, wrapper=(),
              **kwargs) -> subprocess.Popen:
        """Starts kc in the background in a new session, with pipes for stdin, stdout and stderr."""
        kwargs.setdefault("stdin", subprocess.PIPE)
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        kwargs.setdefault("start_new_session", True)
        kwargs.setdefault("cwd", str(self.home))
        return retrying_text_busy(lambda: subprocess.Popen(
            self.command(args, wrapper), env=self.environment(env, unset, fault), **kwargs))

    def spawn(self, args, env: dict | None = None, unset: tuple = (), timeout: float = 20):
        """Runs kc on a real pseudo-terminal, its controlling terminal (pexpect)."""
        import pexpect
        return retrying_text_busy(lambda: pexpect.spawn(
            self.binary, [str(a) for a in args], env=self.environment(env, unset), timeout=timeout,
            encoding="utf-8", cwd=str(self.home)))

    def init(self, *extra: str, **kwargs) -> Result:
        """Creates the vault with the fast test KDF."""
        return self.ok(["init", *FAST_KDF, *extra], **kwargs)

    def add_generic(self, service: str, account: str | None = None, secret: str | bytes = "s3cret", *extra: str) -> Result:
        args = ["add", "generic", "-s", service, *([] if account is None else ["-a", account]), *extra, "--password-stdin"]
        return self.ok(args, input=secret)

    def add_internet(self, server: str, account: str | None = None, secret: str | bytes = "s3cret", *extra: str) -> Result:
        args = ["add", "internet", "-s", server, *([] if account is None else ["-a", account]), *extra, "--password-stdin"]
        return self.ok(args, input=secret)

    def mode(self, path: Path) -> int:
        return stat.S_IMODE(os.stat(path).st_mode)


def assert_failure(result: Result, name: str, code: int | None = None):
    """Asserts the exit status (the one for `name` unless `code` is given) and the single
    `kc: error: ... (errSecName)` line."""
    assert result.returncode == (EXIT_BY_NAME[name] if code is None else code), result
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("kc: error: ")]
    assert len(error_lines) == 1, result
    assert ERROR_LINE.match(error_lines[0]), result
    assert result.error_name == name, result


def items_with_secrets(kc: KC) -> list:
    """Every item of kc's vault with its secret, from `find --all --json -w`."""
    import json
    return json.loads(kc.ok(["find", "--all", "--json", "-w"]).stdout)


def only_item(items: list, **attributes) -> dict:
    """The one item of `items` with these attribute values (asserted to be exactly one)."""
    found = [item for item in items if all(item.get(k) == v for k, v in attributes.items())]
    assert len(found) == 1, (attributes, items)
    return found[0]
