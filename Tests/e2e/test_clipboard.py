"""--clip of find -w and generate, against a real X server (Xvfb) and the real xclip and xsel:
the secret goes to the clipboard and nowhere else, and a detached kc clears it later only if the
clipboard still holds it."""
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kcharness import EXIT_INTERACTION, EXIT_IO, EXIT_NOT_AVAILABLE, EXIT_PARAM, assert_failure
from procsampler import Sampler

DEADLINE = 60   # seconds to wait for something that should take a moment; never a speed check


def wait_until(predicate, what: str, deadline: float = DEADLINE):
    end = time.monotonic() + deadline
    while not predicate():
        if time.monotonic() > end:
            pytest.fail(f"gave up after {deadline} s waiting for {what}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def display():
    """A private X server on a free display (Xvfb picks it and tells through -displayfd)."""
    reader, writer = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(writer), "-nolisten", "tcp", "-screen", "0", "320x240x24"],
                              pass_fds=(writer,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    os.close(writer)
    with os.fdopen(reader) as f:
        number = f.readline().strip()
    assert number.isdigit(), "Xvfb did not report its display"
    yield f":{number}"
    server.terminate()
    server.wait(timeout=DEADLINE)


def xclip_out(display: str) -> bytes | None:
    """What the clipboard holds (None when nothing owns it), read with xclip -o."""
    result = subprocess.run(["xclip", "-o", "-selection", "clipboard"], capture_output=True,
                            env={"DISPLAY": display, "PATH": os.environ["PATH"]}, timeout=DEADLINE)
    return result.stdout if result.returncode == 0 else None


def xclip_in(display: str, data: bytes):
    """Puts `data` on the clipboard with xclip and waits until it shows."""
    subprocess.run(["xclip", "-selection", "clipboard", "-i"], input=data, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env={"DISPLAY": display, "PATH": os.environ["PATH"]}, check=True,
                   timeout=DEADLINE)
    wait_until(lambda: xclip_out(display) == data, "xclip to take the clipboard")


def processes_of(home: Path, name: bytes) -> dict[int, tuple[list[bytes], list[bytes]]]:
    """{pid: (argv, environ)} of the processes whose argv[0] ends in `name` and whose HOME is `home`."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[:-1]
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")[:-1]
        except OSError:
            continue
        if argv and argv[0].endswith(name) and b"HOME=" + str(home).encode() in environ:
            found[int(entry)] = (argv, environ)
    return found


def clearers(home: Path) -> dict[int, tuple[list[bytes], list[bytes]]]:
    return {pid: p for pid, p in processes_of(home, b"kc").items() if p[0][1:2] == [b"__clear-clipboard"]}


class Board:
    """A session's clipboard as the tests see it: `read` (None when nothing owns it), `write`
    (returns once it shows), and the program kc leaves behind to serve it (`server`)."""

    def __init__(self, read, write, server: bytes):
        self.read, self.write, self.server = read, write, server


def clip_fixture(kc_ready, env: dict, board: Board):
    """kc with a vault holding one generic item of a random secret, `env` set and `board` its
    clipboard; the clearers a test leaves behind are ended."""
    kc_ready.secret = ("clip-" + secrets.token_hex(12)).encode()
    kc_ready.add_generic("clip.example", "me", kc_ready.secret)
    kc_ready.env.update(env)
    kc_ready.board = board
    yield kc_ready
    for pid in clearers(kc_ready.home):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def clip(kc_ready, display):
    """An X11 session (Xvfb) with xclip."""
    kc_ready.display = display
    yield from clip_fixture(kc_ready, {"DISPLAY": display},
                            Board(lambda: xclip_out(display), lambda data: xclip_in(display, data), b"xclip"))


FIND = ["find", "generic", "-s", "clip.example", "-w", "--clip"]


def test_find_clip_puts_the_secret_on_the_clipboard_and_nothing_on_stdout(clip):
    xclip_in(clip.display, b"before")
    result = clip.ok([*FIND, "--clip-timeout", "600"])
    assert result.stdout_bytes == b""
    assert result.stderr == "kc: copied the secret to the clipboard; it will be cleared in 600 s\n"
    assert xclip_out(clip.display) == clip.secret   # kc returns once the clipboard shows it
    # The run ended (KC.run reads both pipes to their end) although a clearer sleeps for 10 minutes
    # and xclip stays behind to serve the clipboard: neither holds kc's standard output or error.
    (pid, (argv, environ)), = clearers(clip.home).items()
    assert argv[1:] == [b"__clear-clipboard", b"600"]
    assert os.path.samefile(argv[0], clip.binary), "kc's own executable, not one found on PATH"
    assert not [v for v in environ if v.startswith(b"KC_")]
    assert [os.readlink(f"/proc/{pid}/fd/{n}") for n in (0, 1, 2)] == ["/dev/null"] * 3
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    assert int(fields[3]) == pid, "the clearer leads a session of its own"
    assert int(fields[4]) == 0, "the clearer has no controlling terminal"
    servers = processes_of(clip.home, b"xclip")
    assert servers, "xclip stays behind to serve the clipboard"
    for argv, environ in servers.values():
        assert argv == [b"xclip", b"-selection", b"clipboard", b"-in"]
        assert not [v for v in environ if v.startswith(b"KC_")]


def test_clipboard_is_cleared_after_the_timeout(clip):
    clip.ok([*FIND, "--clip-timeout", "2"])
    assert clip.board.read() == clip.secret
    wait_until(lambda: clip.board.read() != clip.secret, "the clearer")
    assert clip.board.read() in (b"", None)
    wait_until(lambda: not clearers(clip.home), "the clearer to end")


def test_clipboard_changed_meanwhile_is_left_alone(clip):
    clip.ok([*FIND, "--clip-timeout", "10"])
    (pid, _), = clearers(clip.home).items()
    clip.board.write(b"mine now")
    assert pid in clearers(clip.home), "the clearer woke before the clipboard was changed: the test proves nothing"
    wait_until(lambda: not clearers(clip.home), "the clearer to end")
    assert clip.board.read() == b"mine now"


def test_an_older_clearer_leaves_a_newer_secret(clip):
    newer = ("newer-" + secrets.token_hex(8)).encode()
    clip.add_generic("newer.example", "me", newer)
    clip.ok([*FIND, "--clip-timeout", "10"])
    clip.ok(["find", "generic", "-s", "newer.example", "-w", "--clip", "--clip-timeout", "600"])
    older = [pid for pid, (argv, _) in clearers(clip.home).items() if argv[2] == b"10"]
    assert len(older) == 1, "the first clearer still waits"
    wait_until(lambda: older[0] not in clearers(clip.home), "the first clearer to end")
    assert xclip_out(clip.display) == newer


def test_the_secret_is_in_no_argv_or_environment(clip):
    """Every process (kc, the clipboard program, the clearer, the programs the clearer runs) is sampled throughout."""
    sampler = Sampler(None, [clip.secret])
    try:
        clip.ok([*FIND, "--clip-timeout", "1"])
        wait_until(lambda: clip.board.read() != clip.secret, "the clearer")
        wait_until(lambda: not clearers(clip.home), "the clearer to end")
    finally:
        sampler.stop()
    print(f"{sampler.samples} samples of {Sampler.PLACES}; commands seen: {len(sampler.commands)}")
    assert sampler.hits == []
    assert any(c.endswith("kc __clear-clipboard 1") for c in sampler.commands), sampler.commands
    assert any(c.startswith(clip.board.server.decode()) for c in sampler.commands), sampler.commands


def test_timeout_zero_never_clears(clip):
    result = clip.ok([*FIND, "--clip-timeout", "0"])
    assert "it will not be cleared" in result.stderr
    assert not clearers(clip.home)
    assert xclip_out(clip.display) == clip.secret


def test_generate_clip(clip):
    result = clip.ok(["generate", "--clip", "--clip-timeout", "600"])
    assert result.stdout_bytes == b""
    assert result.stderr.splitlines() == ["kc: copied the password to the clipboard; it will be cleared in 600 s",
                                          "kc: strength: 131 bits"]
    password = xclip_out(clip.display)
    assert len(password) == 20 and password.isascii() and b" " not in password


def test_xsel_copies_and_clears(clip, tmp_path):
    """With only xsel on PATH."""
    only = tmp_path / "only-xsel"
    only.mkdir()
    (only / "xsel").symlink_to("/usr/bin/xsel")
    clip.ok([*FIND, "--clip-timeout", "2"], env={"PATH": str(only)})
    assert xclip_out(clip.display) == clip.secret
    wait_until(lambda: xclip_out(clip.display) != clip.secret, "the clearer")
    assert xclip_out(clip.display) in (b"", None)


@pytest.mark.parametrize("wayland", [False, True], ids=["x11", "wayland"])
def test_no_clipboard_program_names_the_package(clip, tmp_path, wayland):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = clip.run(FIND, env={"PATH": str(empty), **({"WAYLAND_DISPLAY": "wayland-0"} if wayland else {})})
    assert_failure(result, "errSecNotAvailable", EXIT_NOT_AVAILABLE)   # as for every missing helper program
    assert result.stdout_bytes == b""
    assert "on PATH, and none was found" in result.stderr
    assert result.hint == ("install wl-clipboard or xclip or xsel (Debian: apt-get install wl-clipboard)" if wayland
                           else "install xclip or xsel (Debian: apt-get install xclip)")


def test_no_display(clip):
    result = clip.run(FIND, env={"DISPLAY": None})
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert "there is no display to copy to" in result.stderr
    assert result.stdout_bytes == b""


def test_a_display_without_a_server_is_an_io_error(clip):
    taken = {int(name[1:]) for name in os.listdir("/tmp/.X11-unix") if name[1:].isdigit()}
    free = max(taken | {0}) + 100   # well above the displays Xvfb -displayfd hands out meanwhile
    result = clip.run([*FIND, "--clip-timeout", "600"], env={"DISPLAY": f":{free}"})
    assert_failure(result, "errSecIO", EXIT_IO)
    assert f"xclip could not copy to the clipboard (exit status 1): Error: Can't open display: :{free}" in result.stderr
    wait_until(lambda: not clearers(clip.home), "the clearer to leave at once, as nothing was copied")


@pytest.mark.parametrize("args, what", [
    (["find", "generic", "-s", "clip.example", "--clip"], "the secret"),   # --clip implies -w
    (["find", "-s", "clip.example", "-c"], "the secret"),
    (["get", "clip.example", "-c"], "the secret"),
    (["get", "clip.example", "me", "--clip"], "the secret"),
    (["show", "clip.example", "-c"], "the secret"),
])
def test_clip_alone_copies_the_secret(clip, args, what):
    xclip_in(clip.display, b"before")
    result = clip.ok([*args, "--clip-timeout", "600"])
    assert f"kc: copied {what} to the clipboard" in result.stderr
    assert clip.secret not in result.stdout_bytes
    assert xclip_out(clip.display) == clip.secret


def test_get_field_clip_copies_the_field(clip):
    result = clip.ok(["get", "clip.example", "--field", "account", "-c", "--clip-timeout", "0"])
    assert result.stdout_bytes == b""
    assert "kc: copied the account to the clipboard" in result.stderr
    assert xclip_out(clip.display) == b"me"


@pytest.mark.parametrize("args, message", [
    ([*FIND, "--all"], "--all asks for every match"),
    ([*FIND, "--json"], "--clip and --json exclude each other"),
    (["generate", "--clip-timeout", "5"], "--clip-timeout only applies to --clip"),
    (["generate", "--clip", "--clip-timeout=-1"], "--clip-timeout must be a whole number"),
    (["generate", "--clip", "--clip-timeout", "86401"], "--clip-timeout must be a whole number"),
])
def test_usage_errors(clip, args, message):
    result = clip.run(args)
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert message in result.stderr
    assert result.stdout_bytes == b""


@pytest.mark.parametrize("length", [2**64 - 1, 2**63 - 1])
def test_the_clearer_refuses_a_length_no_secret_has(clip, length):
    """The hidden clearer, handed a fingerprint whose length no secret can have, ends quietly
    (status 0) instead of trapping, and leaves the clipboard alone."""
    xclip_in(clip.display, b"kept")
    message = length.to_bytes(8, "little") + secrets.token_bytes(32) + secrets.token_bytes(32)
    result = subprocess.run(["sh", "-c", 'exec "$@" 3<&0 </dev/null', "sh", *clip.command(["__clear-clipboard", "0"])],
                            input=message, capture_output=True, env=clip.environment(), timeout=DEADLINE)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert xclip_out(clip.display) == b"kept"


def test_cleared_when_kc_started_with_its_standard_descriptors_closed(clip):
    """The clearer's pipe reaches it whatever numbers kc's own descriptors took."""
    result = subprocess.run(["sh", "-c", 'exec "$@" <&- >&- 2>&-', "sh", *clip.command([*FIND, "--clip-timeout", "2"])],
                            env=clip.environment(), cwd=str(clip.home), start_new_session=True, timeout=DEADLINE)
    assert result.returncode == 0
    assert xclip_out(clip.display) == clip.secret
    wait_until(lambda: xclip_out(clip.display) != clip.secret, "the clearer")
    assert xclip_out(clip.display) in (b"", None)
