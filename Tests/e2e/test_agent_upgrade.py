"""kc unlock starts the agent from /proc/self/exe itself, not from the path it reads there: when an
upgrade renames a new kc over the file while kc unlock waits at its prompt, the path no longer
holds the running kc ("PATH (deleted)"), and starting it would fail (or start another build)."""
import os
import shutil

import pexpect

from agentsupport import NO_SOURCE, akc, status  # noqa: F401
from kcharness import KC


def test_unlock_starts_its_own_executable_after_an_upgrade_replaced_the_file(akc, tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    installed = folder / "kc"
    shutil.copy2(akc.binary, installed)
    kc = KC(str(installed), akc.home)
    kc.env = dict(akc.env)
    kc.env["KC_TEST_BUILD_ID"] = "review"   # the new file is the same build: only the start is tested
    child = kc.spawn(["unlock"], unset=NO_SOURCE, timeout=60)
    child.expect_exact("Master password for ")
    shutil.copy2(akc.binary, folder / "kc.new")
    os.rename(folder / "kc.new", installed)   # the upgrade (install, dpkg and rpm rename over the file)
    child.sendline(akc.master_password)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert status(kc)[0] == 0
