"""What kc writes on a terminal and nowhere else: the progress line of long work (import, check,
compact, export), drawn in place on standard error and erased, and the colour of the `kc: error:`,
`kc: warning:` and `kc: hint:` prefixes (never with NO_COLOR or TERM=dumb, never on a pipe, never
on standard output). Standard error is a real pseudo-terminal here; a pipe sees today's bytes."""
import json
import os
import pty
import subprocess

import pexpect
import pytest

from kcharness import EXIT_NOT_FOUND, EXIT_PARAM, retrying_text_busy

ITEMS = 3000
RED_ERROR = "\x1b[1;31mkc: error:\x1b[0m "
YELLOW_WARNING = "\x1b[33mkc: warning:\x1b[0m "
DIM_HINT = "\x1b[2mkc: hint:\x1b[0m "


def on_terminal(kc, args, env=None):
    """Runs kc with standard error (and input) on a new pseudo-terminal and standard output to a
    file; returns (exit status, stdout bytes, what the terminal received)."""
    master, slave = pty.openpty()
    stdout_file = kc.home / "tmp" / "stdout"
    with open(stdout_file, "wb") as stdout:
        process = retrying_text_busy(lambda: subprocess.Popen(
            kc.command(args), stdin=slave, stdout=stdout, stderr=slave, env=kc.environment(env),
            cwd=str(kc.home), start_new_session=True))
    os.close(slave)
    received = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:   # EIO: kc closed the terminal's last descriptor
            break
        if not chunk:
            break
        received += chunk
    process.wait(timeout=120)
    os.close(master)
    return process.returncode, stdout_file.read_bytes(), received.decode("utf-8")


def screen(received):
    """The lines a terminal shows after `received`: a carriage return goes back to the start of the
    line and what follows overwrites it (trailing blanks dropped)."""
    lines, line, column = [], [], 0
    for char in received.replace("\r\n", "\n"):
        if char == "\n":
            lines.append("".join(line).rstrip())
            line, column = [], 0
        elif char == "\r":
            column = 0
        else:
            if column < len(line):
                line[column] = char
            else:
                line.append(char)
            column += 1
    if line:
        lines.append("".join(line).rstrip())
    return [text for text in lines if text]


def export_file(kc, count=ITEMS):
    """A JSON export of `count` generic items (well under the 1 MiB an import reads)."""
    path = kc.home / "many.json"
    items = [{"class": "generic", "service": f"svc{n}", "account": f"acct{n}", "password": f"pw{n}"} for n in range(count)]
    path.write_text(json.dumps(items))
    return path


def progress_draws(received, title):
    """The progress lines drawn for `title`, in order."""
    return [part for part in received.split("\r") if part.startswith(f"kc: {title}: ")
            and part.rstrip().endswith("%")]


def test_import_shows_progress_on_a_terminal_and_erases_it(kc_ready):
    kc = kc_ready
    status, stdout, received = on_terminal(kc, ["import", "json", export_file(kc)])
    assert status == 0, received
    draws = progress_draws(received, "import")
    assert draws, received
    assert all("\n" not in draw for draw in draws)
    assert any("encrypting records" in draw for draw in draws), draws
    # Erased: the terminal shows only the summary, as a pipe does.
    assert screen(received) == [f"kc: import: {ITEMS} added, 0 skipped as duplicate, 0 rejected"], received
    assert stdout.decode().splitlines()[0] == "added item 0 (line 1): svc0 (acct0)"
    assert len(stdout.decode().splitlines()) == ITEMS
    assert "\x1b" not in received   # progress is drawn with carriage returns, and a notice has no colour


def test_progress_never_reaches_a_pipe(kc):
    """Standard error on a pipe: byte for byte what kc wrote before progress existed."""
    kc.init("--vault", kc.home / "piped.kc")
    path = export_file(kc)
    imported = kc.ok(["--vault", kc.home / "piped.kc", "import", "json", path])
    assert imported.stderr == f"kc: import: {ITEMS} added, 0 skipped as duplicate, 0 rejected\n"
    assert imported.stdout.splitlines()[-1] == f"added item {ITEMS - 1} (line 1): svc{ITEMS - 1} (acct{ITEMS - 1})"
    checked = kc.ok(["--vault", kc.home / "piped.kc", "check"])
    assert checked.stderr == ""
    exported = kc.ok(["--vault", kc.home / "piped.kc", "export"])
    assert exported.stderr == "" and len(json.loads(exported.stdout)) == ITEMS
    compacted = kc.ok(["--vault", kc.home / "piped.kc", "compact"])
    assert compacted.stderr == f"kc: compacted {kc.home / 'piped.kc'}: {ITEMS} records -> {ITEMS + 1}\n"
    # The same import on a terminal writes the same standard output.
    kc.init("--vault", kc.home / "tty.kc")
    status, stdout, _ = on_terminal(kc, ["--vault", kc.home / "tty.kc", "import", "json", path])
    assert status == 0 and stdout == imported.stdout_bytes


@pytest.mark.parametrize("command, title, stages, last", [
    (["check"], "check", ["reading the vault"], "status: whole"),
    (["compact"], "compact", ["reading the vault", "encrypting records", "verifying the new file"], None),
    (["export", "-o", "out.json"], "export", ["reading the vault", "writing items"], None),
    (["export", "--format", "csv", "-o", "out.csv"], "export", ["reading the vault", "writing items"], None),
])
def test_long_work_on_a_large_vault_shows_progress_and_erases_it(kc_ready, command, title, stages, last):
    kc = kc_ready
    kc.ok(["import", "json", export_file(kc)])
    status, stdout, received = on_terminal(kc, command)
    assert status == 0, received
    draws = progress_draws(received, title)
    for stage in stages:
        assert any(stage in draw for draw in draws), (stage, draws)
    shown = screen(received)
    assert not any(line.endswith("%") for line in shown), shown   # every progress line was erased
    if last:
        assert stdout.decode().splitlines()[-1] == last and shown == []
    else:
        assert len(shown) == 1 and shown[0].startswith(f"kc: {'compacted' if title == 'compact' else 'exported'} "), shown


def test_short_commands_draw_no_progress(kc_ready):
    kc = kc_ready
    kc.add_generic("one.example", "me")
    status, stdout, received = on_terminal(kc, ["find", "-s", "one.example"])
    assert status == 0 and received == "" and b"service: one.example" in stdout


def test_an_error_on_a_terminal_is_bold_red_and_its_hint_dim(kc_ready):
    status, _, received = on_terminal(kc_ready, ["find", "-s", "nothing.example"])
    assert status == EXIT_NOT_FOUND
    assert received.startswith(RED_ERROR), received
    assert received.endswith(" (errSecItemNotFound)\r\n"), received
    status, _, received = on_terminal(kc_ready, ["frobnicate"])
    assert status == EXIT_PARAM
    lines = received.split("\r\n")
    assert lines[0].startswith(RED_ERROR + "unknown command 'frobnicate'"), received
    assert lines[1].startswith(DIM_HINT), received


def test_a_warning_on_a_terminal_is_yellow(kc):
    status, _, received = on_terminal(kc, ["init", "--kdf-ops", "1", "--kdf-memory", "8K"])
    assert status == 0
    assert received.startswith(YELLOW_WARNING + "Argon2id with 1 pass"), received


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"NO_COLOR": "yes please"}, {"TERM": "dumb"}])
def test_no_colour_with_no_color_or_a_dumb_terminal(kc_ready, env):
    status, _, received = on_terminal(kc_ready, ["find", "-s", "nothing.example"], env=env)
    assert status == EXIT_NOT_FOUND
    assert "\x1b" not in received
    assert received == "kc: error: The specified item could not be found in the keychain (errSecItemNotFound)\r\n"


def test_an_empty_no_color_does_not_disable_colour(kc_ready):
    status, _, received = on_terminal(kc_ready, ["find", "-s", "nothing.example"], env={"NO_COLOR": "", "TERM": "xterm"})
    assert status == EXIT_NOT_FOUND and received.startswith(RED_ERROR)


def test_never_colour_on_a_pipe(kc_ready):
    result = kc_ready.run(["find", "-s", "nothing.example"], env={"TERM": "xterm-256color"})
    assert result.returncode == EXIT_NOT_FOUND
    assert result.stderr == "kc: error: The specified item could not be found in the keychain (errSecItemNotFound)\n"


def test_standard_output_is_never_coloured_even_on_a_terminal(kc_ready):
    kc = kc_ready
    kc.add_generic("one.example", "me", "hunter2")
    for args in (["find", "-s", "one.example"], ["find", "-s", "one.example", "-w"], ["list"], ["help", "find"]):
        child = kc.spawn(args, env={"TERM": "xterm-256color"})
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0, child.before
        assert "\x1b" not in child.before, (args, child.before)
