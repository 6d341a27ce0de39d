"""kc started with standard input, output or error closed (`>&-`, `<&-`): the files kc opens never
take those numbers, so nothing meant for standard output reaches the vault, and a closed standard
output is still an error (errSecIO) rather than a success."""
import subprocess

from kcharness import EXIT_IO, ERROR_LINE


def run_closed(kc, args, closed: str):
    """kc with `args` and the shell redirections `closed` (e.g. '>&-'); returns (status, stderr)."""
    completed = subprocess.run(["sh", "-c", f'exec "$@" {closed}', "sh", *kc.command(args)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=kc.environment(), cwd=str(kc.home), start_new_session=True, timeout=60)
    return completed.returncode, completed.stderr.decode("utf-8", "replace")


def test_a_printed_secret_never_reaches_the_vault_on_a_closed_standard_output(kc_ready):
    code, stderr = run_closed(kc_ready, ["add", "generic", "-s", "gen", "-a", "me", "--generate", "--print"], ">&-")
    errors = [line for line in stderr.splitlines() if line.startswith("kc: error: ")]
    assert code == EXIT_IO and len(errors) == 1 and ERROR_LINE.match(errors[0]), stderr
    assert "could not write to standard output" in errors[0], stderr
    secret = kc_ready.ok(["find", "generic", "-s", "gen", "-w"]).stdout_bytes.rstrip(b"\n")
    assert len(secret) == 20
    assert secret not in kc_ready.vault_path.read_bytes()
    kc_ready.ok(["check"])


def test_find_with_every_standard_descriptor_closed_is_an_io_error(kc_ready):
    kc_ready.add_generic("site", "me", "never printed")
    before = kc_ready.vault_path.read_bytes()
    code, stderr = run_closed(kc_ready, ["find", "generic", "-s", "site", "-w"], "<&- >&- 2>&-")
    assert (code, stderr) == (EXIT_IO, "")
    assert kc_ready.vault_path.read_bytes() == before
    kc_ready.ok(["check"])
