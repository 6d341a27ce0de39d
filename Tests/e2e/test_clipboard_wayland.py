"""--clip under Wayland, against a real compositor (sway on wlroots' headless backend) and the real
wl-copy and wl-paste: the secret goes to the clipboard and nowhere else, wl-copy stays behind to
serve it, and a detached kc clears it later only if the clipboard still holds it. sway refuses to
run as root, so as root it runs as `nobody`; WAYLAND_DISPLAY is then the socket's absolute path."""
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from test_clipboard import DEADLINE, Board, clearers, clip_fixture, processes_of, wait_until
# The behaviour both sessions share, run here against Wayland (with this module's `clip`).
from test_clipboard import (test_clipboard_changed_meanwhile_is_left_alone, test_clipboard_is_cleared_after_the_timeout,  # noqa: F401
                            test_the_secret_is_in_no_argv_or_environment)


@pytest.fixture(scope="module")
def wayland():
    """A private headless sway; yields the absolute path of its Wayland socket."""
    assert shutil.which("sway"), "sway is missing: run make test-deps"
    runtime = Path(tempfile.mkdtemp(prefix="kc-wayland-"))
    config = runtime / "config"
    config.write_text("")
    as_nobody = os.getuid() == 0
    if as_nobody:
        os.chown(runtime, 65534, 65534)
        os.chmod(config, 0o644)
    env = {"PATH": os.environ["PATH"], "HOME": str(runtime), "XDG_RUNTIME_DIR": str(runtime),
           "WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman", "WLR_LIBINPUT_NO_DEVICES": "1"}
    command = ["sway", "-c", str(config)]
    if as_nobody:
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
    server = subprocess.Popen(command, env=env, cwd=str(runtime), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    socket = runtime / "wayland-1"
    wait_until(lambda: socket.exists() or server.poll() is not None, "sway to listen")
    assert server.poll() is None, "sway exited at once"
    yield str(socket)
    server.terminate()
    server.wait(timeout=DEADLINE)
    shutil.rmtree(runtime, ignore_errors=True)


def paste(socket: str) -> bytes | None:
    """What the Wayland clipboard holds (None when nothing does), read with wl-paste."""
    result = subprocess.run(["wl-paste", "--no-newline"], capture_output=True, timeout=DEADLINE,
                            env={"WAYLAND_DISPLAY": socket, "PATH": os.environ["PATH"]})
    return result.stdout if result.returncode == 0 else None


def copy(socket: str, data: bytes):
    """Puts `data` on the clipboard with wl-copy (which stays behind to serve it) and waits until it shows."""
    subprocess.run(["wl-copy"], input=data, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env={"WAYLAND_DISPLAY": socket, "PATH": os.environ["PATH"]}, timeout=DEADLINE)
    wait_until(lambda: paste(socket) == data, "wl-copy to take the clipboard")


@pytest.fixture
def clip(kc_ready, wayland):
    """A Wayland session (headless sway) with wl-copy, and no DISPLAY; the wl-copy servers are ended."""
    kc_ready.env.pop("DISPLAY", None)
    kc_ready.socket = wayland
    yield from clip_fixture(kc_ready, {"WAYLAND_DISPLAY": wayland},
                            Board(lambda: paste(wayland), lambda data: copy(wayland, data), b"wl-copy"))
    for pid in processes_of(kc_ready.home, b"wl-copy"):
        os.kill(pid, signal.SIGKILL)


FIND = ["find", "generic", "-s", "clip.example", "-w", "--clip"]


def test_find_clip_puts_the_secret_on_the_wayland_clipboard(clip):
    copy(clip.socket, b"before")
    result = clip.ok([*FIND, "--clip-timeout", "600"])
    assert result.stdout_bytes == b""
    assert result.stderr == "kc: copied the secret to the clipboard; it will be cleared in 600 s\n"
    assert paste(clip.socket) == clip.secret
    (pid, (argv, environ)), = clearers(clip.home).items()
    assert argv[1:] == [b"__clear-clipboard", b"600"]
    assert not [v for v in environ if v.startswith(b"KC_")]
    servers = processes_of(clip.home, b"wl-copy")
    assert servers, "wl-copy stays behind to serve the clipboard"
    for argv, environ in servers.values():
        assert argv == [b"wl-copy"]
        assert not [v for v in environ if v.startswith(b"KC_")]
