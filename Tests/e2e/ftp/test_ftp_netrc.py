"""`kc netrc` and `kc import netrc`, with real curl against the test server, and a sampler
that scans every process's argv and environment for the password while kc and curl run."""
import json
import os
import subprocess
import sys
import time

from kcharness import EXIT_IO, EXIT_NOT_FOUND, EXIT_PARAM, MASTER_PASSWORD
from procsampler import Sampler

from ftpsupport import OTHER_PASSWORD, OTHER_USER, PASSWORD, REPORT, USER, finish

HOST = "127.0.0.1"
NETRC_LINE = 'machine 127.0.0.1 login deploy password "Ftp s3cret\\"\\\\Q7"\n'


def curl_with_netrc(kc, server, output, netrc_args="-s 127.0.0.1"):
    """curl --netrc-file <(kc netrc ...) through bash, for the process substitution."""
    script = f'curl -sS --max-time 20 --netrc-file <("$KC_BIN" netrc {netrc_args}) -o "$OUT" "$URL"'
    env = dict(kc.env, KC_BIN=kc.binary, OUT=str(output), URL=f"{server.url()}/report.csv")
    return subprocess.run(["bash", "-c", script], env=env, capture_output=True, timeout=60,
                          stdin=subprocess.DEVNULL, start_new_session=True)


def test_netrc_quotes_and_curl_fetches_a_file(kc, ftp_server, tmp_path):
    kc.save_internet(HOST, USER, PASSWORD, port=ftp_server.port)
    result = kc.run(["netrc", "-s", HOST])
    assert result.returncode == 0, result.stderr
    assert result.stdout == NETRC_LINE
    assert "macdef" not in result.stdout
    output = tmp_path / "report.csv"
    fetched = curl_with_netrc(kc, ftp_server, output)
    assert fetched.returncode == 0, fetched.stderr
    assert output.read_bytes() == REPORT


def test_netrc_refuses_a_terminal_unless_forced(kc):
    kc.save_internet(HOST, USER, PASSWORD)
    child = kc.spawn(["netrc"])
    rest, status = finish(child)
    assert status == EXIT_PARAM
    assert "terminal" in rest and "s3cret" not in rest
    child = kc.spawn(["netrc", "--force"])
    rest, status = finish(child)
    assert status == 0
    assert "login deploy password" in rest


def test_netrc_picks_the_most_recent_item_per_server_and_says_so(kc):
    kc.save_internet(HOST, USER, PASSWORD)
    kc.save_internet("127.0.0.1", OTHER_USER, OTHER_PASSWORD)
    kc.save_internet("files.example.com", "bob", "b0b", protocol="https")
    result = kc.run(["netrc"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"machine 127.0.0.1 login {OTHER_USER} password {OTHER_PASSWORD}",
        "machine files.example.com login bob password b0b",
    ]
    assert "2 items match 127.0.0.1" in result.stderr and "most recently modified" in result.stderr
    by_account = kc.run(["netrc", "-a", USER])
    assert by_account.stdout == NETRC_LINE and by_account.stderr == ""
    narrowed = kc.run(["netrc", "-r", "https"])
    assert narrowed.stdout == "machine files.example.com login bob password b0b\n"
    assert kc.run(["netrc", "-s", "nothing.example.com"]).returncode == EXIT_NOT_FOUND


def test_import_netrc(kc, tmp_path):
    netrc = tmp_path / "netrc"
    netrc.write_text(
        'machine ftp.example.com login deploy password "p w"\n'
        "machine files.example.com login bob password b0b\n"
        "default login anonymous password guest\n"
        "machine nopass.example.com login x\n"
        "macdef init\ncd /pub\nmachine hidden.example.com login m password inside-macro\n\n"
        "machine ftp.example.com login deploy password again\n")
    result = kc.run(["import", "netrc", str(netrc)])
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "added ftp.example.com (deploy)" in out and "added files.example.com (bob)" in out
    assert "skipped ftp.example.com (deploy): already in the keychain" in out
    assert "could not read line 3: default entry" in out
    assert "could not read line 4: machine nopass.example.com: no password" in out
    assert "2 added, 1 skipped as duplicate, 2 unreadable" in result.stderr
    items = json.loads(kc.run(["list", "--json"]).stdout)
    assert sorted((i["server"], i["protocol"], i["account"]) for i in items) == [
        ("files.example.com", "ftp", "bob"), ("ftp.example.com", "ftp", "deploy")]
    assert kc.secret("ftp.example.com", "deploy").stdout == "p w\n", "the first entry wins; quotes read"
    again = kc.run(["import", "netrc", "-r", "https", str(netrc)])
    assert "2 added" in again.stderr, "another protocol is another primary key"
    assert kc.run(["import", "netrc", str(tmp_path / "missing")]).returncode == EXIT_IO
    bad = kc.run(["import", "netrc", "-r", "FTP S", str(netrc)])
    assert bad.returncode == EXIT_PARAM and "--protocol needs a lower-case word" in bad.stderr


def files_containing(secret, roots, newer_than):
    """Regular files under `roots` (recursively), modified after `newer_than`, that contain `secret`."""
    found = []
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                path = os.path.join(folder, name)
                try:
                    if os.lstat(path).st_mtime >= newer_than and os.path.isfile(path):
                        with open(path, "rb") as f:
                            if secret in f.read():
                                found.append(path)
                except OSError:
                    continue
    return found


def wait_until(condition, timeout=20):
    deadline = time.time() + timeout
    while not condition() and time.time() < deadline:
        time.sleep(0.05)


def test_password_never_in_any_argv_or_environment(kc, ftp_server, tmp_path):
    started = time.time() - 1
    sampler = Sampler(None, [PASSWORD.encode(), MASTER_PASSWORD.encode()])   # every process
    kc_commands = lambda: {c for c in sampler.commands if c.startswith(kc.binary)}   # noqa: E731
    try:
        # Positive control: the sampler does find a secret placed in an argv and in an environment.
        control = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", PASSWORD],
                                   env=dict(os.environ, CONTROL=MASTER_PASSWORD))
        try:
            wait_until(lambda: {place for place, _ in sampler.hits} >= {"cmdline", "environ"})
        finally:
            control.kill()
            control.wait()
        assert {place for place, _ in sampler.hits} >= {"cmdline", "environ"}, "the sampler cannot see secrets"
        after_control = sampler.samples
        wait_until(lambda: sampler.samples >= after_control + 2)   # no pass still reading the control
        sampler.hits.clear()

        # Typed at the prompt, logged in, saved; kc holds the password while it waits at the last prompt.
        child = kc.spawn(["ftp", "login", ftp_server.url(user=USER)])
        child.expect_exact("Password for deploy@127.0.0.1: ")
        child.sendline(PASSWORD)
        child.expect_exact("Save this password in the keychain? [y/N] ")
        # Wait here, kc holding the password, until the sampler has looked at kc at least once more.
        seen = sampler.samples
        wait_until(lambda: sampler.samples >= seen + 2 and any(" ftp login " in c for c in kc_commands()))
        child.sendline("y")
        assert finish(child)[1] == 0
        # Found in the keychain, over explicit TLS too, from standard input, and handed to curl.
        assert kc.run(["ftp", "login", ftp_server.url()]).returncode == 0
        result = kc.run(["ftp", "login", "--password-stdin", "--save", "yes", "--cafile", ftp_server.cafile,
                        ftp_server.url("ftps", user=USER)], input=PASSWORD.encode())
        assert result.returncode == 0, result.stderr
        output = tmp_path / "report.csv"
        # ftp and ftps items for one host: only one protocol may go into netrc.
        assert curl_with_netrc(kc, ftp_server, output, netrc_args="-s 127.0.0.1 -r ftp").returncode == 0
        assert output.read_bytes() == REPORT
    finally:
        sampler.stop()
    assert sampler.hits == [], f"password visible in: {sampler.hits}"
    assert any(" ftp login " in c for c in kc_commands()), kc_commands()
    assert sampler.samples > 10
    # Nor in a file: not in kc's home (the vault is encrypted) or its TMPDIR, nor directly in /tmp.
    secret = PASSWORD.encode()
    control = tmp_path / "control"
    control.write_bytes(b"x" + secret)
    assert files_containing(secret, [str(tmp_path)], started) == [str(control)], "the file scan cannot see secrets"
    leaked = files_containing(secret, [str(kc.home)], started)
    leaked += [path for path in (os.path.join("/tmp", name) for name in os.listdir("/tmp"))
               if os.path.isfile(path) and files_containing_one(path, secret, started)]
    assert leaked == [], leaked


def files_containing_one(path, secret, newer_than):
    try:
        if os.lstat(path).st_mtime < newer_than:
            return False
        with open(path, "rb") as f:
            return secret in f.read()
    except OSError:
        return False
