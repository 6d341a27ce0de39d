"""The peers kc is measured beside, built with the benchmark's items: a pass store and gnome-keyring."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs argv to its end, its output kept; a failure stops the benchmark with the command's own error."""
    result = subprocess.run(argv, env=env, capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(f"bench: failed (exit {result.returncode}): {' '.join(argv)[:300]}\n{result.stderr[-2000:]}")
    return result


class PassStore:
    """A pass store of the same items, `HOST/ACCOUNT.gpg` holding "PASSWORD\\nlogin: ACCOUNT", encrypted
    to an ed25519/cv25519 key without passphrase (the fastest pass set-up) in a private GNUPGHOME. The
    files are encrypted by one `gpg --multifile --encrypt` per batch rather than one `pass insert` each:
    the same files pass writes, without a gpg process per entry."""

    def __init__(self):
        # GNUPGHOME is a short temporary folder, as gpg-agent's sockets (S.gpg-agent.browser and
        # others) live in it and a socket path must fit in 108 bytes: under a deep results folder
        # (pytest's) gpg would run without its agent and fail.
        self.gnupg = Path(tempfile.mkdtemp(prefix="kc-bench-gpg-"))
        self.env = dict(os.environ, GNUPGHOME=str(self.gnupg))
        run(["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key",
             "kc bench <bench@example.invalid>", "future-default", "default", "never"], env=self.env)

    def build(self, store: Path, items) -> dict:
        store.mkdir(parents=True)
        (store / ".gpg-id").write_text("bench@example.invalid\n")
        plain = []
        for host, account, password in items:
            (store / host).mkdir(exist_ok=True)
            path = store / host / account
            path.write_text(f"{password}\nlogin: {account}\n")
            plain.append(str(path))
        for start in range(0, len(plain), 2000):
            run(["gpg", "--batch", "--yes", "--no-encrypt-to", "-r", "bench@example.invalid", "--multifile",
                 "--encrypt"] + plain[start:start + 2000], env=self.env)
        for path in plain:
            os.unlink(path)
        return dict(self.env, PASSWORD_STORE_DIR=str(store))

    def close(self) -> None:
        subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=self.env, check=False)
        shutil.rmtree(self.gnupg, ignore_errors=True)


class Keyring:
    """gnome-keyring on a private D-Bus session bus (dbus-daemon --session), its login keyring unlocked,
    filled with the same items by fill_keyring.py."""

    def __init__(self, root: Path, items):
        self.home = root
        (root / "run").mkdir(mode=0o700, parents=True)
        self.env = dict(os.environ, HOME=str(root), XDG_DATA_HOME=str(root / "data"),
                        XDG_RUNTIME_DIR=str(root / "run"), XDG_CONFIG_HOME=str(root / "config"))
        self.bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                                    env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.bus.stdout.readline().strip()
        self.daemon = subprocess.Popen(["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
                                       env=self.env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        self.daemon.stdin.write(b"keyring password")
        self.daemon.stdin.close()
        for _ in range(100):   # the daemon takes its name on the bus shortly after starting
            if subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                               "org.freedesktop.DBus.GetNameOwner", "string:org.freedesktop.secrets"],
                              env=self.env, capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            self.close()
            raise SystemExit("bench: gnome-keyring-daemon did not take its name on the private bus")
        tsv = root / "items.tsv"
        tsv.write_text("".join(f"{h}\t{a}\t{p}\n" for h, a, p in items))
        try:
            run(["/usr/bin/python3", str(HERE / "fill_keyring.py"), str(tsv)], env=self.env)
        except SystemExit:
            self.close()
            raise
        tsv.unlink()

    def daemon_rss_kib(self) -> int:
        status = Path(f"/proc/{self.daemon.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))

    def close(self) -> None:
        for process in (self.daemon, self.bus):
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=10)


def secret_tool_unavailable() -> str | None:
    for tool in ("secret-tool", "gnome-keyring-daemon", "dbus-daemon"):
        if not shutil.which(tool):
            return f"not available: {tool} is not installed"
    if subprocess.run(["/usr/bin/python3", "-c", "import dbus"], capture_output=True).returncode:
        return "not available: python3-dbus is not installed"
    return None
