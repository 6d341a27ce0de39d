"""--clip under Wayland, against a real compositor (sway on wlroots' headless backend) and the real
wl-copy and wl-paste: the secret goes to the clipboard and nowhere else, wl-copy stays behind to
serve it, and a detached kc clears it later only if the clipboard still holds it. sway refuses to
run as root, so as root it runs as `nobody`; WAYLAND_DISPLAY is then the socket's absolute path."""
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from procsampler import Sampler
from test_clipboard import DEADLINE, clearers, processes_of, wait_until


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
    """kc with one generic item of a random secret, WAYLAND_DISPLAY set and no DISPLAY."""
    kc_ready.secret = ("wl-" + secrets.token_hex(12)).encode()
    kc_ready.add_generic("clip.example", "me", kc_ready.secret)
    kc_ready.env["WAYLAND_DISPLAY"] = wayland
    kc_ready.env.pop("DISPLAY", None)
    kc_ready.socket = wayland
    yield kc_ready
    for pid in clearers(kc_ready.home):
        os.kill(pid, signal.SIGKILL)
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


def test_wayland_clipboard_is_cleared_after_the_timeout(clip):
    clip.ok([*FIND, "--clip-timeout", "2"])
    assert paste(clip.socket) == clip.secret
    wait_until(lambda: paste(clip.socket) != clip.secret, "the clearer")
    assert paste(clip.socket) in (b"", None)
    wait_until(lambda: not clearers(clip.home), "the clearer to end")


def test_wayland_clipboard_changed_meanwhile_is_left_alone(clip):
    clip.ok([*FIND, "--clip-timeout", "10"])
    (pid, _), = clearers(clip.home).items()
    copy(clip.socket, b"mine now")
    assert pid in clearers(clip.home), "the clearer woke before the clipboard was changed: the test proves nothing"
    wait_until(lambda: not clearers(clip.home), "the clearer to end")
    assert paste(clip.socket) == b"mine now"


def test_the_secret_is_in_no_argv_or_environment_under_wayland(clip):
    """Every process (kc, wl-copy, the clearer, the wl-paste and wl-copy it runs) is sampled throughout."""
    sampler = Sampler(None, [clip.secret])
    try:
        clip.ok([*FIND, "--clip-timeout", "1"])
        wait_until(lambda: paste(clip.socket) != clip.secret, "the clearer")
        wait_until(lambda: not clearers(clip.home), "the clearer to end")
    finally:
        sampler.stop()
    print(f"{sampler.samples} samples of {Sampler.PLACES}; commands seen: {len(sampler.commands)}")
    assert sampler.hits == []
    assert any(c.endswith("kc __clear-clipboard 1") for c in sampler.commands), sampler.commands
    assert any(c.startswith("wl-copy") for c in sampler.commands), sampler.commands
