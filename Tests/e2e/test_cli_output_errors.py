"""A command whose standard output cannot be written (a full disk, a closed descriptor) fails with
errSecIO instead of exiting 0 with a cut-off or missing secret that a script would take as whole."""
import subprocess

import pytest

from kcharness import EXIT_IO, ERROR_LINE


def run_to(kc, args, stdout):
    """kc with `args`, its standard output on `stdout` (a file object or subprocess.DEVNULL)."""
    completed = subprocess.run(kc.command(args), stdin=subprocess.DEVNULL, stdout=stdout,
                               stderr=subprocess.PIPE, env=kc.environment(), cwd=str(kc.home),
                               start_new_session=True, timeout=60)
    return completed.returncode, completed.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize("args", [
    ["find", "generic", "-s", "site", "-w"],
    ["find", "generic", "-s", "site"],
    ["list", "--json"],
    ["generate"],
])
def test_a_full_disk_on_standard_output_is_an_error(kc_ready, args):
    kc_ready.add_generic("site", "me", "a secret that never reaches the disk")
    before = kc_ready.vault_path.read_bytes()
    with open("/dev/full", "wb") as full:
        code, stderr = run_to(kc_ready, args, full)
    assert code == EXIT_IO, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("kc: error: ")]
    assert len(errors) == 1 and ERROR_LINE.match(errors[0]), stderr
    assert "could not write to standard output" in errors[0] and "errSecIO" in errors[0], stderr
    assert "a secret that never" not in stderr
    assert kc_ready.vault_path.read_bytes() == before


def test_output_that_reaches_its_file_is_a_success(kc_ready, tmp_path):
    """Control: the same command with a writable standard output exits 0 and writes the secret."""
    kc_ready.add_generic("site", "me", "written")
    target = tmp_path / "out"
    with open(target, "wb") as out:
        code, stderr = run_to(kc_ready, ["find", "generic", "-s", "site", "-w"], out)
    assert code == 0 and stderr == "", stderr
    assert target.read_bytes() == b"written\n"
