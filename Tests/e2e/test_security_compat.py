"""macOS `security` compatibility: `kc security SUBCOMMAND` and kc run through a link named
`security`, with macOS's option letters, output, messages and exit statuses."""
import array
import fcntl
import re
import secrets
import subprocess
import termios
import time

import pexpect
import pytest

from kcharness import (EXIT_DUPLICATE, EXIT_IO, EXIT_NOT_FOUND, EXIT_PARAM, EXIT_SECURITY_FAILURE, MASTER_PASSWORD,
                       retrying_text_busy)
import procmemory

NOT_FOUND = "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.\n"
DUPLICATE = ("security: SecKeychainItemCreateFromContent (<default>): "
             "The specified item already exists in the keychain.\n")
ARGV_WARNING = ("kc: warning: a password on the command line is visible to other users (ps); "
                "use -w without a value to be asked, or kc add --password-stdin\n")
TIMEDATE = r'0x(3\d){14}5A00  "\d{14}Z\\000"'


def security(kc, *args, **kwargs):
    return kc.run(["security", *args], **kwargs)


@pytest.fixture
def link(kc_ready, tmp_path):
    """A folder holding `security`, a symbolic link to kc, put first on PATH (as the installed
    PREFIX/lib/kc/security-compat is meant to be)."""
    folder = tmp_path / "security-compat"
    folder.mkdir()
    (folder / "security").symlink_to(kc_ready.binary)
    return folder


def run_link(kc, folder, *args, input=None):
    env = kc.environment({"PATH": f"{folder}:{kc.env['PATH']}"})
    return retrying_text_busy(lambda: subprocess.run(["security", *args], input=input, capture_output=True,
                                                     env=env, stdin=None if input else subprocess.DEVNULL))


def test_add_then_find_password_only(kc_ready):
    result = security(kc_ready, "add-generic-password", "-a", "me", "-s", "svc", "-w", "hunter2")
    assert result.returncode == 0, result
    assert result.stderr == ARGV_WARNING
    found = security(kc_ready, "find-generic-password", "-s", "svc", "-a", "me", "-w")
    assert (found.returncode, found.stdout_bytes, found.stderr) == (0, b"hunter2\n", "")
    # kc's own find sees the same item; the label defaults to the service, as on macOS.
    listed = kc_ready.ok(["find", "generic", "-s", "svc"]).stdout
    assert "label: svc" in listed and "account: me" in listed


def test_g_prints_attributes_and_password_on_stderr(kc_ready):
    security(kc_ready, "add-generic-password", "-a", "me", "-s", "svc", "-l", "My label", "-D", "kind",
             "-j", "a comment", "-G", "gen", "-w", "pw with \"quote\"")
    result = security(kc_ready, "find-generic-password", "-l", "My label", "-g")
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert lines[:4] == [f'keychain: "{kc_ready.vault_path}"', "version: 512", 'class: "genp"', "attributes:"]
    expected = [
        '    0x00000007 <blob>="My label"',
        '    0x00000008 <blob>=<NULL>',
        '    "acct"<blob>="me"',
        '    "cdat"<timedate>=' + TIMEDATE,
        '    "crtr"<uint32>=<NULL>',
        '    "cusi"<sint32>=<NULL>',
        '    "desc"<blob>="kind"',
        '    "gena"<blob>="gen"',
        '    "icmt"<blob>="a comment"',
        '    "invi"<sint32>=<NULL>',
        '    "mdat"<timedate>=' + TIMEDATE,
        '    "nega"<sint32>=<NULL>',
        '    "prot"<blob>=<NULL>',
        '    "scrp"<sint32>=<NULL>',
        '    "svce"<blob>="svc"',
        '    "type"<uint32>=<NULL>',
    ]
    assert len(lines) == 4 + len(expected), result
    for line, pattern in zip(lines[4:], expected):
        assert re.fullmatch(re.escape(pattern).replace(re.escape(TIMEDATE), TIMEDATE), line), (line, pattern)
    assert result.stderr == 'password: "pw with \"quote\""\n'


def test_internet_item_codes_and_attributes(kc_ready):
    result = security(kc_ready, "add-internet-password", "-a", "deploy", "-s", "ftp.example.com", "-r", "ftp ",
                      "-P", "2121", "-p", "/pub", "-d", "realm", "-t", "dflt", "-w", "s3cret")
    assert result.returncode == 0, result
    # macOS's 'ftp ' is kc's ftp; the item is an ordinary kc item. The port prints as macOS's
    # print_buffer prints any four bytes: 2121 is 00 00 08 49, and 0x49 is a printable 'I'.
    assert kc_ready.ok(["find", "internet", "-s", "ftp.example.com", "-r", "ftp", "-P", "2121", "-w"]).stdout == "s3cret\n"
    found = security(kc_ready, "find-internet-password", "-s", "ftp.example.com", "-r", "ftp ", "-P", "2121")
    assert found.returncode == 0, found
    lines = found.stdout.splitlines()
    assert lines[2] == 'class: "inet"'
    for line in ['    0x00000007 <blob>="ftp.example.com"', '    "acct"<blob>="deploy"', '    "atyp"<blob>="dflt"',
                 '    "path"<blob>="/pub"', '    "port"<uint32>=0x00000849  "\\000\\000\\010I"', '    "ptcl"<uint32>="ftp "',
                 '    "sdmn"<blob>="realm"', '    "srvr"<blob>="ftp.example.com"']:
        assert line in lines, (line, lines)
    tags = [re.match(r'    (0x\w+ |"\w{4}")<', line).group(1) for line in lines[4:]]
    assert tags == ["0x00000007 ", "0x00000008 ", '"acct"', '"atyp"', '"cdat"', '"crtr"', '"cusi"', '"desc"',
                    '"icmt"', '"invi"', '"mdat"', '"nega"', '"path"', '"port"', '"prot"', '"ptcl"', '"scrp"',
                    '"sdmn"', '"srvr"', '"type"']
    https = security(kc_ready, "add-internet-password", "-a", "me", "-s", "web.example.com", "-r", "htps", "-w", "x")
    assert https.returncode == 0, https
    assert kc_ready.ok(["find", "internet", "-s", "web.example.com", "-r", "https", "-w"]).stdout == "x\n"
    assert security(kc_ready, "find-internet-password", "-s", "web.example.com", "-r", "http").returncode == EXIT_NOT_FOUND


def test_not_found_and_duplicate_exit_statuses(kc_ready):
    missing = security(kc_ready, "find-generic-password", "-s", "nothing", "-w")
    assert (missing.returncode, missing.stdout, missing.stderr) == (EXIT_NOT_FOUND, "", NOT_FOUND)
    security(kc_ready, "add-generic-password", "-a", "me", "-s", "svc", "-w", "one")
    duplicate = security(kc_ready, "add-generic-password", "-a", "me", "-s", "svc", "-w", "two")
    assert duplicate.returncode == EXIT_DUPLICATE
    assert duplicate.stderr == ARGV_WARNING + DUPLICATE
    updated = security(kc_ready, "add-generic-password", "-U", "-a", "me", "-s", "svc", "-w", "two")
    assert updated.returncode == 0, updated
    assert security(kc_ready, "find-generic-password", "-s", "svc", "-w").stdout == "two\n"
    gone = security(kc_ready, "delete-generic-password", "-s", "nothing")
    assert (gone.returncode, gone.stderr) == (EXIT_NOT_FOUND, NOT_FOUND)


def test_delete_prints_the_item_then_deletes_it(kc_ready):
    security(kc_ready, "add-internet-password", "-a", "me", "-s", "host.example", "-r", "htps", "-w", "pw")
    result = security(kc_ready, "delete-internet-password", "-s", "host.example", "-a", "me")
    assert result.returncode == 0, result
    assert result.stdout.splitlines()[2] == 'class: "inet"'
    assert result.stderr == "password has been deleted.\n"
    assert security(kc_ready, "find-internet-password", "-s", "host.example").returncode == EXIT_NOT_FOUND
    security(kc_ready, "add-generic-password", "-a", "me", "-s", "svc", "-w", "pw")
    assert security(kc_ready, "delete-generic-password", "-a", "me", "-s", "svc").returncode == 0
    assert kc_ready.run(["find", "generic", "-s", "svc"]).returncode == EXIT_NOT_FOUND


def test_usage_errors_exit_2_with_the_usage(kc_ready):
    unknown = security(kc_ready, "find-generic-password", "-x")
    assert unknown.returncode == EXIT_PARAM
    assert unknown.stderr.startswith("security: illegal option -- x\nUsage: find-generic-password [-h] [-a account]")
    assert unknown.stderr.endswith("\n        Find a generic password item.\n")
    missing_value = security(kc_ready, "find-generic-password", "-s")
    assert missing_value.returncode == EXIT_PARAM
    assert missing_value.stderr.startswith("security: option requires an argument -- s\nUsage: ")
    # add needs -a and -s (macOS: quiet, the usage only).
    no_account = security(kc_ready, "add-generic-password", "-s", "svc", "-w", "x")
    assert no_account.returncode == EXIT_PARAM
    assert "Usage: add-generic-password" in no_account.stderr
    assert security(kc_ready, "delete-generic-password").returncode == EXIT_PARAM
    assert security(kc_ready, "delete-internet-password", "-c", "abcd").returncode == EXIT_PARAM
    assert security(kc_ready, "find-generic-password", "-h").returncode == EXIT_PARAM
    bogus = security(kc_ready, "bogus-command")
    assert bogus.returncode == EXIT_SECURITY_FAILURE
    assert bogus.stderr.startswith('security: unknown command "bogus-command"\n')
    code = security(kc_ready, "find-internet-password", "-r", "ftp")
    assert code.returncode == EXIT_SECURITY_FAILURE
    assert code.stderr == ('Error: four-character types must be exactly 4 characters long.\n'
                           '(Try "ftp " instead of "ftp")\n')


def test_help_names_the_subcommands(kc_ready):
    for words in (["security", "--help"], ["help", "security"]):
        text = kc_ready.ok(words).stdout
        assert "Usage: kc security SUBCOMMAND [ARGUMENTS...]" in text
        assert "find-generic-password" in text and "Not supported: certificates" in text


def test_option_clusters_inline_values_and_getopt_order(kc_ready):
    assert security(kc_ready, "add-generic-password", "-Ua", "me", "-ssvc", "-wpw1").returncode == 0
    assert security(kc_ready, "find-generic-password", "-ssvc", "-ame", "-gw").stdout == "pw1\n"
    # As getopt: options end at the first other word; the rest are keychains ('-s' is no name).
    result = security(kc_ready, "find-generic-password", "login.keychain", "-s", "svc")
    assert result.returncode == EXIT_PARAM
    assert "'-s' is not a keychain name" in result.stderr


def test_keychain_argument_names_kc_keychains(kc_ready):
    kc_ready.ok(["keychain", "create", "work", "--kdf-ops", "1", "--kdf-memory", "8K"])
    assert security(kc_ready, "add-generic-password", "-a", "me", "-s", "svc", "-w", "work pw", "work.keychain").returncode == 0
    assert security(kc_ready, "add-generic-password", "-a", "me", "-s", "svc", "-w", "login pw").returncode == 0
    assert security(kc_ready, "find-generic-password", "-s", "svc", "-w", "work").stdout == "work pw\n"
    assert security(kc_ready, "find-generic-password", "-s", "svc", "-w", "login.keychain-db").stdout == "login pw\n"
    path = f"{kc_ready.home}/Library/Keychains/login.keychain-db"
    assert security(kc_ready, "find-generic-password", "-s", "svc", "-w", path).stdout == "login pw\n"
    shown = security(kc_ready, "find-generic-password", "-s", "svc", "work.keychain-db")
    assert shown.stdout.startswith(f'keychain: "{kc_ready.home}/data/kc/work.kc"\n')
    duplicate = security(kc_ready, "add-generic-password", "-a", "me", "-s", "svc", "-w", "x", "work.keychain")
    assert duplicate.returncode == EXIT_DUPLICATE
    assert "SecKeychainItemCreateFromContent (work.keychain): " in duplicate.stderr


def test_binary_password_prints_as_hex(kc_ready):
    kc_ready.ok(["add", "generic", "-s", "bin", "-a", "me", "--password-stdin", "--binary"], input=b"caf\xc3\xa9\x01")
    result = security(kc_ready, "find-generic-password", "-s", "bin", "-w")
    assert result.stdout == "636166c3a901\n"
    shown = security(kc_ready, "find-generic-password", "-s", "bin", "-g")
    assert shown.stderr == 'password: 0x636166C3A901  "caf\\303\\251\\001"\n'


def test_access_lists_are_ignored_with_a_note(kc_ready):
    result = security(kc_ready, "add-generic-password", "-a", "me", "-s", "svc", "-T", "/usr/bin/true", "-A", "-w", "x")
    assert result.returncode == 0, result
    assert "kc: -A and -T are ignored: kc has no per-application access lists\n" in result.stderr


def test_link_named_security_behaves_the_same(kc_ready, link):
    added = run_link(kc_ready, link, "add-generic-password", "-a", "me", "-s", "svc", "-w", "linked")
    assert added.returncode == 0, added
    found = run_link(kc_ready, link, "find-generic-password", "-s", "svc", "-w")
    assert (found.returncode, found.stdout) == (0, b"linked\n")
    missing = run_link(kc_ready, link, "find-generic-password", "-s", "nothing")
    assert (missing.returncode, missing.stderr.decode()) == (EXIT_NOT_FOUND, NOT_FOUND)


MACOS_SCRIPT = r"""
set -eu
security add-generic-password -a "$USER" -s legacy-api -w "tok en-123" 2>/dev/null
TOKEN=$(security find-generic-password -s legacy-api -a "$USER" -w)
printf 'token=[%s]\n' "$TOKEN"
security find-generic-password -s legacy-api -w | tr a-z A-Z
security find-generic-password -s missing-api -w >/dev/null 2>&1 || echo "missing: $?"
security find-generic-password -s missing-api 2>&1 | grep -q "could not be found in the keychain" && echo grep-ok
security delete-generic-password -s legacy-api -a "$USER" >/dev/null 2>&1
security find-generic-password -s legacy-api >/dev/null 2>&1 || echo "deleted: $?"
"""


def test_macos_script_runs_unchanged(kc_ready, link):
    env = kc_ready.environment({"PATH": f"{link}:{kc_ready.env['PATH']}", "USER": "alice"})
    result = subprocess.run(["sh", "-c", MACOS_SCRIPT], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result
    assert result.stdout == f"token=[tok en-123]\nTOK EN-123\nmissing: {EXIT_NOT_FOUND}\ngrep-ok\ndeleted: {EXIT_NOT_FOUND}\n"


def test_bare_w_prompts_twice_without_echo(kc_ready):
    child = kc_ready.spawn(["security", "add-generic-password", "-a", "me", "-s", "asked", "-w"])
    child.expect_exact("password data for new item: ")
    child.sendline("typed secret")
    child.expect_exact("retype password for new item: ")
    child.sendline("typed secret")
    child.expect(pexpect.EOF)
    seen = child.before
    child.close()
    assert child.exitstatus == 0, seen
    assert "typed secret" not in seen
    assert security(kc_ready, "find-generic-password", "-s", "asked", "-w").stdout == "typed secret\n"


@pytest.mark.parametrize("prefix, written, shown", [
    ([], ["-w", "argv-secret-4711"], b"\0-w\0" + b"x" * 16 + b"\0"),
    (["--keychain", "login"], ["-pargv-secret-4711"], b"\0-p" + b"x" * 16 + b"\0"),
])
def test_argv_password_is_overwritten_in_the_process(kc_ready, prefix, written, shown):
    """While kc waits at the master password prompt, /proc/PID/cmdline no longer holds the -w value."""
    secret = "argv-secret-4711"
    child = kc_ready.spawn([*prefix, "security", "add-generic-password", "-a", "me", "-s", "argv", *written],
                           unset=("KC_MASTER_PASSWORD_FILE",))
    child.expect_exact("Master password for ")
    with open(f"/proc/{child.pid}/cmdline", "rb") as f:
        cmdline = f.read()
    assert secret.encode() not in cmdline
    assert shown in cmdline, cmdline
    child.sendline(MASTER_PASSWORD)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert security(kc_ready, "find-generic-password", "-s", "argv", "-w").stdout == secret + "\n"


@pytest.mark.parametrize("option, stream", [("-w", "stdout"), ("-g", "stderr")])
def test_a_binary_password_is_formatted_in_locked_memory_only(kc_ready, option, stream):
    """-w's hex and -g's print_buffer form of a password are the password too: while kc is blocked
    writing them (a full pipe), their bytes are only in locked (secure) memory, never in kc's
    ordinary heap, where a Swift string or output buffer would leave them."""
    secret = bytes(range(256)) * 8 + secrets.token_bytes(96 * 1024)   # far more than a pipe holds
    kc_ready.add_generic("big", "me", secret, "--binary")
    formatted = secret.hex() if option == "-w" else "0x" + secret.hex().upper()
    needle = formatted[-128:].encode()   # the end: still in kc when the pipe is full
    process = kc_ready.popen(["security", "find-generic-password", "-s", "big", option], stdin=subprocess.DEVNULL)
    waiting = time.monotonic() + 60
    while not blocked_writing(process.pid, getattr(process, stream)):
        assert process.poll() is None and time.monotonic() < waiting, "kc did not fill the pipe"
        time.sleep(0.02)
    try:
        hits = procmemory.find(process.pid, needle)
    finally:
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert (out if option == "-w" else err).decode().startswith(("" if option == "-w" else "password: ") + formatted)
    assert hits, "control: the formatted password must be somewhere in kc while it writes it"
    assert all(hit.locked for hit in hits), hits


def blocked_writing(pid: int, pipe) -> bool:
    """True while process `pid` waits for room in the full pipe whose reading end is `pipe`."""
    with open(f"/proc/{pid}/wchan") as f:
        waiting = "pipe_write" in f.read()
    count = array.array("i", [0])
    fcntl.ioctl(pipe.fileno(), termios.FIONREAD, count)
    return waiting and count[0] > 0


def test_delete_keeps_the_item_when_it_cannot_print_it(kc_ready):
    """delete prints the item before deleting it: when standard output cannot take it (a full disk),
    it fails with errSecIO and the item stays."""
    security(kc_ready, "add-generic-password", "-a", "me", "-s", "kept", "-w", "pw")
    before = kc_ready.vault_path.read_bytes()
    with open("/dev/full", "wb") as full:
        completed = subprocess.run(kc_ready.command(["security", "delete-generic-password", "-s", "kept"]),
                                   stdin=subprocess.DEVNULL, stdout=full, stderr=subprocess.PIPE,
                                   env=kc_ready.environment(), cwd=str(kc_ready.home), timeout=60)
    stderr = completed.stderr.decode()
    assert completed.returncode == EXIT_IO, stderr
    assert "could not write to standard output" in stderr and "password has been deleted." not in stderr
    assert kc_ready.vault_path.read_bytes() == before
    assert security(kc_ready, "find-generic-password", "-s", "kept", "-w").stdout == "pw\n"
